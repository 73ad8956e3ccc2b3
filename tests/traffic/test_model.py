"""The roofline by hand: a step is its linear layers (the longer of one weight read and all its tokens' matmuls),
then each decoding sequence's KV read (its own efficiency), then the prompt chunks' attention, mixed into the steps; the batch grows until the KV cache,
the cap or a latency limit stops it."""

from pathlib import Path

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, read_profiles
from tpu_stacks.traffic.model import (
    Workload,
    attention_flops,
    calibration,
    choose,
    kv_capacity,
    operating_point,
    replicas_for,
)
from tpu_stacks.traffic.pricing import hourly_price

LLAMA_8B = lookup_model("meta-llama/Llama-3.1-8B")
V6E_1 = slice_shape("v6e", "1x1")
KV_PER_TOKEN = 2 * 2 * 128 * 8 * 32  # K and V, bf16, head_dim 128, 8 KV heads, 32 layers
FIT = calibration("vllm", "v6e")[0]
BUDGET = 512  # the vLLM stack's --max-num-batched-tokens default (vllm/spec.py), given as the stack gives it


def test_a_decode_heavy_step_is_weights_and_kv_over_the_bandwidth():
    # One input token, many output tokens: the prefill share vanishes and the step is the bytes read.
    workload = Workload(engine="vllm", input_tokens=1, output_tokens=1000)
    point = operating_point(LLAMA_8B, V6E_1, workload, 1)
    bandwidth = generation("v6e").hbm_bandwidth_bytes_per_s
    compute = generation("v6e").peak_bf16_flops * FIT.compute
    active = LLAMA_8B.architecture.active_params
    # the linear layers read the weights once for the decode token and 1 / 1000 of a prompt token; then the KV
    linear = max(LLAMA_8B.params * 2 / (bandwidth * FIT.weights), (1 + 1 / 1000) * 2 * active / compute)
    step = linear + KV_PER_TOKEN * (1 + 500) / (bandwidth * FIT.kv) + attention_flops(LLAMA_8B, 1) / 1000 / compute
    assert point.output_tokens_per_second == pytest.approx(1 / step, rel=1e-9)
    assert point.bound == "hbm-bandwidth"


def test_a_prefill_is_chunks_of_the_step_budget_at_the_peak():
    workload = Workload(engine="vllm", input_tokens=4000, output_tokens=1000, batched_tokens=BUDGET)
    point = operating_point(LLAMA_8B, V6E_1, workload, 1)
    compute = generation("v6e").peak_bf16_flops * FIT.compute
    bandwidth = generation("v6e").hbm_bandwidth_bytes_per_s
    active = LLAMA_8B.architecture.active_params
    # one decoding sequence: a step's linear layers take its token and 1 / 1000 of a prompt (4 tokens), then its
    # KV read, then 1 / 1000 of the prompt's attention
    linear = max(LLAMA_8B.params * 2 / (bandwidth * FIT.weights), (1 + 4) * 2 * active / compute)
    step = linear + KV_PER_TOKEN * 4500 / (bandwidth * FIT.kv) + attention_flops(LLAMA_8B, 4000) / 1000 / compute
    assert point.output_tokens_per_second == pytest.approx(1 / step, rel=1e-9)
    chunks = -(-4000 // (BUDGET - 1))  # the prompt in 511-token chunks beside the one decoding sequence: 8
    # the prefill path is 4 / 511 busy: the median arrival waits for nothing but the rest of the step running and the
    # one vLLM's async scheduling (on by default) had queued ahead
    assert point.ttft_ms == pytest.approx((chunks * step + 1.5 * step) * 1000, rel=1e-9)


def test_more_concurrency_than_the_step_budget_feeds_only_waits():
    """1,800 in / 128 out in 512-token steps: a step has room for the prompts of at most 512 / (1 + 1800 / 128) =
    34 decoding sequences; beyond that the rate stays and TTFT is the saturated queue's."""
    workload = Workload(engine="vllm", input_tokens=1800, output_tokens=128, batched_tokens=BUDGET)
    fed = operating_point(LLAMA_8B, V6E_1, workload, 16)
    starved = operating_point(LLAMA_8B, V6E_1, workload, 64)
    assert starved.output_tokens_per_second == pytest.approx(
        operating_point(LLAMA_8B, V6E_1, workload, 35).output_tokens_per_second
    )
    assert starved.output_tokens_per_second > fed.output_tokens_per_second
    assert starved.ttft_ms > 5 * fed.ttft_ms


@pytest.mark.parametrize(("tokens", "share"), [(8192, 0.13), (32768, 0.53)])
def test_causal_attention_adds_to_a_long_prefill(tokens, share):
    """~2 x layers x n^2 x d over 2 x params x n: +13% at 8k tokens for Llama 3 8B, +53% at 32k (the issue's sizes)."""
    weights = 2 * LLAMA_8B.architecture.active_params * tokens
    assert attention_flops(LLAMA_8B, tokens) / weights == pytest.approx(share, abs=0.01)
    assert attention_flops(LLAMA_8B, 1) / (2 * LLAMA_8B.architecture.active_params) < 1e-4  # a short prompt: negligible


def test_a_windowed_layer_attends_to_its_window_only():
    gemma2 = lookup_model("google/gemma-2-9b")
    attention = gemma2.architecture.attention
    assert attention.windowed_layers and attention.sliding_window == 4096
    long = 16384
    full_layers = attention.layers - attention.windowed_layers
    width = attention.query_heads * attention.head_dim
    per_layer_full = 4 * width * long * (long + 1) / 2
    window = attention.sliding_window
    per_layer_windowed = 4 * width * (window * (window + 1) / 2 + (long - window) * window)
    assert attention_flops(gemma2, long) == pytest.approx(
        full_layers * per_layer_full + attention.windowed_layers * per_layer_windowed
    )


def test_weight_only_int8_reads_half_the_bytes_and_w8a8_also_runs_at_the_int8_peak():
    bf16 = operating_point(LLAMA_8B, V6E_1, Workload(engine="vllm", input_tokens=1, output_tokens=1000), 1)
    int8 = operating_point(
        LLAMA_8B, V6E_1, Workload(engine="vllm", input_tokens=1, output_tokens=1000, weight_dtype="int8"), 1
    )
    assert 1.8 < int8.output_tokens_per_second / bf16.output_tokens_per_second < 2.0  # KV reads stay bf16
    long_prompt = Workload(engine="vllm", input_tokens=8000, output_tokens=1000, weight_dtype="int8")
    weight_only = operating_point(LLAMA_8B, V6E_1, long_prompt, 1).ttft_ms
    w8a8 = operating_point(
        LLAMA_8B, V6E_1, long_prompt.__class__(**{**long_prompt.__dict__, "activation_dtype": "int8"}), 1
    )
    assert w8a8.ttft_ms < weight_only  # the prompt's matmuls at 1,836 TOPS, not 918 TFLOP/s


def test_more_sequences_raise_throughput_and_latency():
    workload = Workload(engine="vllm", input_tokens=1800, output_tokens=128)
    points = [operating_point(LLAMA_8B, V6E_1, workload, b) for b in (1, 8, 16, 32)]
    rates = [p.output_tokens_per_second for p in points]
    latencies = [p.ntpot_ms for p in points]
    assert rates == sorted(rates) and latencies == sorted(latencies)


def test_the_kv_cache_bounds_the_batch_and_jetstream_reserves_a_full_cache_per_slot():
    vllm = Workload(engine="vllm", input_tokens=1000, output_tokens=24, max_model_len=8192)
    jetstream = Workload(engine="jetstream", input_tokens=1000, output_tokens=24, max_model_len=8192)
    activations = 8192 * (4096 + 14336) * 2 * 2  # one 8k-token prefill step, as sizing counts it
    reserved = LLAMA_8B.params * 2 + 512 * 1024**2 + activations
    # paged: vLLM takes 92% of HBM (its default) and a sequence holds its prompt and half its output on average,
    # in tpu-inference's 256-token pages at an 8,192-token max model length (1,012 -> 1,024)
    vllm_free = V6E_1.hbm_bytes * 0.92 - reserved
    assert kv_capacity(LLAMA_8B, V6E_1, vllm) == pytest.approx(vllm_free // (KV_PER_TOKEN * 1024), abs=2)
    # per slot: JetStream reserves the whole cache length of every slot, in sizing's 90%
    free = V6E_1.hbm_bytes * 0.9 - reserved
    assert kv_capacity(LLAMA_8B, V6E_1, jetstream) == pytest.approx(free // (KV_PER_TOKEN * 8192), abs=1)
    chosen = choose(LLAMA_8B, V6E_1, jetstream, ntpot_ms=None, ttft_ms=None)
    assert chosen.limit == "kv-capacity" and chosen.point.batch == kv_capacity(LLAMA_8B, V6E_1, jetstream)


def test_the_cap_and_the_latency_limit_stop_the_batch():
    workload = Workload(engine="vllm", input_tokens=100, output_tokens=500)
    shape = slice_shape("v6e", "2x4")
    capped = choose(LLAMA_8B, shape, workload, ntpot_ms=None, ttft_ms=None, max_batch=16)
    assert capped.point.batch == 16 and capped.limit in ("hbm-bandwidth", "compute")
    limited = choose(LLAMA_8B, shape, workload, ntpot_ms=3, ttft_ms=None)
    assert limited.limit == "ntpot-target" and limited.point.ntpot_ms <= 3 and limited.point.batch > 1
    assert operating_point(LLAMA_8B, shape, workload, limited.point.batch + 1).ntpot_ms > 3
    slow_prefill = choose(
        LLAMA_8B, V6E_1, Workload(engine="vllm", input_tokens=8000, output_tokens=10), ntpot_ms=None, ttft_ms=20
    )
    assert slow_prefill.point is None and slow_prefill.limit == "ttft-target" and "TTFT" in slow_prefill.why


def test_a_large_batch_of_short_requests_is_compute_bound_in_decode():
    """Llama 3.1 8B on one v5p host (4 chips), 64 in / 256 out, 256 sequences: a decode step's 2 x params x batch
    FLOPs over the peak outlast its bytes over the bandwidth (v5p has the fewest FLOPs per byte of HBM bandwidth:
    459 TFLOP/s over 2,765 GB/s per chip, 166), so the step is the compute time and the compute bound binds.
    v5p has no published row: it borrows v6e's calibration (flagged)."""
    shape = slice_shape("v5p", "2x2x1")
    workload = Workload(engine="vllm", input_tokens=64, output_tokens=256)
    batch = 256
    v5p = generation("v5p")
    bandwidth = v5p.hbm_bandwidth_bytes_per_s * shape.chips
    compute = v5p.peak_bf16_flops * shape.chips * FIT.compute
    active = LLAMA_8B.architecture.active_params
    weights_time = LLAMA_8B.params * 2 / (bandwidth * FIT.weights)
    # a round: 256 decode tokens and 256 x 64 / 256 = 64 prompt tokens, 320 within one 512-token step, through the
    # linear layers: their matmuls outlast the weight read
    linear = 2 * active * (batch + 64) / compute
    assert linear > weights_time * 1.05  # compute-bound by a margin, not a tie
    kv = batch * KV_PER_TOKEN * (64 + 128) / (bandwidth * FIT.kv)
    step = linear + kv + batch / 256 * attention_flops(LLAMA_8B, 64) / compute
    point = operating_point(LLAMA_8B, shape, workload, batch)
    assert point.bound == "compute"
    assert point.output_tokens_per_second == pytest.approx(batch / step, rel=1e-9)
    assert point.input_tokens_per_second == pytest.approx(batch / step * 64 / 256, rel=1e-9)
    # TTFT: one chunk (64 tokens fit the 256 the step has left), half a step to the next, the step vLLM's async
    # scheduling (on by default) had queued ahead, and the queue of a prefill path 64 / 256 = 25% busy: the median
    # arrival waits for nothing
    assert point.ttft_ms == pytest.approx(2.5 * step * 1000, rel=1e-9)
    assert point.ntpot_ms == pytest.approx((2.5 * step + 255 * step) / 256 * 1000, rel=1e-9)
    # No latency limit: the engine's cap (256) stops the batch well inside the KV cache, and compute binds.
    chosen = choose(LLAMA_8B, shape, workload, ntpot_ms=None, ttft_ms=None)
    assert (chosen.point.batch, chosen.limit) == (batch, "compute")
    assert kv_capacity(LLAMA_8B, shape, workload) > batch


def test_a_target_that_is_an_exact_multiple_of_one_replica_needs_exactly_that_many():
    """ceil(target / per replica), with a tolerance for the float division's last bit, and at least one."""
    assert replicas_for(3000, 1000) == 3
    assert replicas_for(3000.5, 1000) == 4
    assert 2.1 / 0.3 > 7  # 7.000000000000001 in binary floating point: still 7 replicas, not 8
    assert replicas_for(2.1, 0.3) == 7
    assert replicas_for(10, 1000) == 1
    # Through the sizer: the GIQ fixture's busiest point serves 5,100 tok/s, so 10,200 tok/s take two replicas.
    profiles = read_profiles(Path(__file__).parent / "fixtures" / "giq_fetch_profiles.json")
    candidate = evaluate_slice(LLAMA_8B, V6E_1, TrafficTarget(output_tokens_per_second=10200), profiles=profiles)
    assert (candidate.basis, candidate.per_replica.output_tokens_per_second) == ("profile", 5100)
    assert candidate.replicas == 2 and candidate.price_per_hour == pytest.approx(
        2 * hourly_price("v6e", 1, "on-demand").usd_per_hour
    )
