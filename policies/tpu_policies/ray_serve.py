"""Multi-host serving on KubeRay: what a RayService's Serve config asks of the TPU worker groups it runs on.

A RayService serving with Ray Serve LLM says what it serves in `spec.serveConfigV2` (a YAML string;
tpu_stacks.serving.serve_config reads it), not in its containers' arguments: each `applications[].args.llm_configs[]`
entry names the model (`model_loading_config`), vLLM's engine arguments (`engine_kwargs`: tensor and
pipeline parallel, `max_model_len`, dtypes) and the slice one replica reserves (`accelerator_type`,
`accelerator_config.topology`). Ray Serve LLM asks for `tensor_parallel_size x pipeline_parallel_size` TPU
chips per replica and, with a topology, one placement-group bundle per host of that slice
([RAY-SERVE-TPU]); the worker group supplies them
(`numOfHosts` pods of `google.com/tpu` chips, node selectors naming the slice).

This module gives the two rules that read it the same view:

- `engine_requests`: what each engine on a TPU pod template serves, for tpu-model-fits-slice (fit.py):
  the Serve config's LLM configs placed on that worker group, else the container's own arguments
  (engine_args.infer). The sizing is engine_args.vllm_request's, the judgement fit.py's.
- `serve_problems`: for tpu-workload-matches-pool (matching.py), a Serve config whose tensor x pipeline
  parallel does not use the devices of the slice its worker group forms (sizing.serving_parallelism),
  or whose topology / accelerator type no TPU worker group of the object provides. Hosts x chips per
  host against the slice is matching.py's own check, for every kind (the walker lifts RayService groups).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tpu_policies.engine_args import Inferred, infer, vllm_request
from tpu_policies.values import dig
from tpu_policies.workloads import PodTemplate, kind_of, tpu_templates
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation_of_accelerator, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.serving.parallel_flags import check_parallelism
from tpu_stacks.serving.serve_config import (
    SERVE_CONFIG_FIELD,
    LlmApp,
    ServeConfigError,
    cli_text,
    engine_flags,
    llm_apps,
    parse,
)
from tpu_stacks.sizing import serving_parallelism

TP, PP = "--tensor-parallel-size", "--pipeline-parallel-size"
RAY_ACCELERATOR = {served.generation: served.platform for served in RAY_SERVE.serves or () if served.platform}
"""Ray's accelerator type per TPU generation (`TPU-V6E`), from the engine catalogue."""


@dataclass(frozen=True)
class ServeConfig:
    """A RayService's Serve config as the rules read it."""

    apps: list[LlmApp]
    cli: list[tuple[str, str]]
    """(where, text) of applications passing vLLM command-line style arguments."""
    error: str | None = None
    """Why it could not be read (not YAML, not a mapping)."""


def serve_config(resource_type: str, props: dict[str, Any]) -> ServeConfig | None:
    """The Serve config of a RayService; None for other kinds or when it is absent or unknown at preview."""
    if kind_of(resource_type, props) != "RayService":
        return None
    text = dig(props, "spec", SERVE_CONFIG_FIELD)
    if not isinstance(text, str):
        return None
    try:
        config = parse(text)
    except ServeConfigError as error:
        return ServeConfig([], [], str(error))
    return ServeConfig(llm_apps(config), cli_text(config))


def group_of(template: PodTemplate) -> str:
    """`worker group tpu-group (spec.rayClusterConfig.workerGroupSpecs[0])`, for messages."""
    where = template.where.removesuffix(".template")
    return f"worker group {template.name} ({where})" if template.name else where


def runs_on(app: LlmApp, template: PodTemplate) -> bool:
    """Whether Ray places this LLM config's replicas on this worker group: its topology and accelerator type,
    when it gives them, are the group's (Ray reserves a slice of that topology, on nodes of that type)."""
    if not isinstance(template.topology, str) or not isinstance(template.accelerator, str):
        return True  # unknown at preview (or not selected: the selector check reports that): not refused
    gen = generation_of_accelerator(template.accelerator)
    wanted = RAY_ACCELERATOR.get(gen.name) if gen is not None else None
    same_type = app.accelerator_type is None or wanted is None or app.accelerator_type.upper() == wanted
    return same_type and app.topology in (None, template.topology)


def _sized(app: LlmApp) -> Inferred:
    """The sizing request of one LLM config: its model resolved through the catalogue, vLLM's flags from
    `engine_kwargs`; sharded over tensor x pipeline parallel devices."""
    arguments = f"its {SERVE_CONFIG_FIELD} {app.where}"
    names = app.model_names()
    if not names:
        return Inferred(VLLM, None, f"{app.where} names no model_loading_config.model_id", arguments=arguments)
    first: UserError | None = None
    for key, name in names:
        try:
            lookup_model(name, key)
        except UserError as error:
            first = first or error
            continue
        flags = engine_flags(app.engine_kwargs)
        try:
            found = vllm_request(flags, name, key)
            pipeline = int(flags.get(PP, "1"))
        except UserError as error:
            return Inferred(VLLM, None, str(error), arguments=arguments)
        except ValueError as error:  # a request the sizing model refuses (e.g. a zero length)
            problem = f"its engine_kwargs are not a valid sizing input: {error}".splitlines()[0]
            return Inferred(VLLM, None, problem, arguments=arguments)
        devices = int(flags.get(TP, "1")) * pipeline  # vLLM's default: one device
        tp_name = "tensor_parallel_size x pipeline_parallel_size" if pipeline > 1 else "tensor_parallel_size"
        return dataclasses.replace(found, tensor_parallel=devices, arguments=arguments, tp_name=tp_name)
    return Inferred(VLLM, None, str(first), arguments=arguments)


def engine_requests(resource_type: str, props: dict[str, Any], template: PodTemplate) -> list[Inferred]:
    """What the engines on one TPU pod template serve: a RayService's LLM configs placed on it, else what its
    containers' own arguments say (none when no catalogued engine runs there)."""
    config = serve_config(resource_type, props)
    if config is not None and config.error is not None:
        problem = f"its {SERVE_CONFIG_FIELD} {config.error}"
        return [Inferred(VLLM, None, problem, arguments=f"its {SERVE_CONFIG_FIELD}")]
    if config is not None and config.apps:
        return [_sized(app) for app in config.apps if runs_on(app, template)]
    found = infer(template, props)
    return [found] if found is not None else []


def _slice(template: PodTemplate) -> SliceShape | None:
    """The slice a worker group forms when its pods x chips are that slice's hosts x chips; else None (the
    hosts check of matching.py reports it, or a value is unknown at preview)."""
    accelerator, topology, pods = template.accelerator, template.topology, template.pods_per_slice
    gen = generation_of_accelerator(accelerator) if isinstance(accelerator, str) else None
    if gen is None or not isinstance(topology, str):
        return None  # unknown at preview, or not a TPU slice: matching.py's selector check reports it
    try:
        machines = [m for m in gen.machine_types_for(gen.topology(topology)) if m.chips_per_vm == template.chips]
        shape = slice_shape(gen, topology, machines[0].name) if machines else None
    except UserError:
        return None
    return shape if shape is not None and shape.nodes == pods else None


def _parallelism(app: LlmApp, group: str, shape: SliceShape) -> list[str]:
    parallel = serving_parallelism(shape)
    devices = parallel.tensor_parallel * parallel.pipeline_parallel
    flags = engine_flags(app.engine_kwargs)
    text = " ".join(f"{name}={flags[name]}" for name in (TP, PP) if name in flags)
    rule = check_parallelism(text, devices)
    slice_text = (
        f"{group} forms {shape.generation} {shape.topology}: {parallel.hosts} hosts x {parallel.chips_per_host} "
        f"chips = {devices} devices per replica"
    )
    at = f"{SERVE_CONFIG_FIELD} {app.where}.engine_kwargs"
    if not rule.pipeline_fits:
        return [f"{at}.pipeline_parallel_size is {rule.pipeline} but {slice_text}; {rule.fix}"]
    tensor = int(flags.get(TP, "1"))
    if tensor == rule.expected:
        return []
    shown = f"is {tensor}" if TP in flags else "is not set (vLLM's default 1)"
    stages = f" (with pipeline_parallel_size {rule.pipeline})" if rule.pipeline > 1 else ""
    return [f"{at}.tensor_parallel_size {shown} but {slice_text}; set it to {rule.expected}{stages}"]


def _cli(where: str, text: str, group: str, shape: SliceShape) -> list[str]:
    parallel = serving_parallelism(shape)
    devices = parallel.tensor_parallel * parallel.pipeline_parallel
    rule = check_parallelism(text, devices)
    wrong = [rule.pipeline_flag] if rule.pipeline_flag is not None and not rule.pipeline_fits else list(rule.wrong)
    return [
        f"{SERVE_CONFIG_FIELD} {where} passes {flag.written} but {group} forms {shape.generation} {shape.topology} "
        f"= {devices} devices per replica; {rule.fix}"
        for flag in wrong
    ]


def _placed(app: LlmApp, groups: list[PodTemplate]) -> str | None:
    """A message when no TPU worker group of the object provides the slice the LLM config asks Ray for."""
    if any(runs_on(app, template) for template in groups):
        return None
    asked = ", ".join(
        f"{key} {value}"
        for key, value in (("accelerator_type", app.accelerator_type), ("accelerator_config.topology", app.topology))
        if value
    )
    have = "; ".join(f"{group_of(t)} selects {t.accelerator} {t.topology}" for t in groups)
    return (
        f"{SERVE_CONFIG_FIELD} {app.where} asks for {asked} but no TPU worker group provides it ({have}); its "
        "replicas would never be placed: make accelerator_type and accelerator_config.topology name a worker "
        "group's slice"
    )


def serve_problems(resource_type: str, props: dict[str, Any], template: PodTemplate) -> list[str]:
    """Every way the Serve config disagrees with the slice this TPU worker group forms."""
    config = serve_config(resource_type, props)
    if config is None or config.error is not None:
        return []
    groups = tpu_templates(resource_type, props)
    problems: list[str] = []
    if template.where == groups[0].where:  # said once per object, on its first TPU group (this one is among them)
        problems += [message for app in config.apps if (message := _placed(app, groups))]
    shape = _slice(template)
    if shape is None:
        return problems
    group = group_of(template)
    for app in config.apps:
        if runs_on(app, template):
            problems += _parallelism(app, group, shape)
    for where, text in config.cli:
        problems += _cli(where, text, group, shape)
    return problems
