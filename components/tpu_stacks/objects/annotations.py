"""Annotation keys that make a workload's sizing inputs visible to the engine at preview.

Components put these on every TPU workload (the object's own metadata), with values known at
preview; the policy pack reads them to re-check that the model fits the chips the workload gets.
One module for the keys, so components and policies cannot disagree on a spelling.
"""

from __future__ import annotations

from decimal import Decimal

from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.sizing import ServingRequest, TrainingRequest

PREFIX = "tpu-stacks.dev"

MODEL = f"{PREFIX}/model"
"""Catalogue model id (Hugging Face id or Saxml path)."""
PARAMS = f"{PREFIX}/params"
"""Parameter count, so a custom model (not in the catalogue) can be judged too."""
ATTENTION = f"{PREFIX}/attention"
"""A model's attention shape when the pack cannot look it up (a custom model, or one from the user's own config.json):
`layers=N,kv_heads=N,head_dim=N`, then `query_heads=N` and `sliding_window=N,windowed_layers=N` when known."""
WORKLOAD = f"{PREFIX}/workload"
"""serve or train."""
ENGINE = f"{PREFIX}/engine"
"""vllm, jetstream, saxml or maxtext."""
WEIGHT_DTYPE = f"{PREFIX}/weight-dtype"
KV_DTYPE = f"{PREFIX}/kv-dtype"
CONTEXT = f"{PREFIX}/context"
"""Serving: tokens per sequence. Training: sequence length."""
BATCH = f"{PREFIX}/batch"
"""Serving: sequences held at once. Training: per-device batch."""
PREFILL_TOKENS = f"{PREFIX}/prefill-tokens"
"""Serving: tokens in one prefill step (vLLM `--max-num-batched-tokens`), which sizes the activation
workspace; without it the pack would assume the memory model's default and judge another workload."""
TENSOR_PARALLEL = f"{PREFIX}/tensor-parallel-size"
"""Serving engines: the tensor-parallel size the engine is started with."""
PARALLELISM = f"{PREFIX}/parallelism"
"""Training: `name=value,...` of the mesh axes (MaxText ici_* settings) that must multiply to the chips."""
PRIVILEGED_REASON = f"{PREFIX}/privileged-reason"
"""Why a pod must run privileged (the policy pack accepts it only with a reason)."""
HOST_NETWORK_REASON = f"{PREFIX}/host-network-reason"
"""Why a pod needs the host network (multi-host TPU workloads that upstream runs so)."""


def _model(model: ResolvedModel) -> dict[str, str]:
    """The model's id and parameters; a model outside the catalogue (a custom shape, or the user's own config.json,
    which the pack cannot read) carries its attention shape too, windowed layers included."""
    result = {MODEL: model.id, PARAMS: str(model.params)}
    attention = model.architecture.attention
    if attention is not None and not model.architecture.catalogued:
        shape = f"layers={attention.layers},kv_heads={attention.kv_heads},head_dim={attention.head_dim}"
        if attention.query_heads is not None and model.architecture.declared_params is None:
            shape += f",query_heads={attention.query_heads}"
        if attention.sliding_window is not None and attention.windowed_layers:
            shape += f",sliding_window={attention.sliding_window},windowed_layers={attention.windowed_layers}"
        result[ATTENTION] = shape
    return result


def for_serving(request: ServingRequest, tensor_parallel_size: int) -> dict[str, str]:
    """The annotations a serving workload carries."""
    return {
        **_model(request.model),
        WORKLOAD: "serve",
        ENGINE: request.engine,
        WEIGHT_DTYPE: request.weight_dtype,
        KV_DTYPE: request.kv_dtype,
        CONTEXT: str(request.context),
        BATCH: str(request.batch),
        PREFILL_TOKENS: str(request.prefill_tokens),
        TENSOR_PARALLEL: str(tensor_parallel_size),
    }


def for_training(request: TrainingRequest, parallelism: dict[str, int]) -> dict[str, str]:
    """The annotations a training workload carries."""
    return {
        **_model(request.model),
        WORKLOAD: "train",
        ENGINE: "maxtext",
        WEIGHT_DTYPE: request.weight_dtype,
        CONTEXT: str(request.seq_len),
        BATCH: f"{request.per_device_batch:g}",
        PARALLELISM: ",".join(f"{axis}={size}" for axis, size in parallelism.items()),
    }


API_TOKEN_REASON = f"{PREFIX}/api-token-reason"
"""Pod-template annotation: why the pod keeps its Kubernetes API token (policy `pods-least-privilege`)."""
NO_CPU_LIMIT_REASON = f"{PREFIX}/no-cpu-limit-reason"
"""Pod-template annotation: why a container without TPUs runs with no CPU limit (policy `pods-least-privilege`),
e.g. the Inference Gateway picker, whose upstream chart leaves it unset on purpose."""


# A traffic target (`slo:` of a serving section) and the traffic model's prediction for one replica.
# The pack recomputes the prediction from the workload's own facts (the slice it selects, the model
# above); it reads the target from here and the basis only to show what the stack assumed.
SLO_OUTPUT_TOKENS_PER_SECOND = f"{PREFIX}/slo-output-tokens-per-second"
"""The target: output tokens per second all replicas together must carry."""
SLO_NTPOT_MS = f"{PREFIX}/slo-ntpot-ms"
"""The target's limit on normalized time per output token (ms); absent: no limit."""
SLO_TTFT_MS = f"{PREFIX}/slo-ttft-ms"
"""The target's limit on time to first token (ms); absent: no limit."""
SLO_INPUT_TOKENS = f"{PREFIX}/slo-input-tokens"
"""Prompt tokens of a typical request the target assumes."""
SLO_OUTPUT_TOKENS = f"{PREFIX}/slo-output-tokens"
"""Output tokens of a typical request the target assumes."""
SLO_REPLICAS = f"{PREFIX}/slo-replicas"
"""Prediction: replicas the target needs."""
SLO_REPLICA_OUTPUT_TOKENS_PER_SECOND = f"{PREFIX}/slo-replica-output-tokens-per-second"
"""Prediction: output tokens per second one replica carries within the limits."""
SLO_REPLICA_NTPOT_MS = f"{PREFIX}/slo-replica-ntpot-ms"
"""Prediction: one replica's NTPOT at the load it is assumed to carry."""
SLO_REPLICA_TTFT_MS = f"{PREFIX}/slo-replica-ttft-ms"
"""Prediction: one replica's TTFT at the load it is assumed to carry."""
SLO_BASIS = f"{PREFIX}/slo-basis"
"""Prediction: measured, profile or model."""
SLO_SOURCE = f"{PREFIX}/slo-source"
"""Prediction: where the figure comes from (a measurement row, a profile, the roofline)."""


def _number(value: float | int) -> str:
    """Two decimals at most, no exponent: `1234.5`, not `1234.5000001` or `1.2e+03`; a positive number below
    0.005 keeps its digits (`0.001`), never rounded to a `0` the pack would read as no limit at all."""
    if not isinstance(value, float):
        return str(value)
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return format(Decimal(repr(value)), "f") if text in ("0", "-0") and value != 0 else text


def for_slo(target: dict[str, float | int | None], prediction: dict[str, float | int | str | None]) -> dict[str, str]:
    """A serving workload's target and prediction as annotations (strings; unset limits left out)."""
    return {
        key: value if isinstance(value, str) else _number(value)
        for key, value in {**target, **prediction}.items()
        if value is not None
    }
