"""Read what a TPU workload serves or trains from the engine's own container arguments.

A program that does not use our components carries no `tpu-stacks.dev/*` annotations, but the
engine is told the model and its sizing inputs on its command line: vLLM `--model`,
`--max-model-len`, ...; JetStream-PyTorch `--model_name`/`--size` or `--model_id`, `--batch_size`,
`--max_cache_length`, `--quantize_*`; MaxText `model_name=`, `per_device_batch_size=`,
`max_target_length=`. Which flags mean what, and their defaults, come from the engine catalogue
(`tpu_stacks.catalog.engines`); the request built here is judged by the same sizing code as the
annotated one (fit.py). A workload whose engine is recognised but whose model or settings the
catalogue cannot size is returned with a `problem` (an advisory, never a silent pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpu_policies.values import UNKNOWN, as_list, as_str, dig
from tpu_policies.workloads import PodTemplate
from tpu_stacks.catalog.engine_traffic import traffic_of
from tpu_stacks.catalog.engines import dtype_rule, engine_of_command, engine_of_image
from tpu_stacks.catalog.engines.record import EngineVersion, Flag
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.errors import UserError
from tpu_stacks.jetstream.models import MODELS as JETSTREAM_MODELS
from tpu_stacks.serving.engine_flags import (
    engine_flag,
    flag_values,
    given_value,
    served_dtypes,
    split_argument,
)
from tpu_stacks.sizing import ServingRequest, TrainingRequest

MAXTEXT_WEIGHT_DTYPES = {"float32": "fp32", "bfloat16": "bf16"}
# Without --max-model-len vLLM takes the model's own context, at least the sizing default for every catalogued
# model; without --max-num-batched-tokens the sizing default prefill step applies (as for annotations).
SIZING_CONTEXT = str(ServingRequest.model_fields["context"].default)
SIZING_PREFILL = str(ServingRequest.model_fields["prefill_tokens"].default)


@dataclass(frozen=True)
class Inferred:
    """What the engine's arguments say; `request` is None when they cannot be sized (see `problem`)."""

    engine: EngineVersion
    request: ServingRequest | TrainingRequest | None
    problem: str | None = None
    tensor_parallel: int | None = None
    """vLLM `--tensor-parallel-size`: the JAX devices the model is sharded over, 2 per tpu7x chip (None: not given)."""
    arguments: str = ""
    """Where the settings were read, for messages ("" : the engine's container arguments)."""
    tp_name: str = "--tensor-parallel-size"
    """What sets `tensor_parallel`, as the user wrote it."""

    @property
    def label(self) -> str:
        return f"{self.engine.engine} {self.engine.version[:12]}"


class _Unknown(Exception):
    """A flag's value is not known at preview."""


def _tokens(template: PodTemplate, extra: list[str]) -> tuple[list[str], list[str]]:
    """(images, argument tokens) of the template's main containers, shell strings split."""
    images: list[str] = []
    tokens: list[str] = []
    for container in template.containers(init=False):
        image = as_str(container.get("image"))
        if image:
            images.append(image)
        for key in ("command", "args"):
            if container.get(key) is UNKNOWN:
                raise _Unknown
            for part in as_list(container.get(key)):
                if part is UNKNOWN:
                    raise _Unknown
                tokens.extend(split_argument(part))
    for part in extra:
        tokens.extend(split_argument(part))
    return images, tokens


def _settings(tokens: list[str]) -> dict[str, str]:
    """MaxText's `key=value` settings."""
    return {k: v for k, _, v in (t.partition("=") for t in tokens if "=" in t and not t.startswith("-"))}


def _engine(images: list[str], tokens: list[str]) -> EngineVersion | None:
    for image in images:
        found = engine_of_image(image)
        if found is not None and found.flags:
            return found
    return engine_of_command(tokens)


def engine_of_template(template: PodTemplate) -> EngineVersion | None:
    """The catalogued engine a pod template runs: by a container's image (any catalogued engine), else by its
    command (the record's `commands`: vLLM's entrypoints, MaxText's base config); None when neither says, or the
    command is unknown."""
    for container in template.containers(init=False):
        image = as_str(container.get("image"))
        found = engine_of_image(image) if image else None
        if found is not None:
            return found
    try:
        images, tokens = _tokens(template, [])
    except _Unknown:
        return None
    return _engine(images, tokens)


def _number(flags: dict[str, str], name: str, default: str | None, kind: type = int) -> Any:
    value = flags.get(name, default)
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        raise UserError(name, value, "is not a number", "write it as digits") from None


def _default(engine: EngineVersion, name: str) -> str | None:
    return next((f.default for f in engine.flags if f.name == name), None)


def _declared(flags: dict[str, str], flag: Flag, fallback: int | None) -> int | None:
    """A numeric flag as the record declares it: its value under its name or an alias, else the engine's own
    default (the record's), else `fallback` (the sizing default where the engine's depends on the model)."""
    default = flag.default if flag.default is not None else (None if fallback is None else str(fallback))
    given = given_value(flags, flag, default)
    return _number({flag.name: given} if given is not None else {}, flag.name, None)


def _paged(engine: EngineVersion, flags: dict[str, str], tokens: list[str]) -> Inferred:
    """A paged-KV server (vLLM): the model is its model flag, else the argument after `model_after`."""
    model = engine_flag(engine, "model")
    model_flag, model_name = model.name, given_value(flags, model)  # SGLang's `--model` is `--model-path`
    if model_name is None and engine.model_after is not None:  # `vllm serve <model>`
        after = engine.model_after
        served = [n for t, n in zip(tokens, tokens[1:], strict=False) if t == after and not n.startswith("-")]
        model_name = served[0] if served else None
    if not model_name:
        return Inferred(engine, None, f"names no {model_flag}, so the pack cannot size it")
    return _paged_request(engine, flags, model_name, model_flag)


def vllm_request(flags: dict[str, str], model_name: str, model_key: str) -> Inferred:
    """The sizing request of vLLM's flags (`--max-model-len`, `--dtype`, ...) for a model named under
    `model_key` (`--model`, or a Serve config's `model_loading_config.model_id`); refusals raise UserError."""
    return _paged_request(VLLM, flags, model_name, model_key)


def _paged_request(engine: EngineVersion, flags: dict[str, str], model_name: str, model_key: str) -> Inferred:
    """The request of a paged-KV server's flags, read by the meanings its catalogue record declares."""
    if dtype_rule(engine) is None:
        return Inferred(
            engine, None, f"{engine.engine} {engine.version} declares no dtype rule, so the pack cannot size it"
        )
    model = lookup_model(model_name, model_key)
    dtypes = served_dtypes(engine, flags, model.architecture)  # the engine's own dtype rule, its stack's plan's too
    if dtypes.problem is not None:
        return Inferred(engine, None, dtypes.problem)
    tensor_parallel = engine_flag(engine, "tensor_parallel")
    request = ServingRequest(
        model=model,
        engine=traffic_of(engine.engine).sizing_engine,
        weight_dtype=dtypes.weight,
        kv_dtype=dtypes.kv,
        context=_declared(flags, engine_flag(engine, "context"), SIZING_CONTEXT),
        batch=1,  # paged KV: one sequence of the max model length is the floor (the max-sequences flag bounds it)
        prefill_tokens=_declared(flags, engine_flag(engine, "prefill_tokens"), SIZING_PREFILL),
    )
    tp = _declared(flags, tensor_parallel, None)
    return Inferred(engine, request, tensor_parallel=tp, tp_name=tensor_parallel.name)


def _per_slot(engine: EngineVersion, flags: dict[str, str]) -> Inferred:
    """A per-slot-KV server (JetStream-PyTorch): `jpt serve`'s model id and input/output lengths, or the
    converter flow's model name and size with one cache length; the batch is its fixed batch flag."""
    if "--model_id" in flags:
        model = lookup_model(flags["--model_id"], "--model_id")
        context = _number(flags, "--max_input_length", _default(engine, "--max_input_length"))
        prefill = context
        context += _number(flags, "--max_output_length", _default(engine, "--max_output_length"))
        batch = _number(flags, "--override_batch_size", _default(engine, "--batch_size"))
    else:
        name, size = flags.get("--model_name"), flags.get("--size", _default(engine, "--size"))
        match = next((m for m in JETSTREAM_MODELS if (m.model_name, m.size) == (name, size)), None)
        if match is None:
            return Inferred(engine, None, f"--model_name {name} --size {size} is not a model the catalogue knows")
        model = lookup_model(match.hf_id, "--model_name")
        context = prefill = _number(flags, "--max_cache_length", _default(engine, "--max_cache_length"))
        batch = _number(flags, "--batch_size", _default(engine, "--batch_size"))
    request = ServingRequest(
        model=model,
        engine=traffic_of(engine.engine).sizing_engine,
        context=context,
        batch=batch,
        weight_dtype="int8" if flags.get("--quantize_weights", "False").lower() == "true" else "bf16",
        kv_dtype="int8" if flags.get("--quantize_kv_cache", "False").lower() == "true" else "bf16",
        prefill_tokens=prefill,
    )
    return Inferred(engine, request)


def _training(engine: EngineVersion, settings: dict[str, str]) -> Inferred:
    """A trainer (MaxText): its model, per-device batch, sequence length and weight dtype settings."""
    model_key, dtype_key, batch_key, length_key = (
        engine_flag(engine, m).name for m in ("model", "weight_dtype", "per_device_batch", "context")
    )
    name = settings.get(model_key)
    if not name:
        return Inferred(engine, None, f"names no {model_key}=, so the pack cannot size it")
    dtype = settings.get(dtype_key, _default(engine, dtype_key) or "float32")
    if dtype not in MAXTEXT_WEIGHT_DTYPES:
        return Inferred(engine, None, f"{dtype_key}={dtype} is not one the memory model sizes (float32, bfloat16)")
    request = TrainingRequest(
        weight_dtype=MAXTEXT_WEIGHT_DTYPES[dtype],
        model=lookup_model(name, model_key),
        per_device_batch=_number(settings, batch_key, _default(engine, batch_key), float),
        seq_len=_number(settings, length_key, _default(engine, length_key)),
    )
    return Inferred(engine, request)


def _read(engine: EngineVersion, tokens: list[str]) -> Inferred:
    """The reader the engine's record asks for: a trainer's settings, else a server's flags by how it holds KV."""
    arguments = _settings(tokens) if engine.arguments == "settings" else flag_values(tokens, engine)
    if engine.workload == "train":
        return _training(engine, arguments)
    if traffic_of(engine.engine).fixed_batch:
        return _per_slot(engine, arguments)
    return _paged(engine, arguments, tokens)


def infer(template: PodTemplate, props: dict[str, Any]) -> Inferred | None:
    """What the template's engine serves or trains, from its arguments; None when no catalogued engine runs there
    or an argument is unknown at preview. A RayJob's entrypoint counts as the workers' arguments."""
    entrypoint = as_str(dig(props, "spec", "entrypoint"))
    try:
        images, tokens = _tokens(template, [entrypoint] if entrypoint else [])
    except _Unknown:
        return None
    engine = _engine(images, tokens)
    if engine is None:
        return None
    try:
        return _read(engine, tokens)
    except UserError as error:
        return Inferred(engine, None, str(error))
    except ValueError as error:  # a request the sizing model refuses (e.g. a zero length)
        return Inferred(engine, None, f"its arguments are not a valid sizing input: {error}".splitlines()[0])
