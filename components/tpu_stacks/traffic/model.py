"""The performance model: what one replica on one TPU slice serves, from a roofline per engine step.

Why a roofline: a decode step reads every weight and every cached token's K and V once, so it cannot be
faster than those bytes over the slice's HBM bandwidth; a prefill multiplies every weight with every prompt
token (2 x params x tokens FLOPs) and, in causal attention, every token with the keys before it
(`attention_flops`), so it cannot be faster than that over the slice's peak FLOP/s ([SB]
inference.md: "T_min = (B x KV + params) / total HBM BW"). Engines reach a fraction of either bound; that
fraction, per engine, is the only fitted number, calibrated on the published rows of
tpu_stacks.catalog.throughput_measurements (docs/sizing-for-traffic.md gives the error on each).

Continuous batching interleaves prefills with decode steps. With `b` sequences decoding and each request
producing `O` tokens after an `I`-token prompt, every step finishes b/O requests whose replacements need a
prefill, so one step of the engine takes

    ITL(b) = step(b) + (b / O) x prefill(I)

and a replica produces b / ITL(b) output tokens per second. TTFT is one prefill plus the step it waits for;
NTPOT (GIQ's: request latency / output tokens) is (TTFT + (O - 1) x ITL) / O. The batch is the largest that
the KV cache holds (vLLM allocates pages for the tokens a sequence has; JetStream a full cache length per
slot), the engine's cap allows, and that keeps NTPOT and TTFT within the target. Not modelled: ICI
collectives between chips and hosts (the model is optimistic for large tensor-parallel slices), queueing
(TTFT at a load below saturation), speculative decoding and prefix caching.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic_of
from tpu_stacks.catalog.models import ResolvedModel, dtype_bytes
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import ServingRequest, judge, serving_memory, usable_bytes

Limit = Literal["hbm-bandwidth", "compute", "kv-capacity", "ntpot-target", "ttft-target"]

ENGINE_EFFICIENCY: dict[str, float] = {name: traffic.efficiency for name, traffic in TRAFFIC.items()}
"""Fraction of the roofline each engine reaches (catalog/engine_traffic.py, `EngineTraffic.efficiency`)."""

MAX_BATCH = 256
"""Sequences one replica decodes at most: Google's vLLM TPU recipe starts vLLM with `--max-num-seqs 256`
([REC-VLLM]). `--batch` sets another cap."""


@dataclass(frozen=True)
class OperatingPoint:
    """One replica at one concurrency: what it serves and how fast each request is."""

    batch: int
    output_tokens_per_second: float
    input_tokens_per_second: float | None
    ntpot_ms: float
    ttft_ms: float
    bound: Limit
    """What sets the time per token at this batch: HBM bandwidth or compute."""


@dataclass(frozen=True)
class Workload:
    """The request shape and the engine's settings a replica runs with."""

    engine: str
    input_tokens: int
    output_tokens: int
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    max_model_len: int | None = None

    @property
    def context(self) -> int:
        return self.max_model_len or self.input_tokens + self.output_tokens


def efficiency(engine: str) -> float:
    if engine not in ENGINE_EFFICIENCY:
        raise UserError("--engine", engine, "has no calibrated performance model", f"use {' or '.join(TRAFFIC)}")
    return ENGINE_EFFICIENCY[engine]


def _peak_ops(shape: SliceShape, weight_dtype: str) -> float:
    """The slice's peak operations per second for the weight dtype: int8 where the page gives an int8 figure."""
    gen = generation(shape.generation)
    per_chip = gen.peak_int8_ops if weight_dtype == "int8" and gen.peak_int8_ops else gen.peak_bf16_flops
    return per_chip * shape.chips


def _request(model: ResolvedModel, workload: Workload, context: int) -> ServingRequest:
    """The sizing request for one sequence of `context` tokens (the memory model is tpu_stacks.sizing's)."""
    return ServingRequest(
        model=model,
        engine=traffic_of(workload.engine).sizing_engine,
        weight_dtype=workload.weight_dtype,
        kv_dtype=workload.kv_dtype,
        context=context,
        batch=1,
        prefill_tokens=min(context, 8192),
    )


@lru_cache(maxsize=4096)
def _kv_bytes(model: ResolvedModel, shape: SliceShape, workload: Workload, tokens: int) -> int:
    """KV bytes one sequence of `tokens` keeps on the slice (windowed layers and replicated KV heads as sizing
    counts them)."""
    return serving_memory(_request(model, workload, max(1, tokens)), shape).part("kv_cache")


def fits(model: ResolvedModel, shape: SliceShape, workload: Workload) -> tuple[bool, str]:
    """Whether one sequence of the workload's context fits beside the weights (tpu_stacks.sizing decides)."""
    verdict = judge(_request(model, workload, workload.context), shape)
    if verdict.fits:
        return True, ""
    need = verdict.memory.total_bytes / 1024**3
    have = verdict.usable_bytes / 1024**3
    return False, f"does not fit: needs {need:.1f} GiB at batch 1, {have:.1f} GiB usable"


def kv_capacity(model: ResolvedModel, shape: SliceShape, workload: Workload) -> int:
    """Sequences whose KV cache fits beside the weights and overhead (0 when not even one does).

    vLLM's pages hold the tokens a sequence has (prompt + output); JetStream reserves a full cache length
    per slot ([SB] inference.md; tpu_stacks.sizing counts JetStream the same way)."""
    memory = serving_memory(_request(model, workload, workload.context), shape)
    free = usable_bytes(shape) - memory.part("weights") - memory.part("overhead")
    tokens = traffic_of(workload.engine).kv_tokens(workload.context, workload.input_tokens, workload.output_tokens)
    per_sequence = _kv_bytes(model, shape, workload, tokens)
    if per_sequence <= 0:
        return MAX_BATCH
    return max(0, int(free // per_sequence))


def attention_flops(model: ResolvedModel, tokens: int) -> float:
    """FLOPs of causal self-attention over one prompt of `tokens` tokens (QK^T and AV; the projections are in
    2 x params x tokens).

    Derivation: PaLM's FLOPs count (Chowdhery et al. 2022, appendix B, https://arxiv.org/abs/2204.02311) puts
    attention at 12 x L x H x Q x T per token for training, a third of it forward: 4 x L x d x T with d = H x Q
    (query heads x head dim) and T keys. Causally, token i sees i keys (a windowed layer at most its window),
    so a prompt of n tokens costs 4 x d x (keys summed over tokens) per layer, ~2 x L x n^2 x d: +13% over
    2 x params x n at 8k tokens for Llama 3 8B, +53% at 32k."""
    attention = model.architecture.attention
    if attention is None:
        return 0.0
    width = (attention.query_heads or attention.kv_heads) * attention.head_dim
    window = attention.sliding_window or tokens
    full = tokens * (tokens + 1) / 2
    windowed = full if tokens <= window else window * (window + 1) / 2 + (tokens - window) * window
    global_layers = attention.layers - attention.windowed_layers
    return 4 * width * (global_layers * full + attention.windowed_layers * windowed)


def operating_point(
    model: ResolvedModel, shape: SliceShape, workload: Workload, batch: int, scale: float = 1.0
) -> OperatingPoint:
    """The roofline at `batch` sequences: per-replica throughput and the latencies each request sees.

    `scale` multiplies the engine's efficiency (every modelled time scales with 1 / efficiency): a published
    measurement of the pinned build on this slice scales the model to itself (tpu_stacks.traffic.optimizer)."""
    eff = efficiency(workload.engine) * scale
    gen = generation(shape.generation)
    arch = model.architecture
    weights = arch.params * dtype_bytes(workload.weight_dtype, "--dtype")
    bandwidth = gen.hbm_bandwidth_bytes_per_s * shape.chips * eff
    compute = _peak_ops(shape, workload.weight_dtype) * eff
    # A decode step reads every weight once and every cached token of every sequence (at half its output).
    mean_context = workload.input_tokens + workload.output_tokens // 2
    memory_time = (weights + batch * _kv_bytes(model, shape, workload, mean_context)) / bandwidth
    compute_time = 2 * arch.active_params * batch / compute
    step = max(memory_time, compute_time)
    # A prefill multiplies every weight with every prompt token, attends causally, and reads the weights once.
    prefill_flops = 2 * arch.active_params * workload.input_tokens + attention_flops(model, workload.input_tokens)
    prefill = max(prefill_flops / compute, weights / bandwidth)
    prefill_per_step = batch / workload.output_tokens * prefill
    itl = step + prefill_per_step
    output_rate = batch / itl
    ttft = prefill + step
    ntpot = (ttft + (workload.output_tokens - 1) * itl) / workload.output_tokens
    bound: Limit = "hbm-bandwidth" if memory_time >= compute_time and memory_time >= prefill_per_step else "compute"
    return OperatingPoint(
        batch=batch,
        output_tokens_per_second=output_rate,
        input_tokens_per_second=output_rate * workload.input_tokens / workload.output_tokens,
        ntpot_ms=ntpot * 1000,
        ttft_ms=ttft * 1000,
        bound=bound,
    )


@dataclass(frozen=True)
class Choice:
    """The operating point a replica runs at, what stops a larger batch, or why none works."""

    point: OperatingPoint | None
    limit: Limit | None
    why: str = ""


def choose(
    model: ResolvedModel,
    shape: SliceShape,
    workload: Workload,
    *,
    ntpot_ms: float | None,
    ttft_ms: float | None,
    max_batch: int = MAX_BATCH,
    scale: float = 1.0,
) -> Choice:
    """The largest batch the KV cache holds, the cap allows and the latency limits accept (`scale`: as in
    `operating_point`)."""
    ok, why = fits(model, shape, workload)
    if not ok:
        return Choice(None, "kv-capacity", why)
    capacity = kv_capacity(model, shape, workload)
    if capacity < 1:
        return Choice(None, "kv-capacity", "no KV cache room for one sequence beside the weights")
    top = min(capacity, max_batch)

    def meets(point: OperatingPoint) -> bool:
        return (ntpot_ms is None or point.ntpot_ms <= ntpot_ms) and (ttft_ms is None or point.ttft_ms <= ttft_ms)

    first = operating_point(model, shape, workload, 1, scale)
    if not meets(first):
        missed = "ttft-target" if ttft_ms is not None and first.ttft_ms > ttft_ms else "ntpot-target"
        shown = (
            f"TTFT {first.ttft_ms:.0f} ms > {ttft_ms:g}"
            if missed == "ttft-target"
            else (f"NTPOT {first.ntpot_ms:.1f} ms > {ntpot_ms:g}")
        )
        return Choice(None, missed, f"misses the latency limit even at batch 1: {shown} ms")
    # NTPOT and TTFT grow with the batch: bisect for the largest batch that meets both.
    low, high = 1, top
    while low < high:
        middle = (low + high + 1) // 2
        if meets(operating_point(model, shape, workload, middle, scale)):
            low = middle
        else:
            high = middle - 1
    point = operating_point(model, shape, workload, low, scale)
    if low < top:
        latency_point = operating_point(model, shape, workload, low + 1, scale)
        missed_ttft = ttft_ms is not None and latency_point.ttft_ms > ttft_ms
        return Choice(point, "ttft-target" if missed_ttft else "ntpot-target")
    if low == capacity and capacity <= max_batch:
        return Choice(point, "kv-capacity")
    return Choice(point, point.bound)


def replicas_for(target_output_tokens_per_second: float, per_replica: float) -> int:
    """Replicas that carry the target, each at its operating point."""
    return max(1, math.ceil(target_output_tokens_per_second / per_replica - 1e-9))
