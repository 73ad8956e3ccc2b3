"""Rule 1: the model a workload serves or trains fits the TPU chips that workload gets.

"Will it fit?" is otherwise answered by an out-of-memory crash after a slice has been provisioned
(NVIDIA-NeMo/Automodel#1592, marin#7204). The workload's `tpu-stacks.dev/*` annotations carry the
model and its sizing inputs; a workload without them (a program that does not use our components)
is sized from its engine's own arguments (engine_args.py, per the engine catalogue; a RayService's
from its Serve config's LLM configs, ray_serve.py). Annotations, when present, win, except over a
RayService's Serve config: that is what runs (Ray Serve LLM starts the engine from its `engine_kwargs`),
so a readable Serve config is judged even when annotations say otherwise. The memory model is the one
the CLI and components use (sizing.py), against
chips per pod x pods per slice x HBM per chip of the selected generation. A recognised engine whose
model or settings cannot be sized is reported by the advisory `tpu-model-sizable`: never a silent pass.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity
from pydantic import ValidationError

from tpu_policies.ray_serve import engine_requests, serve_config
from tpu_policies.values import UNKNOWN, as_str, plain
from tpu_policies.workloads import PodTemplate, kind_of, name_of, tpu_templates, workload_annotations
from tpu_stacks.catalog.engines import trains
from tpu_stacks.catalog.engines.record import Engine
from tpu_stacks.catalog.models import ResolvedModel, custom_model, lookup_model, parse_param_count
from tpu_stacks.catalog.tpu import SliceShape, generation_of_accelerator, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.objects import annotations as keys
from tpu_stacks.sizing import ServingRequest, TrainingRequest, breakdown, gib, judge, smallest_fit

ATTENTION_EXTRA = ("query_heads", "sliding_window", "windowed_layers")
"""The attention annotation's optional fields (annotations.ATTENTION), passed on to the custom model."""
SERVING_ENGINES: tuple[str, ...] = get_args(Engine)
"""The engines sizing knows (`sizing.Engine`); any other engine is sized as `generic`."""


def _text(notes: dict[str, Any], key: str) -> str | None:
    """An annotation's text; a number or other value is reported, never replaced by a default
    (Kubernetes keeps annotations as strings: ObjectMeta.annotations is map[string]string)."""
    value = notes.get(key)
    if value is None or isinstance(value, str):
        return value
    shown = int(value) if isinstance(value, float) and value.is_integer() else value  # the engine sends floats
    raise UserError(key, shown, "is not text (Kubernetes annotations are strings)", f'quote it: "{shown}"')


def _int(notes: dict[str, Any], key: str, default: int) -> int:
    value = _text(notes, key)
    if value is None:
        return default
    if not re.fullmatch(r"\s*\d+\s*", value):
        raise UserError(key, value, "is not a whole number", "write the count as digits")
    return int(value)


def _model(notes: dict[str, Any]) -> ResolvedModel:
    """The annotated model: a catalogue id, else a custom model from params (+ attention)."""
    name = as_str(notes.get(keys.MODEL))
    params = as_str(notes.get(keys.PARAMS))
    if name:
        try:
            return lookup_model(name, keys.MODEL)
        except UserError:
            if params is None:
                raise UserError(
                    keys.MODEL,
                    name,
                    "is not in the model catalogue",
                    f"annotate {keys.PARAMS} (and {keys.ATTENTION}) to size a model outside it",
                ) from None
    shape: dict[str, int] = {}
    for part in (as_str(notes.get(keys.ATTENTION)) or "").split(","):
        if "=" in part:
            field, _, value = part.partition("=")
            if not value.strip().isdigit():
                raise UserError(keys.ATTENTION, part, "is not field=N", "write layers=N,kv_heads=N,head_dim=N")
            shape[field.strip()] = int(value)
    return custom_model(
        name or "custom model",
        parse_param_count(params or "0", keys.PARAMS),
        shape.pop("layers", None),
        shape.pop("kv_heads", None),
        shape.pop("head_dim", None),
        keys.MODEL,
        attention_extra={k: v for k, v in shape.items() if k in ATTENTION_EXTRA},
    )


def request_from(notes: dict[str, Any]) -> ServingRequest | TrainingRequest | None:
    """The sizing request the annotations describe; None when the workload carries no model."""
    if any(v is UNKNOWN for k, v in notes.items() if k.startswith(keys.PREFIX)):
        return None  # a sizing input is computed: known only after apply
    if as_str(notes.get(keys.MODEL)) is None and as_str(notes.get(keys.PARAMS)) is None:
        return None
    model = _model(notes)
    engine = as_str(notes.get(keys.ENGINE)) or ""
    workload = as_str(notes.get(keys.WORKLOAD))
    if workload is None:
        workload = "train" if trains(engine) or keys.PARALLELISM in notes else "serve"
    try:
        if workload == "train":
            batch = _text(notes, keys.BATCH) or "1"
            return TrainingRequest(
                model=model,
                per_device_batch=float(batch),
                seq_len=_int(notes, keys.CONTEXT, 4096),
                weight_dtype=as_str(notes.get(keys.WEIGHT_DTYPE)) or "fp32",
            )
        if workload != "serve":
            raise UserError(keys.WORKLOAD, workload, "is not a workload", "use serve or train")
        return ServingRequest(
            model=model,
            engine=engine if engine in SERVING_ENGINES else "generic",
            weight_dtype=as_str(notes.get(keys.WEIGHT_DTYPE)) or "bf16",
            kv_dtype=as_str(notes.get(keys.KV_DTYPE)) or "bf16",
            context=_int(notes, keys.CONTEXT, 8192),
            batch=_int(notes, keys.BATCH, 1),
            **({"prefill_tokens": _int(notes, keys.PREFILL_TOKENS, 0)} if keys.PREFILL_TOKENS in notes else {}),
        )
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UserError(
            f"{keys.PREFIX}/* ({field})", first.get("input"), first["msg"].lower(), "fix the annotation"
        ) from None
    except ValueError as error:
        if isinstance(error, UserError):
            raise
        raise UserError(f"{keys.PREFIX}/*", str(error), "is not a valid sizing input", "fix the annotation") from None


def granted_shape(template: PodTemplate) -> SliceShape | None:
    """The slice as this workload uses it: its selected generation and topology, with the chips it takes."""
    gen = generation_of_accelerator(template.accelerator or "")
    pods = template.pods_per_slice
    if gen is None or not template.topology or pods is None or pods < 1:
        return None
    chips_per_pod = template.chips
    try:
        shape = slice_shape(gen, template.topology)
        same_host = [
            m.name for m in gen.machine_types_for(gen.topology(template.topology)) if m.chips_per_vm == chips_per_pod
        ]
        if same_host:
            shape = slice_shape(gen, template.topology, same_host[0])
    except UserError:
        return None  # not a valid slice: rule 3 reports it
    granted = chips_per_pod * pods
    if granted != shape.chips:
        shape = shape.model_copy(
            update={"chips": granted, "nodes": pods, "hbm_bytes": granted * gen.hbm_bytes_per_chip}
        )
    return shape


def _smallest(request: ServingRequest | TrainingRequest, generation: str) -> str:
    try:
        best = smallest_fit(request, generation)
    except UserError as error:
        return f"{error.problem}; {error.fix}"
    shape = best.shape
    return (
        f"use {shape.generation} {shape.topology} ({shape.chips} chips, {shape.nodes} x {shape.machine_type}) "
        "or larger, or lower the context, batch or dtype"
    )


def _annotated(notes: dict[str, Any]) -> bool:
    return any(key in notes for key in (keys.MODEL, keys.PARAMS))


def _by_annotations(resource_type: str, props: dict[str, Any], notes: dict[str, Any]) -> bool:
    """Size from the annotations: they are present and no Serve config says what actually runs (a Serve
    config unknown at preview is not one: the annotations are judged until it is known)."""
    if not _annotated(notes):
        return False
    config = serve_config(resource_type, props)
    return config is None or (not config.apps and config.error is None)


def _judge(
    label: str,
    request: ServingRequest | TrainingRequest,
    template: PodTemplate,
    source: str,
    tp: int | None = None,
    tp_name: str = "--tensor-parallel-size",
) -> tuple[str | None, str | None]:
    """(a message when the model does not fit the template's chips, a sizing error)."""
    shape = granted_shape(template)
    if shape is None:
        return None, None
    if tp is not None and 0 < tp < shape.chips:  # the engine shards the model over tp chips only
        shape = shape.model_copy(update={"chips": tp, "hbm_bytes": tp * shape.hbm_bytes // shape.chips})
    try:
        verdict = judge(request, shape)
    except UserError as error:
        return None, f"{label}: cannot size the workload: {error}"
    if verdict.fits:
        return None, None
    count = template.pods_per_slice
    pods = f"{count} pods x {template.chips}" if count != 1 else f"1 pod x {template.chips}"
    sharded = f", sharded over {tp_name}={tp}" if tp is not None and tp == shape.chips else ""
    return (
        f"{label}: {request.model.id} needs {gib(verdict.memory.total_bytes)} of HBM "
        f"({breakdown(verdict.memory)}{source}) but {template.where or 'the pod'} gets {shape.chips} "
        f"{shape.generation} chips on {shape.topology} ({pods} google.com/tpu{sharded}) = "
        f"{gib(verdict.usable_bytes)} usable; {_smallest(request, shape.generation)}"
    ), None


def check_workload(resource_type: str, props: dict[str, Any], fallback: str) -> list[str]:
    """One message per TPU slice shape of this workload that cannot hold its model."""
    notes = workload_annotations(props)
    label = f"{kind_of(resource_type, props)} {name_of(props, fallback)}"
    if not _by_annotations(resource_type, props, notes):
        return [p for p, _ in _inferred(resource_type, props, label) if p]
    try:
        request = request_from(notes)
    except UserError as error:
        return [f"{label}: cannot size the workload: {error}"]
    if request is None:
        return []
    problems: list[str] = []
    for template in tpu_templates(resource_type, props):
        message, error = _judge(label, request, template, "")
        if error:
            return [error]
        if message and message not in problems:
            problems.append(message)
    return problems


def _inferred(resource_type: str, props: dict[str, Any], label: str) -> list[tuple[str | None, str | None]]:
    """(fit problem, advisory) per TPU template of a workload without annotations, sized from its engine's flags."""
    results: list[tuple[str | None, str | None]] = []
    for template in tpu_templates(resource_type, props):
        for found in engine_requests(resource_type, props, template):
            if found.request is None:
                advisory = f"{label}: runs {found.label} but {found.problem}; the model's fit is not checked"
                if (None, advisory) not in results:
                    results.append((None, advisory))
                continue
            arguments = found.arguments or f"its {found.engine.engine} arguments"
            source = f"; read from {arguments}, no tpu-stacks.dev annotations"
            message, error = _judge(label, found.request, template, source, found.tensor_parallel, found.tp_name)
            result = (
                message,
                error.replace(": cannot size", f": runs {found.label} but cannot size") if error else None,
            )
            if result not in results:
                results.append(result)
    return results


def unsized_workload(resource_type: str, props: dict[str, Any], fallback: str) -> list[str]:
    """Advisories: a recognised engine whose model or settings the catalogue cannot size."""
    if _by_annotations(resource_type, props, workload_annotations(props)):
        return []
    label = f"{kind_of(resource_type, props)} {name_of(props, fallback)}"
    return [a for _, a in _inferred(resource_type, props, label) if a]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    for problem in check_workload(args.resource_type, plain(args.props), args.name):
        report_violation(problem, None)


def _validate_unsized(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    for problem in unsized_workload(args.resource_type, plain(args.props), args.name):
        report_violation(problem, None)


POLICY = ResourceValidationPolicy(
    name="tpu-model-fits-slice",
    description="The model a TPU workload serves or trains (tpu-stacks.dev/* annotations, else its engine's own "
    "arguments) fits in the HBM of the chips it gets; the message shows the memory breakdown and the smallest "
    "slice that fits.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)

UNSIZED_POLICY = ResourceValidationPolicy(
    name="tpu-model-sizable",
    description="A TPU workload whose engine is recognised (vLLM, JetStream, MaxText) but whose model or settings "
    "the catalogue cannot size is named, so its fit is never passed in silence.",
    validate=_validate_unsized,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
)
