"""Rule 18: a serving workload with a traffic target can carry it.

A workload annotated with a target (`tpu-stacks.dev/slo-*`, the contract in tpu_stacks.objects.annotations; a
stack's `slo:` writes it) is judged again here, from its own facts and not from the numbers its
annotations predict: the slice from its nodeSelector and chips (fit.granted_shape), the model and its
settings from the annotation contract or, without it, from the engine's arguments (engine_args), and the
traffic model the CLI and the plan use (`tpu_stacks.traffic.evaluate_slice`). It is refused when

- the slice cannot keep the target's latency limits (NTPOT, TTFT) at any load, or
- its most replicas (HPA maxReplicas, else spec.replicas; a RayService's Serve max_replicas: replicas.py)
  times what one replica carries within the limits is below the target.

How far to trust the figure is the traffic model's `basis`: a measured row or a GKE Inference Quickstart
profile is evidence, so `tpu-slo-capacity` is mandatory; a roofline estimate is not, so the same finding
on a modelled figure is `tpu-slo-capacity-modelled`, advisory. Enforcement is per policy in the Policy
SDK (`ResourceValidationPolicy.enforcement_level`), hence two policies over one check.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from tpu_policies.engine_args import engine_of_template, infer
from tpu_policies.fit import granted_shape, request_from
from tpu_policies.ray_serve import serve_config
from tpu_policies.replicas import most_replicas
from tpu_policies.settings import Setting, config_schema
from tpu_policies.stack import Item, Stack, read_stack
from tpu_policies.values import UNKNOWN, as_list
from tpu_policies.workloads import PodTemplate, workload_annotations
from tpu_stacks.catalog.engine_traffic import TRAFFIC
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.errors import UserError
from tpu_stacks.objects import annotations as keys
from tpu_stacks.serving.engine_flags import flag_values, split_argument
from tpu_stacks.serving.serve_config import engine_flags
from tpu_stacks.serving.speculative import SPECULATIVE_CONFIG
from tpu_stacks.serving.speculative import async_scheduling as server_async_scheduling
from tpu_stacks.sizing import ServingRequest
from tpu_stacks.slo.plan import EngineSettings, size_command
from tpu_stacks.traffic import Profile, TrafficTarget, evaluate_slice, read_profiles
from tpu_stacks.traffic.model import MAX_BATCH

TRUSTED_BASES = ("measured", "profile")
"""Bases the mandatory policy judges; the rest (the roofline's `model`) the advisory one."""
TRAFFIC_ENGINES = tuple(TRAFFIC)
"""Engines the traffic model evaluates (`evaluate_slice(engine=...)`): those with a traffic record."""
PROFILES = Setting(
    "profiles",
    [],
    "Saved GKE Inference Quickstart FetchProfiles/FetchBenchmarkingData responses (JSON paths; absolute, or "
    "relative to where the Pulumi CLI runs) the traffic model uses for what they cover: the stack's slo.profiles. "
    "Set the same list on both tpu-slo-capacity rules.",
)


@dataclass(frozen=True)
class Finding:
    message: str
    trusted: bool
    """The figure is measured or from a profile: the mandatory policy reports it."""


def _number(notes: dict[str, Any], key: str, whole: bool = False) -> float | None:
    value = notes.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"\s*\d+\s*" if whole else r"\s*\d+(\.\d+)?\s*", value):
        raise UserError(key, value, "is not a number as text", 'write it as digits, quoted: "1200"')
    if float(value) <= 0:  # the pattern admits only finite, non-negative numbers: refuse zero here
        raise UserError(key, value, "is not above zero", 'write a positive number, quoted: "1200"')
    return float(value)


def target_from(notes: dict[str, Any]) -> TrafficTarget | None:
    """The annotated target; None when the workload has none."""
    rate = _number(notes, keys.SLO_OUTPUT_TOKENS_PER_SECOND)
    if rate is None:
        return None
    lengths = {
        name: int(value)
        for name, key in (("input_tokens", keys.SLO_INPUT_TOKENS), ("output_tokens", keys.SLO_OUTPUT_TOKENS))
        if (value := _number(notes, key, whole=True)) is not None
    }
    return TrafficTarget(
        output_tokens_per_second=rate,
        ntpot_ms=_number(notes, keys.SLO_NTPOT_MS),
        ttft_ms=_number(notes, keys.SLO_TTFT_MS),
        **lengths,
    )


def _request(notes: dict[str, Any], template: PodTemplate, props: dict[str, Any]) -> ServingRequest | None:
    """The model and its settings: the annotation contract, else the engine's own arguments."""
    request = request_from(notes) if keys.MODEL in notes or keys.PARAMS in notes else None
    if request is None:
        found = infer(template, props)
        request = found.request if found is not None else None
    return request if isinstance(request, ServingRequest) else None


def batch_cap(request: ServingRequest, template: PodTemplate, item: Item) -> int:
    """Sequences the engine decodes together at most: a per-slot engine's fixed batch (JetStream's: the request's,
    from the annotation or `--batch_size`), else vLLM's last `--max-num-seqs` (absent: the traffic model's own cap),
    as the plan uses. A RayService's engine settings are its Serve config's `engine_kwargs`, read as vLLM's flags
    (ray_serve.py)."""
    traffic = TRAFFIC.get(request.engine)
    if traffic is not None and traffic.fixed_batch:
        return request.batch
    found = _flag_number(template, item, "--max-num-seqs")
    return found if found is not None else MAX_BATCH


def step_budget(template: PodTemplate, item: Item) -> int | None:
    """Tokens per engine step the server is told: vLLM's last `--max-num-batched-tokens` (a RayService's: its
    engine_kwargs), as the plan passes it; None when absent, and the traffic model takes the engine's own default on
    the slice's generation (catalog/engine_traffic.py), not a stack's."""
    return _flag_number(template, item, "--max-num-batched-tokens")


def async_scheduling(template: PodTemplate, item: Item) -> bool | None:
    """vLLM's last `--async-scheduling`/`--no-async-scheduling` (a RayService's: its engine_kwargs), as the plan
    reads a stack's extraArgs; None when neither is given (the build's default) or the server's engine schedules one
    step at a time (its traffic record's `async_batches`: no such switch)."""
    engine = VLLM if serve_config(item.type, item.props) is not None else engine_of_template(template)
    traffic = TRAFFIC.get(engine.engine) if engine is not None else None
    if engine is None or traffic is None or not traffic.async_switch:
        return None
    # the switch, and a speculative method that turns it off (serving/speculative.py, the plan's rule)
    return server_async_scheduling(_engine_arguments(template, item), engine)


def _engine_arguments(template: PodTemplate, item: Item) -> list[str]:
    """The engine's arguments one by one, as the server's argv holds them: a container argument that is a flag or a
    JSON value is one argument (Kubernetes passes it without a shell, spaces and all), any other is split as a shell
    would split it (`sh -c "vllm serve ..."`); a RayService's Serve config's `engine_kwargs` as vLLM's flags, its
    `speculative_config` object as `--speculative-config` JSON."""
    config = serve_config(item.type, item.props)
    if config is None:
        parts: list[str] = []
        for container in template.containers(init=False):
            for key in ("command", "args"):
                for part in as_list(container.get(key)):
                    if isinstance(part, str) and part.lstrip().startswith(("-", "{")):
                        parts.append(part)
                    else:
                        parts.extend(split_argument(part))
        return parts
    found: list[str] = []
    for app in config.apps:
        found += [f"{flag}={value}" for flag, value in engine_flags(app.engine_kwargs).items()]
        speculative = app.engine_kwargs.get("speculative_config")
        if isinstance(speculative, dict):
            found.append(f"{SPECULATIVE_CONFIG}={json.dumps(speculative)}")
    return found


def _flag_number(template: PodTemplate, item: Item, flag: str) -> int | None:
    """The flag's last whole-number value among the engine's arguments, read as the pod's own engine's parser reads
    them (vLLM's takes underscores for dashes: serving/engine_flags.py flag_values); a RayService's Serve config holds
    vLLM's engine_kwargs, already spelled as vLLM's flags. None when absent or not a number."""
    engine = VLLM if serve_config(item.type, item.props) is not None else engine_of_template(template)
    if engine is None:
        return None
    value = flag_values(_engine_text(template, item).split(), engine).get(flag)
    return int(value) if value is not None and value.isdigit() else None


def _engine_text(template: PodTemplate, item: Item) -> str:
    """The engine's arguments as one command line: the container's, or a RayService's Serve config's `engine_kwargs`
    read as vLLM's flags (ray_serve.py)."""
    config = serve_config(item.type, item.props)
    if config is None:
        return template.arg_text()
    return " ".join(f"{flag}={value}" for app in config.apps for flag, value in engine_flags(app.engine_kwargs).items())


def _judge(
    item: Item, template: PodTemplate, target: TrafficTarget, stack: Stack, profiles: tuple[Profile, ...]
) -> Finding | None:
    notes = workload_annotations(item.props)
    request = _request(notes, template, item.props)
    shape = granted_shape(template)
    if request is None or shape is None or request.engine not in TRAFFIC_ENGINES:
        return None  # not a model on a slice the traffic model knows: tpu-model-sizable names what is missing
    settings = EngineSettings(  # what the plan tells the traffic model, read from the server's own flags
        request.engine,
        request.weight_dtype,
        request.kv_dtype,
        request.context,
        batch_cap(request, template, item),
        step_budget(template, item),
        async_scheduling(template, item),
    )
    candidate = evaluate_slice(request.model, shape, target, profiles=profiles, **settings.traffic_arguments())
    trusted = candidate.basis in TRUSTED_BASES
    where = f"{shape.generation} {shape.topology}"
    figure = f"{candidate.basis}: {candidate.source}"
    command = size_command(request.model, target, settings)
    if not candidate.meets:
        return Finding(
            f"{item.label}: one replica of {where} cannot meet the target's latency limits at any load "
            f"({candidate.why}; {figure}); find a slice that does with `{command}`",
            trusted,
        )
    most = most_replicas(stack, item)
    if most is None:
        return None
    replica = candidate.per_replica.output_tokens_per_second
    if most.count >= candidate.replicas:
        return None
    return Finding(
        f"{item.label}: its most replicas ({most.field} = {most.count}) carry {most.count * replica:g} output "
        f"tokens/s on {where} ({replica:g} each within the limits; {figure}), below the annotated target of "
        f"{target.output_tokens_per_second:g}; raise it to {candidate.replicas}, or find a larger slice with "
        f"`{command}`",
        trusted,
    )


def findings(stack: Stack, profiles: tuple[Profile, ...] = ()) -> list[tuple[Item, Finding]]:
    """Every workload with a target that cannot carry it (one finding per workload)."""
    result: list[tuple[Item, Finding]] = []
    for item, templates in stack.tpu_workloads():
        notes = workload_annotations(item.props)
        if any(value is UNKNOWN for key, value in notes.items() if key.startswith(keys.PREFIX)):
            continue  # a sizing input is known only after apply
        try:
            target = target_from(notes)
            if target is None:
                continue
            found = next((f for t in templates if (f := _judge(item, t, target, stack, profiles)) is not None), None)
        except UserError as error:
            found = Finding(f"{item.label}: cannot judge its traffic target: {error}", True)
        if found is not None:
            result.append((item, found))
    return result


def _reporter(trusted: bool) -> Any:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        try:
            profiles = tuple(p for path in PROFILES.read(args) for p in read_profiles(str(path)))
        except UserError as error:
            report_violation(f"setting {PROFILES.key}: {error}", None)
            return
        for item, finding in findings(read_stack(args), profiles):
            if finding.trusted == trusted:
                report_violation(finding.message, item.urn)

    return validate


POLICY = StackValidationPolicy(
    name="tpu-slo-capacity",
    description="A serving workload with a traffic target (tpu-stacks.dev/slo-* annotations) can carry it: its slice "
    "keeps the latency limits at some load and its most replicas carry the output tokens/s, judged by the traffic "
    "model from a measured or profiled figure.",
    validate=_reporter(trusted=True),
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=config_schema(PROFILES),
)

MODELLED_POLICY = StackValidationPolicy(
    name="tpu-slo-capacity-modelled",
    description="The same check as tpu-slo-capacity where the traffic model's figure is a roofline estimate, not a "
    "measurement: advisory, since the estimate may be off (docs/sizing-for-traffic.md states its error on every row).",
    validate=_reporter(trusted=False),
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
    config_schema=config_schema(PROFILES),
)
