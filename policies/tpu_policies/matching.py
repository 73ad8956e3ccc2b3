"""Rule 3: every TPU workload fits the pools and slices it will run on.

A pod whose selectors name a slice no pool provides stays Pending forever; a pod that asks for 8
chips on 4-chip hosts never schedules (marin#2781); a JobSet with fewer pods than the slice has
hosts hangs at TPU initialisation; a tensor-parallel size or MaxText mesh that does not match the
chips crashes after minutes of model loading; a RayService whose Serve config shards over fewer devices
than its worker group's slice, or asks Ray for a slice no group forms, fails the same way (ray_serve.py).
All of it is visible in the plan.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from tpu_policies.engine_args import engine_of_template
from tpu_policies.ray_serve import serve_problems
from tpu_policies.slices import PoolSlice
from tpu_policies.stack import read_stack
from tpu_policies.values import UNKNOWN, as_str
from tpu_policies.workloads import PodTemplate, workload_annotations
from tpu_stacks.catalog.tpu import ACCELERATOR_LABEL, GENERATIONS, TOPOLOGY_LABEL, generation_of_accelerator
from tpu_stacks.errors import UserError
from tpu_stacks.objects import annotations as keys
from tpu_stacks.serving.parallel_flags import check_parallelism, tensor_parallel_pattern

ICI_FLAG = re.compile(r"(?<![\w-])ici_([a-z_]+?)_parallelism[=:\s]+(-?\d+)")


def _hosts(template: PodTemplate, accelerator: str, topology: str, options: list[tuple[int, int, str]]) -> list[str]:
    """Chips per pod must be a node's chips; pods per slice must be the slice's hosts."""
    chips = template.chips
    matching = [option for option in options if option[0] == chips]
    if not matching:
        sources: dict[int, list[str]] = {}
        for cpv, _, where in options:
            sources.setdefault(cpv, []).append(where)
        have = " or ".join(f"{cpv} chips ({', '.join(names)})" for cpv, names in sorted(sources.items()))
        cpv, hosts, _ = options[0]
        return [
            f"{template.where} requests {chips} google.com/tpu per pod but {accelerator} {topology} nodes have {have}; "
            f"a TPU pod takes all chips of its node: request {cpv} per pod and run {hosts} pod(s) per slice"
        ]
    pods = template.pods_per_slice
    hosts_options = sorted({hosts for _, hosts, _ in matching})
    if pods is None or pods in hosts_options:
        return []
    hosts = hosts_options[0]
    if template.group_field:
        fix = f"set {template.group_field} to {hosts}"
    else:
        fix = f"use a JobSet or LeaderWorkerSet with {hosts} pods per slice, or a single-host shape"
    return [
        f"{template.where} runs {pods} pod(s) per slice but {accelerator} {topology} with {chips} chips per node "
        f"is {hosts} hosts; {fix}"
    ]


def _tensor_parallel(template: PodTemplate, notes: dict[str, Any], granted: int, per_pod: str) -> list[str]:
    """vLLM/JetStream shard over every device the workload gets: the rule of tpu_stacks.serving.parallel_flags, which
    VllmStack's plan applies to its extraArgs too. The flag is read as the engine's catalogue record spells it
    (SGLang-JAX `--tp-size`), vLLM's spellings for an engine that declares none."""
    engine = engine_of_template(template)
    flag = engine.flag("tensor_parallel") if engine is not None else None
    spellings = (flag.name, *flag.aliases) if flag is not None else ()
    rule = check_parallelism(template.arg_text(), granted, tensor_parallel_pattern(spellings))
    if rule.pipeline_flag is not None and not rule.pipeline_fits:
        flag = rule.pipeline_flag
        return [
            f"container arg {flag.written} asks for {rule.pipeline} pipeline stages but the workload gets "
            f"{granted} devices ({per_pod}); {rule.fix}"
        ]
    sources = [(f"annotation {keys.TENSOR_PARALLEL}", as_str(notes.get(keys.TENSOR_PARALLEL)))]
    sources += [(f"container arg {flag.name}", str(flag.value)) for flag in rule.wrong]
    return [
        f"tensor-parallel size {value} ({source}) but the workload gets {granted} devices ({per_pod}); {rule.fix}"
        for source, value in sources
        if value is not None and value.strip().isdigit() and int(value) != rule.expected
    ]


def _mesh(pairs: list[tuple[str, int]], devices: int) -> bool:
    """Whether MaxText ici_* axes multiply to the devices (one axis may be -1: the rest)."""
    fixed = math.prod(v for _, v in pairs if v != -1)
    auto = sum(1 for _, v in pairs if v == -1)
    if auto > 1 or fixed <= 0:
        return False
    return devices % fixed == 0 if auto else fixed == devices


def _ici(template: PodTemplate, notes: dict[str, Any], devices: int, granted: int, per_device: int) -> list[str]:
    problems = []
    declared = []
    annotation = as_str(notes.get(keys.PARALLELISM))
    if annotation:
        pairs = []
        for part in annotation.split(","):
            axis, _, value = part.strip().partition("=")
            axis = axis.removeprefix("ici_").removesuffix("_parallelism")
            if value.strip().lstrip("-").isdigit() and not axis.startswith("dcn"):
                pairs.append((axis, int(value)))
        declared.append((f"annotation {keys.PARALLELISM}", pairs))
    args = [(m.group(1), int(m.group(2))) for m in ICI_FLAG.finditer(template.arg_text())]
    if args:
        declared.append(("container args ici_*_parallelism", args))
    for source, pairs in declared:
        if pairs and not _mesh(pairs, devices):
            shown = " x ".join(f"{axis}={value}" for axis, value in pairs)
            problems.append(
                f"MaxText ici parallelism {shown} ({source}) must multiply to the slice's {devices} JAX devices "
                f"({granted} chips x {per_device}); change the axes so their product is {devices} "
                "(one axis may be -1)"
            )
    return problems


def check_template(template: PodTemplate, notes: dict[str, Any], pools: list[PoolSlice], need_pool: bool) -> list[str]:
    """Every mismatch between one TPU pod template and the slices it can land on."""
    accelerator, topology = template.accelerator, template.topology
    if accelerator is UNKNOWN or topology is UNKNOWN or not template.chips_known:
        return []
    if not accelerator or not topology:
        wanted = ((ACCELERATOR_LABEL, accelerator), (TOPOLOGY_LABEL, topology))
        missing = " and ".join(label for label, value in wanted if not value)
        return [
            f"{template.where} requests {template.chips} google.com/tpu but selects no {missing}; add them to "
            "nodeSelector (for example tpu-v6e-slice and 2x4) so the pod lands on the slice it was sized for"
        ]
    gen = generation_of_accelerator(accelerator)
    if gen is None:
        valid = ", ".join(g.accelerator_label for g in GENERATIONS)
        return [f"{template.where} selects {ACCELERATOR_LABEL}={accelerator}, which no GKE TPU has; use one of {valid}"]
    try:
        shape = gen.topology(topology, TOPOLOGY_LABEL)
    except UserError as error:
        return [f"{template.where}: {error}"]
    candidates = [pool for pool in pools if pool.provides(accelerator, topology)]
    if need_pool and not candidates:
        have = ", ".join(pool.describe() for pool in pools) or "none"
        return [
            f"{template.where} selects {accelerator} {topology} but no TPU node pool of this stack provides it "
            f"(TPU pools: {have}); add a {gen.name} {topology} node pool or change the node selectors"
        ]
    if candidates:
        options = [(p.chips_per_vm, shape.chips // p.chips_per_vm, f"pool {p.name}") for p in candidates]
    else:
        options = [(m.chips_per_vm, shape.chips // m.chips_per_vm, m.name) for m in gen.machine_types_for(shape)]
    problems = _hosts(template, accelerator, topology, options)
    if problems or template.pods_per_slice is None:
        return problems
    granted = template.chips * template.pods_per_slice
    per_pod = f"{template.pods_per_slice} pod(s) x {template.chips} chips"
    problems += _tensor_parallel(template, notes, granted * gen.jax_devices_per_chip, per_pod)
    problems += _ici(template, notes, granted * gen.jax_devices_per_chip, granted, gen.jax_devices_per_chip)
    return problems


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = read_stack(args)
    need_pool = stack.has_standard and not stack.has_autopilot
    for item, templates in stack.tpu_workloads():
        notes = workload_annotations(item.props)
        for template in templates:
            problems = check_template(template, notes, stack.tpu_pools, need_pool)
            problems += serve_problems(item.type, item.props, template)  # a RayService's Serve config
            for problem in problems:
                report_violation(f"{item.label}: {problem}", item.urn)


POLICY = StackValidationPolicy(
    name="tpu-workload-matches-pool",
    description="TPU pods select a slice some node pool provides, request all chips of a node, run one pod per host "
    "of the slice, and their tensor-parallel size / MaxText ici_* mesh (a RayService: its Serve config's "
    "tensor x pipeline parallel and slice) matches the chips they get.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
