"""The roofline by hand: a decode step is the bytes read over the bandwidth, a prefill the FLOPs over the peak,
both at the engine's efficiency; the batch grows until the KV cache, the cap or a latency limit stops it."""

from pathlib import Path

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, read_profiles
from tpu_stacks.traffic.model import (
    ENGINE_EFFICIENCY,
    Workload,
    attention_flops,
    choose,
    kv_capacity,
    operating_point,
    replicas_for,
)
from tpu_stacks.traffic.pricing import hourly_price

LLAMA_8B = lookup_model("meta-llama/Llama-3.1-8B")
V6E_1 = slice_shape("v6e", "1x1")
KV_PER_TOKEN = 2 * 2 * 128 * 8 * 32  # K and V, bf16, head_dim 128, 8 KV heads, 32 layers


def test_a_decode_heavy_step_is_weights_and_kv_over_the_bandwidth():
    # One input token, many output tokens: the prefill share vanishes and the step is the bytes read.
    workload = Workload(engine="vllm", input_tokens=1, output_tokens=1000)
    point = operating_point(LLAMA_8B, V6E_1, workload, 1)
    bandwidth = generation("v6e").hbm_bandwidth_bytes_per_s * ENGINE_EFFICIENCY["vllm"]
    step = (LLAMA_8B.params * 2 + KV_PER_TOKEN * (1 + 500)) / bandwidth
    prefill = LLAMA_8B.params * 2 / bandwidth  # one token: bound by reading the weights once
    itl = step + prefill / 1000
    assert point.output_tokens_per_second == pytest.approx(1 / itl, rel=1e-6)
    assert point.bound == "hbm-bandwidth"


def test_a_prefill_is_flops_over_the_peak():
    workload = Workload(engine="vllm", input_tokens=4000, output_tokens=1)
    point = operating_point(LLAMA_8B, V6E_1, workload, 1)
    compute = generation("v6e").peak_bf16_flops * ENGINE_EFFICIENCY["vllm"]
    attention = LLAMA_8B.architecture.attention
    width = attention.query_heads * attention.head_dim  # 32 x 128
    # Causal: token i attends to i keys; QK^T and AV are 2 x keys x width multiply-adds: 4 x width x keys FLOPs.
    causal = 4 * width * attention.layers * sum(range(1, 4001))
    prefill = (2 * LLAMA_8B.architecture.active_params * 4000 + causal) / compute
    step = (LLAMA_8B.params * 2 + KV_PER_TOKEN * 4000) / (
        generation("v6e").hbm_bandwidth_bytes_per_s * ENGINE_EFFICIENCY["vllm"]
    )
    assert point.ttft_ms == pytest.approx((prefill + step) * 1000, rel=1e-6)
    assert point.bound == "compute"


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


def test_int8_weights_use_the_int8_peak_and_read_half_the_bytes():
    bf16 = operating_point(LLAMA_8B, V6E_1, Workload(engine="vllm", input_tokens=1, output_tokens=1000), 1)
    int8 = operating_point(
        LLAMA_8B, V6E_1, Workload(engine="vllm", input_tokens=1, output_tokens=1000, weight_dtype="int8"), 1
    )
    assert 1.8 < int8.output_tokens_per_second / bf16.output_tokens_per_second < 2.0  # KV reads stay bf16
    long_prompt = Workload(engine="vllm", input_tokens=8000, output_tokens=1)
    assert operating_point(
        LLAMA_8B, V6E_1, long_prompt.__class__(**{**long_prompt.__dict__, "weight_dtype": "int8"}), 1
    ).ttft_ms < (operating_point(LLAMA_8B, V6E_1, long_prompt, 1).ttft_ms)


def test_more_sequences_raise_throughput_and_latency():
    workload = Workload(engine="vllm", input_tokens=1800, output_tokens=128)
    points = [operating_point(LLAMA_8B, V6E_1, workload, b) for b in (1, 8, 32, 64)]
    rates = [p.output_tokens_per_second for p in points]
    latencies = [p.ntpot_ms for p in points]
    assert rates == sorted(rates) and latencies == sorted(latencies)


def test_the_kv_cache_bounds_the_batch_and_jetstream_reserves_a_full_cache_per_slot():
    vllm = Workload(engine="vllm", input_tokens=1000, output_tokens=24, max_model_len=8192)
    jetstream = Workload(engine="jetstream", input_tokens=1000, output_tokens=24, max_model_len=8192)
    activations = 8192 * (4096 + 14336) * 2 * 2  # one 8k-token prefill step, as sizing counts it
    free = V6E_1.hbm_bytes * 0.9 - LLAMA_8B.params * 2 - 512 * 1024**2 - activations
    assert kv_capacity(LLAMA_8B, V6E_1, vllm) == pytest.approx(free // (KV_PER_TOKEN * 1024), abs=2)
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
    459 TFLOP/s over 2,765 GB/s per chip, 166), so the step is the compute time and the compute bound binds."""
    shape = slice_shape("v5p", "2x2x1")
    workload = Workload(engine="vllm", input_tokens=64, output_tokens=256)
    batch = 256
    v5p = generation("v5p")
    efficiency = ENGINE_EFFICIENCY["vllm"]
    bandwidth = v5p.hbm_bandwidth_bytes_per_s * shape.chips * efficiency
    compute = v5p.peak_bf16_flops * shape.chips * efficiency
    weights = LLAMA_8B.params * 2
    active = LLAMA_8B.architecture.active_params
    memory_time = (weights + batch * KV_PER_TOKEN * (64 + 256 // 2)) / bandwidth
    compute_time = 2 * active * batch / compute
    assert compute_time > memory_time * 1.05  # compute-bound by a margin, not a tie
    attention = LLAMA_8B.architecture.attention
    causal = 4 * attention.query_heads * attention.head_dim * attention.layers * sum(range(1, 65))
    prefill = max((2 * active * 64 + causal) / compute, weights / bandwidth)
    prefill_per_step = batch / 256 * prefill
    assert compute_time > prefill_per_step  # the decode step, not the prefills, sets the bound
    itl = compute_time + prefill_per_step
    point = operating_point(LLAMA_8B, shape, workload, batch)
    assert point.bound == "compute"
    assert point.output_tokens_per_second == pytest.approx(batch / itl, rel=1e-9)
    assert point.input_tokens_per_second == pytest.approx(batch / itl * 64 / 256, rel=1e-9)
    assert point.ttft_ms == pytest.approx((prefill + compute_time) * 1000, rel=1e-9)
    assert point.ntpot_ms == pytest.approx((prefill + compute_time + 255 * itl) / 256 * 1000, rel=1e-9)
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
