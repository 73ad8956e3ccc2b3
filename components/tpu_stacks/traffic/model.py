"""The performance model: what one replica on one TPU slice serves, from a roofline per engine step.

Why a roofline: a decode step reads every weight once and every cached token's K and V of every sequence, so it
cannot be faster than those bytes over the slice's HBM bandwidth; its matmuls (2 x active params per token) cannot
run faster than the slice's peak for the dtype they run in ([SB] inference.md: "T_min = (B x KV + params) / total
HBM BW"). An engine build reaches a fraction of each bound on each generation: three fractions per (build,
generation), fitted on published rows (tpu_stacks.traffic.fit; catalog/engine_traffic.py holds them):
`weights` of the bandwidth for the weight read, `kv` for the per-sequence KV read and attention (paged-attention
kernels reach less than a weight matmul), `compute` of the peak.

A step (StepCost) adds up: the linear layers over all its tokens, one weight read shared by every token, so the
longer of the weight read and the tokens' matmuls; then each decoding sequence's KV read and attention; then the
prompt chunks' causal attention (compute).

vLLM (chunked prefill): a step takes at most `max_num_batched_tokens` tokens: one per decoding sequence and, in
the room left, chunks of the prompts waiting. With `b` sequences decoding and each request producing `O` tokens
after an `I`-token prompt, each step prefills b x I / O prompt tokens, so at most budget / (1 + I / O) sequences
decode at once (more concurrency waits for the prefill path). JetStream (per-slot, no chunking) prefills each
prompt in its own pass between decode steps: ITL = step + (b / O) x prefill. A published closed-loop benchmark (N
prompts at a concurrency) is replayed step by step with the same StepCost (tpu_stacks.traffic.bench); sizing
uses the steady state here.

TTFT: a new prompt's chunks (ceil(I / (budget - b)) steps), the rest of the step running when it arrives (half a
step at p50, a whole one at p99) and the steps the engine had already scheduled behind it (none; one under vLLM's
async scheduling, on by default at the pinned build: its batch queue holds two steps, ledger:
vllm.engine.batch-queue, vllm.engine.async-batches, vllm.async-scheduling.default-on), plus the wait for the prefill
path at the offered load, an M/D/1 queue (Poisson arrivals at the replica's request rate, deterministic service =
the prompt's chunk time): mean wait rho x S / (2 (1 - rho)); p50 and p99 from the standard exponential-tail
approximation of its waiting time (P(W > t) ~ rho x exp(-t rho / W_mean)), Kingman's heavy-traffic form. NTPOT =
(TTFT + (O - 1) x ITL) / O.

Dtypes: weight-only int8/fp8 halves the bytes read but the matmuls run in bf16 (the weights are dequantized);
W8A8 (activations quantized too) runs the matmuls at the int8 or fp8 peak of the generation where the
catalogue gives one. KV capacity: the engine's memory fraction of HBM (vLLM's 0.92 default unless given) less the
weights and overhead, over a sequence's mean occupancy (paged: prompt + half the output, rounded up to the page the
engine build picks, catalog/engine_traffic.py; per-slot: the cache length).

Not modelled: collectives over ICI (the fit absorbs them on the calibrated slices), prefix caching, speculative
decoding. An (engine, generation) pair without a calibration is refused (catalog/engine_traffic.py); one whose
calibration was fitted on another model implementation than the one the pinned build runs the model with (vLLM TPU:
tpu-inference's JAX model or vLLM's PyTorch one) is modelled with it, flagged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Literal

from tpu_stacks.catalog.engine_traffic import TRAFFIC, Calibration, traffic_of
from tpu_stacks.catalog.model_shape import DEFAULT_KV_DTYPE
from tpu_stacks.catalog.models import ResolvedModel, dtype_bytes
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import USABLE_HBM_FRACTION, ServingRequest, judge, serving_memory

Limit = Literal["hbm-bandwidth", "compute", "kv-capacity", "ntpot-target", "ttft-target", "step-budget"]
"""`step-budget`: the prompts of more sequences would not fit the engine's tokens per step (vLLM
`--max-num-batched-tokens`); more concurrency would only wait."""

MAX_BATCH = 256
"""Sequences one replica decodes at most: Google's vLLM TPU recipe starts vLLM with `--max-num-seqs 256`
([REC-VLLM]). `--batch` sets another cap."""
PAGE_TOKENS = 16
"""Tokens per KV page for a paged engine whose record gives no rule of its own (catalog/engine_traffic.py
`page_tokens`; vLLM's is tpu-inference's, which picks it from the max model length)."""
P99 = 0.99
MAX_UTILIZATION = 0.95
"""The prefill path is taken as at most 95% busy: at 100% an open queue grows without bound, while a real
replica at its batch cap turns requests away to the waiting queue (the HPA's signal); TTFT there is the wait of
a 95%-busy M/D/1 queue, a large number that a TTFT limit rejects."""


@dataclass(frozen=True)
class OperatingPoint:
    """One replica at one concurrency: what it serves and how fast each request is."""

    batch: int
    output_tokens_per_second: float
    input_tokens_per_second: float | None
    ntpot_ms: float
    ttft_ms: float
    """TTFT at the median (p50) of the offered load's queue."""
    bound: Limit
    """What sets the time per token at this batch: HBM bandwidth or compute."""
    ttft_p99_ms: float | None = None
    itl_ms: float | None = None


@dataclass(frozen=True)
class Workload:
    """The request shape and the engine's settings a replica runs with."""

    engine: str
    input_tokens: int
    output_tokens: int
    weight_dtype: str = "bf16"
    kv_dtype: str = DEFAULT_KV_DTYPE
    max_model_len: int | None = None
    activation_dtype: str | None = None
    """None or bf16: weight-only quantization (matmuls in bf16); int8/fp8: W8A8 at that dtype's peak."""
    batched_tokens: int | None = None
    """Tokens per engine step (vLLM `--max-num-batched-tokens`); None: the engine's default."""
    memory_fraction: float | None = None
    """Fraction of HBM the engine takes (vLLM `--gpu-memory-utilization`); None: sizing's 0.9."""
    page_tokens: int | None = None
    """vLLM `--block-size`; None: the page size the engine build picks itself (catalog/engine_traffic.py)."""
    max_num_seqs: int | None = None
    """vLLM `--max-num-seqs` (it bounds tpu-inference's page size); None: MAX_BATCH."""
    async_scheduling: bool | None = None
    """vLLM `--async-scheduling` (True) or `--no-async-scheduling` (False) as the server was given it; None: the pinned
    build's default (catalog/engine_traffic.py, on for vLLM 0.29.0). It sets the steps already scheduled when a request
    reaches the engine (`steps_in_flight`), in the steady state and the benchmark replay alike."""

    @property
    def context(self) -> int:
        return self.max_model_len or self.input_tokens + self.output_tokens


def calibration(engine: str, generation_name: str, model: ResolvedModel | None = None) -> tuple[Calibration, str]:
    """The (engine, generation, implementation `model` runs with) fit and its flag (a stand-in of another generation
    or implementation is flagged); one-line UserError when the engine has none for the generation."""
    if engine not in TRAFFIC:
        raise UserError("--engine", engine, "has no calibrated performance model", f"use {' or '.join(TRAFFIC)}")
    found, flag = TRAFFIC[engine].calibration(generation_name, model.architecture if model is not None else None)
    if found is None:
        raise UserError("--tpu", generation_name, flag, "choose a calibrated generation or give a GIQ profile")
    return found, flag


def steps_in_flight(workload: Workload) -> int:
    """Steps the engine has already scheduled when it takes a request that arrived while it stepped: its batch queue
    (ledger: vllm.engine.batch-queue, vllm.engine.async-batches), from the engine's record and the server's
    async-scheduling setting. The one place the model and the benchmark replay decide it."""
    return traffic_of(workload.engine).steps_in_flight(workload.async_scheduling)


def _peak_ops(shape: SliceShape, workload: Workload) -> float:
    """The slice's peak for the dtype the matmuls run in: int8/fp8 only when activations are quantized too."""
    gen = generation(shape.generation)
    act = workload.activation_dtype
    per_chip = gen.peak_bf16_flops
    if act == "int8" and gen.peak_int8_ops:
        per_chip = gen.peak_int8_ops
    elif act == "fp8" and gen.peak_fp8_flops:
        per_chip = gen.peak_fp8_flops
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
    counts them). `tokens` is at least 1: a sequence's occupancy or attended tokens, from a prompt of at least one
    token (TrafficTarget and Measurement refuse input_tokens < 1)."""
    return serving_memory(_request(model, workload, tokens), shape).part("kv_cache")


def fits(model: ResolvedModel, shape: SliceShape, workload: Workload) -> tuple[bool, str]:
    """Whether one sequence of the workload's context fits beside the weights (tpu_stacks.sizing decides)."""
    verdict = judge(_request(model, workload, workload.context), shape)
    if verdict.fits:
        return True, ""
    need = verdict.memory.total_bytes / 1024**3
    have = verdict.usable_bytes / 1024**3
    return False, f"does not fit: needs {need:.1f} GiB at batch 1, {have:.1f} GiB usable"


def _occupancy(workload: Workload) -> int:
    """Tokens of KV one sequence holds on average: the cache length per slot, or (paged) its prompt and half
    its output rounded up to whole pages."""
    traffic = traffic_of(workload.engine)
    if traffic.fixed_batch:
        return workload.context
    page = page_tokens(workload)
    tokens = workload.input_tokens + workload.output_tokens // 2
    return math.ceil(tokens / page) * page


def page_tokens(workload: Workload) -> int:
    """Tokens per KV page: the workload's `--block-size`, else what the engine build picks for its max model
    length and max sequences, else PAGE_TOKENS."""
    if workload.page_tokens:
        return workload.page_tokens
    rule = traffic_of(workload.engine).page_tokens
    if rule is None:
        return PAGE_TOKENS
    return rule(workload.context, workload.max_num_seqs or MAX_BATCH)


def _attended(workload: Workload) -> int:
    """Cached tokens a decode step reads per sequence: paged attention reads the tokens a sequence has (at half
    its output on average); a per-slot engine attends over its whole slot, masked (JetStream-PyTorch's
    `ragged_mha` flag, default False, jetstream_pt/config.py in
    https://github.com/AI-Hypercomputer/jetstream-pytorch)."""
    if traffic_of(workload.engine).fixed_batch:
        return workload.context
    return workload.input_tokens + workload.output_tokens // 2


def kv_free_bytes(model: ResolvedModel, shape: SliceShape, workload: Workload) -> float:
    """HBM left for the KV cache: the engine's memory fraction less the weights and overhead."""
    memory = serving_memory(_request(model, workload, workload.context), shape)
    fraction = workload.memory_fraction or traffic_of(workload.engine).memory_fraction or USABLE_HBM_FRACTION
    return shape.hbm_bytes * fraction - memory.part("weights") - memory.part("overhead")


def kv_capacity(model: ResolvedModel, shape: SliceShape, workload: Workload) -> int:
    """Sequences whose KV cache fits in the engine's share of HBM beside the weights and overhead."""
    free = kv_free_bytes(model, shape, workload)
    per_sequence = _kv_bytes(model, shape, workload, _occupancy(workload))
    if per_sequence <= 0:
        return MAX_BATCH
    return max(0, int(free // per_sequence))


def attention_flops(model: ResolvedModel, tokens: int) -> float:
    """FLOPs of causal self-attention over one prompt of `tokens` tokens (QK^T and AV; the projections are in
    2 x params x tokens).

    Derivation: PaLM's FLOPs count (Chowdhery et al. 2022, appendix B, https://arxiv.org/abs/2204.02311) puts
    attention at 12 x L x H x Q x T per token for training, a third of it forward: 4 x L x d x T with d = H x Q
    (query heads x head dim) and T keys. Causally, token i sees i keys (a windowed layer at most its window),
    so a prompt of n tokens costs 4 x d x (keys summed over tokens) per layer, ~2 x L x n^2 x d."""
    attention = model.architecture.attention
    if attention is None:
        return 0.0
    width = (attention.query_heads or attention.kv_heads) * attention.head_dim
    window = attention.sliding_window or tokens
    full = tokens * (tokens + 1) / 2
    windowed = full if tokens <= window else window * (window + 1) / 2 + (tokens - window) * window
    global_layers = attention.layers - attention.windowed_layers
    return 4 * width * (global_layers * full + attention.windowed_layers * windowed)


def md1_wait(rho: float, service: float, quantile: float | None) -> float:
    """Waiting time of an M/D/1 queue at utilization `rho` with deterministic `service`: the mean (quantile
    None) is Pollaczek-Khinchine's rho x S / (2 (1 - rho)); a quantile q uses P(W > t) ~ rho x exp(-t rho /
    mean), so it is 0 when 1 - q >= rho. Infinite at rho >= 1."""
    if rho <= 0:
        return 0.0
    if rho >= 1:
        return math.inf
    mean = rho * service / (2 * (1 - rho))
    if quantile is None:
        return mean
    tail = 1 - quantile
    return 0.0 if tail >= rho else mean / rho * math.log(rho / tail)


@dataclass(frozen=True)
class StepCost:
    """The cost of one engine step, in parts a step's work adds up from (seconds).

    A step runs the linear layers once over all its tokens (decoding sequences' one each, and prompt chunks): one
    weight read shared by every token, so that part takes the longer of the weight read and the tokens' matmuls
    (a roofline). Attention runs apart: a decoding sequence reads its cached K and V (memory-bound, its own
    efficiency), a prompt chunk attends causally over its prompt (compute)."""

    weights: float
    """Seconds to read the weights once."""
    per_token: float
    """Seconds of linear-layer matmuls per token."""
    per_cached_token: float
    """Seconds to read and attend over one cached token of one decoding sequence."""
    per_flop: float
    """Seconds per FLOP of prompt attention."""
    cached_token_bytes: float
    """KV bytes one cached token takes on the slice."""

    def step(self, decoding: float, cached_tokens: float, prompt_tokens: float, prompt_attention_flops: float) -> float:
        linear = max(self.weights, (decoding + prompt_tokens) * self.per_token)
        return linear + cached_tokens * self.per_cached_token + prompt_attention_flops * self.per_flop

    def elapsed(self, stretches: Iterable[tuple[int, float, float, int]]) -> list[float]:
        """The clock after each of a run's stretches of steps (starting at 0), summed in order. A stretch is
        (tokens per step, cached tokens over the stretch, prompt attention FLOPs, steps): one step as `step` adds
        it, or `steps` decode-only steps, each its linear part, with their cached tokens summed. Why here: the
        replay (tpu_stacks.traffic.bench) times one schedule under hundreds of calibrations, so this is `step`
        written out (max as a comparison) over a whole run, the same arithmetic in the same order."""
        weights, per_token, per_cached, per_flop = self.weights, self.per_token, self.per_cached_token, self.per_flop
        return list(
            accumulate(
                (
                    steps * (linear if (linear := tokens * per_token) > weights else weights)
                    + cached * per_cached
                    + attention * per_flop
                    for tokens, cached, attention, steps in stretches
                ),
                initial=0.0,
            )
        )

    def compute_bound(self, decoding: float, prompt_tokens: float) -> bool:
        return (decoding + prompt_tokens) * self.per_token > self.weights


def cached_token_bytes(model: ResolvedModel, shape: SliceShape, workload: Workload) -> float:
    """KV bytes one cached token takes on the slice, averaged over the tokens a decode step reads (no efficiency
    enters it, so the benchmark replay's schedule can use it without a calibration)."""
    attended = _attended(workload)
    return _kv_bytes(model, shape, workload, attended) / attended


@lru_cache(maxsize=1024)
def _roofline(model: ResolvedModel, shape: SliceShape, workload: Workload) -> tuple[float, float, float, float, float]:
    """What step_cost divides by the efficiencies: the slice's HBM bandwidth and peak for the matmuls' dtype, the
    weight bytes, the linear FLOPs per token and the KV bytes per cached token. No calibration enters it, so the
    fit's hundreds of calibrations per row share one."""
    gen = generation(shape.generation)
    return (
        gen.hbm_bandwidth_bytes_per_s * shape.chips,
        _peak_ops(shape, workload),
        model.architecture.params * dtype_bytes(workload.weight_dtype, "--dtype"),
        2 * model.architecture.active_params,
        cached_token_bytes(model, shape, workload),
    )


def step_cost(
    model: ResolvedModel, shape: SliceShape, workload: Workload, scale: float = 1.0, fit: Calibration | None = None
) -> StepCost:
    """The step's parts for this model, slice and workload under the (engine, generation, model implementation)
    calibration."""
    cal = fit or calibration(workload.engine, shape.generation, model)[0]
    bandwidth, peak, weights, linear_flops, per_token_bytes = _roofline(model, shape, workload)
    bandwidth = bandwidth * scale
    compute = peak * cal.compute * scale
    return StepCost(
        weights=weights / (bandwidth * cal.weights),
        per_token=linear_flops / compute,
        per_cached_token=per_token_bytes / (bandwidth * cal.kv),
        per_flop=1 / compute,
        cached_token_bytes=per_token_bytes,
    )


def operating_point(
    model: ResolvedModel,
    shape: SliceShape,
    workload: Workload,
    batch: int,
    scale: float = 1.0,
    fit: Calibration | None = None,
) -> OperatingPoint:
    """The steady state at `batch` sequences: per-replica throughput and the latencies each request sees.

    `scale` multiplies every efficiency (a published measurement of the pinned build on this slice scales the
    model to itself, tpu_stacks.traffic.optimizer); `fit` replaces the catalogue's calibration (the fit and its
    leave-one-out use it)."""
    cost = step_cost(model, shape, workload, scale, fit)
    inputs, outputs = workload.input_tokens, workload.output_tokens
    attended = _attended(workload)
    prompt_attention = attention_flops(model, inputs)
    budget = step_budget(workload, shape.generation)
    if budget is not None:  # chunked prefill mixed into the decode steps
        # A step takes every decoding sequence's token and prompt chunks in the room left; the prompts of the
        # sequences that finish must fit that room, so at most budget / (1 + I / O) sequences decode at once:
        # more concurrency only waits in the prefill queue.
        decoding = min(float(batch), budget / (1 + inputs / outputs))
        room = max(1.0, budget - decoding)
        prompts = decoding / outputs  # prompts started per step, in the steady state
        step = itl = cost.step(decoding, decoding * attended, prompts * inputs, prompts * prompt_attention)
        service = math.ceil(inputs / room) * step
        # the prefill path's utilization: prompt tokens asked per step over the room a step has
        rho = 1.0 if decoding < batch else decoding * inputs / outputs / room
        output_rate = decoding / itl
        bound: Limit = "compute" if cost.compute_bound(decoding, prompts * inputs) else "hbm-bandwidth"
    else:  # a separate prefill pass per prompt between decode steps
        step = cost.step(batch, batch * attended, 0, 0)
        service = cost.step(0, 0, inputs, prompt_attention)
        itl = step + batch / outputs * service
        rho = batch / outputs * service / itl  # arrivals x service time of the prefill pass
        output_rate = batch / itl
        bound = "compute" if cost.compute_bound(batch, 0) else "hbm-bandwidth"
    rho = min(rho, MAX_UTILIZATION)
    # An arrival waits for the step running to end (uniform over a step: half at the median, about all of it at p99),
    # then for the steps the engine had already scheduled behind it (one more under async scheduling).
    ahead = steps_in_flight(workload) - 1
    ttft = service + (ahead + 0.5) * step + md1_wait(rho, service, 0.5)
    ttft_p99 = service + (ahead + 1) * step + md1_wait(rho, service, P99)
    ntpot = (ttft + (outputs - 1) * itl) / outputs
    return OperatingPoint(
        batch=batch,
        output_tokens_per_second=output_rate,
        input_tokens_per_second=output_rate * inputs / outputs,
        ntpot_ms=ntpot * 1000,
        ttft_ms=ttft * 1000,
        bound=bound,
        ttft_p99_ms=ttft_p99 * 1000,
        itl_ms=itl * 1000,
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
    fit: Calibration | None = None,
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
    fed = _fed_batch(workload, shape.generation)
    if fed is not None and fed < top:
        top = fed

    def meets(point: OperatingPoint) -> bool:
        return (ntpot_ms is None or point.ntpot_ms <= ntpot_ms) and (ttft_ms is None or point.ttft_ms <= ttft_ms)

    first = operating_point(model, shape, workload, 1, scale, fit)
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
        if meets(operating_point(model, shape, workload, middle, scale, fit)):
            low = middle
        else:
            high = middle - 1
    point = operating_point(model, shape, workload, low, scale, fit)
    if low < top:
        latency_point = operating_point(model, shape, workload, low + 1, scale, fit)
        missed_ttft = ttft_ms is not None and latency_point.ttft_ms > ttft_ms
        return Choice(point, "ttft-target" if missed_ttft else "ntpot-target")
    if low == capacity and capacity <= max_batch:
        return Choice(point, "kv-capacity")
    if low == fed:
        return Choice(point, "step-budget")
    return Choice(point, point.bound)


def step_budget(workload: Workload, generation: str) -> int | None:
    """Tokens one engine step takes on `generation`: the workload's own `--max-num-batched-tokens`, else the
    engine's default there (catalog/engine_traffic.py); None: the engine prefills apart (JetStream). The one place
    the model and the benchmark replay decide it."""
    return traffic_of(workload.engine).batched_tokens(generation, workload.batched_tokens or None)


def _fed_batch(workload: Workload, generation: str) -> int | None:
    """The most sequences a chunking engine keeps decoding: the prompts of those that finish must fit the room
    its steps leave (None: the engine prefills apart, JetStream)."""
    budget = step_budget(workload, generation)
    if budget is None:
        return None
    return max(1, math.floor(budget / (1 + workload.input_tokens / workload.output_tokens)))


def replicas_for(target_output_tokens_per_second: float, per_replica: float) -> int:
    """Replicas that carry the target, each at its operating point."""
    return max(1, math.ceil(target_output_tokens_per_second / per_replica - 1e-9))
