"""traffic/model.py's numbers at the inputs that tell each rule apart (the survivors of `scripts/mutation.py` on the
module, issue 34 item 8), each expected value computed here from its published source, not from the module:

- the roofline step (docs/sizing-for-traffic.md, [SB] inference.md): the longer of one weight read over the slice's
  HBM bandwidth and the step's tokens' 2 x active-params FLOPs over its peak, plus each cached token's K and V over
  the bandwidth, plus the prompt chunks' causal attention over the peak; the catalogue's per-chip figures
  (catalog/tpu.py: v6e 918 TFLOP/s bf16 and 1,640 GB/s, [D-v6e]) and the engine's fitted efficiencies
  (catalog/engine_traffic.py, the JetStream record in jetstream/engine.py);
- causal attention's FLOPs, PaLM's count (Chowdhery et al. 2022, appendix B): 4 x width x (1 + 2 + ... + n) a layer;
- a vLLM request's wait before its first step: the rest of the step running (half at p50, all of it at p99) and
  the one step vLLM 0.29.0 had already scheduled, async scheduling being on by default at the pinned build (its
  batch queue of two; tests/traffic/test_async_scheduling_ttft.py derives it from the engine loop); JetStream's
  only the rest of the step;
- the M/D/1 queue's mean wait, Pollaczek-Khinchine's rho x S / (2 (1 - rho)), and its quantiles from the
  exponential tail P(W > t) ~ rho x exp(-t rho / mean) (Kingman's heavy-traffic form);
- the KV cache: 2 (K and V) x bytes x head_dim x kv_heads x layers per token ([SB] inference.md); HBM left for it:
  vLLM's 0.92 of HBM (`--gpu-memory-utilization`, ledger: vllm.default.gpu-memory-utilization), or sizing's 0.9,
  less the weights (params x 2 bytes in bf16) and sizing's overhead (512 MiB a chip and one prefill step's
  activations, at most 8,192 tokens x (d_model + d_ff) x 2 x 2 bytes: tpu_stacks.sizing).
"""

import math

import pytest

from tpu_stacks.catalog.engines.vllm import STACK_BATCHED_TOKENS
from tpu_stacks.catalog.models import custom_model, lookup_model
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.traffic.model import (
    MAX_BATCH,
    StepCost,
    Workload,
    _fed_batch,
    attention_flops,
    cached_token_bytes,
    calibration,
    choose,
    kv_capacity,
    kv_free_bytes,
    md1_wait,
    operating_point,
    page_tokens,
)

LLAMA_8B = lookup_model("meta-llama/Llama-3.1-8B")  # 32 layers, 8 KV heads of 128, 32 query heads, d 4096, d_ff 14336
V6E_1 = slice_shape("v6e", "1x1")
HBM = 32e9  # v6e: 32 GB a chip ([D-v6e])
KV_PER_TOKEN = 2 * 2 * 128 * 8 * 32  # K and V, bf16, head_dim 128, 8 KV heads, 32 layers
RUNTIME = 512 * 2**20  # sizing's runtime reserve a chip
VLLM_FRACTION = 0.92  # ledger: vllm.default.gpu-memory-utilization
FIT = calibration("vllm", "v6e")[0]
JETSTREAM_FIT = calibration("jetstream", "v6e")[0]  # v5e's, borrowed (flagged)
BUDGET = 512  # the vLLM stack's --max-num-batched-tokens default (vllm/spec.py), which its plan always passes;
# a server given none runs vLLM's own (tests/traffic/test_vllm_batched_tokens.py)


def activations(tokens: int) -> float:
    """One prefill step's activations as sizing counts them for Llama 3.1 8B (bf16, x2 for the MLP's input)."""
    return min(tokens, 8192) * (4096 + 14336) * 2 * 2


def vllm_free(context: int, fraction: float = VLLM_FRACTION) -> float:
    return HBM * fraction - LLAMA_8B.params * 2 - RUNTIME - activations(context)


def causal_flops(layers: int, width: int, tokens: int) -> float:
    return 4 * width * layers * tokens * (tokens + 1) / 2


def roofline_step(decoding, cached, prompt_tokens, prompt_flops, *, params, kv_per_token, fit, gen="v6e") -> float:
    """One chip's step by the roofline: the linear layers (weight read or matmuls), the KV read, prompt attention."""
    chip = generation(gen)
    bandwidth, peak = chip.hbm_bandwidth_bytes_per_s, chip.peak_bf16_flops * fit.compute
    linear = max(params * 2 / (bandwidth * fit.weights), (decoding + prompt_tokens) * 2 * params / peak)
    return linear + cached * kv_per_token / (bandwidth * fit.kv) + prompt_flops / peak


def llama_step(decoding, cached, prompt_tokens, prompt_flops) -> float:
    return roofline_step(
        decoding, cached, prompt_tokens, prompt_flops, params=LLAMA_8B.params, kv_per_token=KV_PER_TOKEN, fit=FIT
    )


def md1(rho: float, service: float, quantile: float | None) -> float:
    mean = rho * service / (2 * (1 - rho))
    if quantile is None:
        return mean
    return max(0.0, mean / rho * math.log(rho / (1 - quantile)))


# --- the M/D/1 wait -------------------------------------------------------------------------------------------------


def test_the_md1_wait_is_pollaczek_khinchines_mean_and_its_exponential_tail():
    """rho 0.5, service 2 s: mean 0.5 x 2 / (2 x 0.5) = 1 s; p99 = mean / rho x ln(rho / 0.01) = 2 ln 50; the median
    is 0 (half the arrivals find the path idle); an idle path, or a (meaningless) negative utilization, waits 0."""
    assert md1_wait(0.5, 2.0, None) == pytest.approx(1.0, rel=1e-12)
    assert md1_wait(0.5, 2.0, 0.99) == pytest.approx(2 * math.log(50), rel=1e-12)
    assert md1_wait(0.5, 2.0, 0.5) == 0.0
    assert md1_wait(0.9, 1.0, 0.5) == pytest.approx(0.9 / 0.2 / 0.9 * math.log(0.9 / 0.5), rel=1e-12)
    for rho in (0.0, -0.5):
        assert md1_wait(rho, 2.0, None) == 0.0
        assert md1_wait(rho, 2.0, 0.99) == 0.0
    assert md1_wait(1.0, 2.0, None) == math.inf


# --- the KV cache ---------------------------------------------------------------------------------------------------


def test_a_model_without_an_attention_shape_has_no_kv_to_bound_the_batch_and_no_attention_flops():
    """A custom model given by its parameter count only: sizing counts no KV cache (its note says so), so the cache
    does not bound the batch (the engine's cap, 256, does) and its prompts add no attention FLOPs."""
    bare = custom_model("my-org/bare", 8e9)
    assert bare.architecture.attention is None
    work = Workload(engine="vllm", input_tokens=512, output_tokens=256, batched_tokens=BUDGET)
    assert kv_capacity(bare, V6E_1, work) == MAX_BATCH == 256
    flops = attention_flops(bare, 4096)
    assert isinstance(flops, float) and flops == 0.0
    point = operating_point(bare, V6E_1, work, 1)
    assert point.output_tokens_per_second > 0


def test_a_sequence_of_one_byte_of_kv_still_divides_the_free_bytes():
    """One layer, one KV head of dimension 1, int4 KV (half a byte), one-token pages, one token a sequence: 2 x 0.5 x
    1 = 1 byte a sequence. The cap-only answer is for a model with no KV at all; here the free bytes divide."""
    tiny = custom_model("my-org/tiny", 1e9, layers=1, kv_heads=1, head_dim=1)
    work = Workload(
        engine="vllm", input_tokens=1, output_tokens=1, kv_dtype="int4", page_tokens=1, batched_tokens=BUDGET
    )
    free = HBM * VLLM_FRACTION - 1e9 * 2 - RUNTIME  # no d_model given: no activations counted
    assert kv_capacity(tiny, V6E_1, work) == int(free // 1) > 10**9


def test_weights_that_leave_no_room_give_no_sequences_not_a_negative_count():
    """Llama 3.1 70B in bf16 (141 GB of weights) on one 32 GB chip: the free bytes are negative, the capacity 0."""
    big = lookup_model("meta-llama/Llama-3.1-70B")
    assert (
        kv_capacity(big, V6E_1, Workload(engine="vllm", input_tokens=512, output_tokens=256, batched_tokens=BUDGET))
        == 0
    )


def test_a_paged_sequence_holds_its_prompt_and_half_its_output_in_whole_pages():
    """512 in / 256 out in 16-token pages: 512 + 128 = 640 tokens (40 pages), in vLLM's 0.92 of HBM less the weights
    and one 768-token prefill's activations."""
    work = Workload(engine="vllm", input_tokens=512, output_tokens=256, page_tokens=16, batched_tokens=BUDGET)
    assert kv_free_bytes(LLAMA_8B, V6E_1, work) == pytest.approx(vllm_free(768), rel=1e-12)
    assert kv_capacity(LLAMA_8B, V6E_1, work) == vllm_free(768) // (KV_PER_TOKEN * 640)


def test_the_prefill_activations_are_one_step_of_at_most_8192_tokens():
    """A 16,384-token max model length: sizing counts one prefill step of 8,192 tokens (its default step), not the
    whole context."""
    work = Workload(engine="vllm", input_tokens=512, output_tokens=256, max_model_len=16384, batched_tokens=BUDGET)
    free = HBM * VLLM_FRACTION - LLAMA_8B.params * 2 - RUNTIME - 8192 * (4096 + 14336) * 2 * 2
    assert kv_free_bytes(LLAMA_8B, V6E_1, work) == pytest.approx(free, rel=1e-12)


def test_a_one_token_sequence_reads_one_tokens_kv_per_cached_token():
    """1 in / 1 out: a decode step attends over 1 + 1 // 2 = 1 token, whose K and V are 131,072 bytes."""
    work = Workload(engine="vllm", input_tokens=1, output_tokens=1, batched_tokens=BUDGET)
    assert cached_token_bytes(LLAMA_8B, V6E_1, work) == KV_PER_TOKEN


def test_sglang_pages_one_token_at_a_time():
    """sglang-jax 0.0.1.post1 defaults to `page_size = 1` (ledger: sglang.default.page-size), which the stack keeps:
    550 tokens (500 in, half of 100 out) hold exactly 550 tokens of KV, in sizing's 90% of HBM (no memory fraction
    known)."""
    work = Workload(engine="sglang", input_tokens=500, output_tokens=100)
    assert page_tokens(work) == 1
    free = HBM * 0.9 - LLAMA_8B.params * 2 - RUNTIME - activations(600)
    assert kv_capacity(LLAMA_8B, V6E_1, work) == free // (KV_PER_TOKEN * 550)


def test_an_engine_without_a_page_rule_pages_in_16_tokens(monkeypatch: pytest.MonkeyPatch):
    """A paged engine whose record gives no page rule (a new engine's folder may not know it yet): the model's
    fallback of 16 tokens a page, so 550 tokens hold 35 pages, 560 tokens."""
    import dataclasses

    from tpu_stacks.traffic import model

    ruleless = dataclasses.replace(model.traffic_of("sglang"), page_tokens=None)
    monkeypatch.setattr(model, "traffic_of", lambda engine: ruleless)
    work = Workload(engine="sglang", input_tokens=500, output_tokens=100)
    assert page_tokens(work) == 16
    free = HBM * 0.9 - LLAMA_8B.params * 2 - RUNTIME - activations(600)
    assert kv_capacity(LLAMA_8B, V6E_1, work) == free // (KV_PER_TOKEN * 560)


# --- the step budget ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "inputs", "outputs", "fed"),
    [
        ("vllm", 1800, 128, 33),  # 512 / (1 + 1800 / 128) = 33.99
        ("vllm", 512, 256, 170),  # 512 / 3 = 170.7
        ("vllm", 8000, 10, 1),  # 512 / 801 = 0.64: one sequence still decodes
        ("jetstream", 1800, 128, None),  # prefills apart: no step budget
    ],
)
def test_the_fed_batch_is_the_budget_over_one_plus_input_over_output(engine, inputs, outputs, fed):
    assert STACK_BATCHED_TOKENS == BUDGET
    budget = BUDGET if engine == "vllm" else None  # the stack's, as its plan passes it
    assert (
        _fed_batch(Workload(engine=engine, input_tokens=inputs, output_tokens=outputs, batched_tokens=budget), "v6e")
        == fed
    )


def test_the_step_budget_binds_when_it_feeds_fewer_sequences_than_the_kv_cache_holds_under_the_cap():
    """1,800 in / 128 out: the cache holds 50 sequences (checked > 33), the cap 1,000 is no limit, and the budget
    feeds 33: the step budget binds, not the KV cache."""
    work = Workload(engine="vllm", input_tokens=1800, output_tokens=128, batched_tokens=BUDGET)
    assert 33 < kv_capacity(LLAMA_8B, V6E_1, work) <= 1000
    chosen = choose(LLAMA_8B, V6E_1, work, ntpot_ms=None, ttft_ms=None, max_batch=1000)
    assert (chosen.point.batch, chosen.limit) == (33, "step-budget")


# --- one operating point, by hand -------------------------------------------------------------------------------------


def test_a_fed_vllm_batch_by_hand_its_queue_its_p99_and_its_itl():
    """1,800 in / 128 out at 16 sequences: a step takes 16 decode tokens and 16 / 128 of a prompt (225 tokens), the
    KV of 16 sequences at 1,800 + 64 tokens each, and 1 / 8 of a prompt's attention; a prompt waits 4 chunks of
    512 - 16 = 496 tokens; the prefill path is 16 x 1800 / 128 / 496 = 45% busy, so the median arrival does not wait
    and the p99 one waits mean / rho x ln(rho / 0.01)."""
    work = Workload(engine="vllm", input_tokens=1800, output_tokens=128, batched_tokens=BUDGET)
    point = operating_point(LLAMA_8B, V6E_1, work, 16)
    prompts = 16 / 128
    step = llama_step(16, 16 * 1864, prompts * 1800, prompts * causal_flops(32, 4096, 1800))
    service = 4 * step
    rho = 16 * 1800 / 128 / 496
    assert point.itl_ms == pytest.approx(step * 1000, rel=1e-9)
    assert point.output_tokens_per_second == pytest.approx(16 / step, rel=1e-9)
    assert point.ttft_ms == pytest.approx((service + 1.5 * step) * 1000, rel=1e-9)
    p99 = service + 2 * step + md1(rho, service, 0.99)
    assert md1(rho, service, 0.99) > step  # the queue is most of the p99
    assert point.ttft_p99_ms == pytest.approx(p99 * 1000, rel=1e-9)
    assert point.ntpot_ms == pytest.approx((service + 1.5 * step + 127 * step) / 128 * 1000, rel=1e-9)
    assert point.bound == "hbm-bandwidth"


def test_a_starved_vllm_batch_waits_in_a_95_percent_busy_queue():
    """64 sequences asked, 512 / (1 + 1800 / 128) = 33.99 fed: the prefill path is taken as 95% busy (a finite wait),
    the chunks are 512 - 33.99 = 478 tokens (4 a prompt)."""
    work = Workload(engine="vllm", input_tokens=1800, output_tokens=128, batched_tokens=BUDGET)
    point = operating_point(LLAMA_8B, V6E_1, work, 64)
    decoding = 512 / (1 + 1800 / 128)
    prompts = decoding / 128
    step = llama_step(decoding, decoding * 1864, prompts * 1800, prompts * causal_flops(32, 4096, 1800))
    service = 4 * step
    assert math.ceil(1800 / (512 - decoding)) == 4
    assert point.output_tokens_per_second == pytest.approx(decoding / step, rel=1e-9)
    assert point.ttft_ms == pytest.approx((service + 1.5 * step + md1(0.95, service, 0.5)) * 1000, rel=1e-9)
    assert point.ttft_p99_ms == pytest.approx((service + 2 * step + md1(0.95, service, 0.99)) * 1000, rel=1e-9)


def test_a_step_always_has_room_for_one_prompt_token():
    """1 in / 1000 out at 600 sequences: 512 / 1.001 = 511.49 decode, leaving half a token; the 1-token prompt still
    takes one step (not two half-token chunks)."""
    work = Workload(engine="vllm", input_tokens=1, output_tokens=1000, batched_tokens=BUDGET)
    point = operating_point(LLAMA_8B, V6E_1, work, 600)
    decoding = 512 / 1.001
    prompts = decoding / 1000
    step = llama_step(decoding, decoding * 501, prompts * 1, prompts * causal_flops(32, 4096, 1))
    assert point.ttft_ms == pytest.approx((step + 1.5 * step + md1(0.95, step, 0.5)) * 1000, rel=1e-9)


def test_a_step_with_one_token_of_room_is_a_busy_prefill_path():
    """A 4-token step budget, 1 in / 4 out, 3 sequences (4 / 1.25 = 3.2 fed): one token of room a step, asked for
    3 x 1 / 4 = 0.75 prompt tokens a step: 75% busy, so the median arrival waits."""
    work = Workload(engine="vllm", input_tokens=1, output_tokens=4, batched_tokens=4)
    point = operating_point(LLAMA_8B, V6E_1, work, 3)
    prompts = 3 / 4
    step = llama_step(3, 3 * (1 + 2), prompts, prompts * causal_flops(32, 4096, 1))
    assert md1(0.75, step, 0.5) > 0
    assert point.ttft_ms == pytest.approx((step + 1.5 * step + md1(0.75, step, 0.5)) * 1000, rel=1e-9)


def test_the_prompt_tokens_of_a_step_count_toward_the_compute_bound():
    """v6e's ridge for a dense bf16 model with the vLLM fit (equal efficiencies): 918e12 / 1640e9 = 560 tokens a step.
    A 2,048-token budget, 1000 in / 1000 out, 400 sequences: 400 decode tokens alone are under it, with the 400
    prompt tokens the step takes beside them (400 / 1000 prompts of 1,000 tokens) over it: compute-bound."""
    assert FIT.weights == FIT.compute
    ridge = generation("v6e").peak_bf16_flops / generation("v6e").hbm_bandwidth_bytes_per_s
    assert 400 < ridge < 800
    work = Workload(engine="vllm", input_tokens=1000, output_tokens=1000, batched_tokens=2048)
    assert operating_point(LLAMA_8B, V6E_1, work, 400).bound == "compute"


def test_a_per_slot_engine_by_hand_a_prefill_pass_between_decode_steps():
    """JetStream (no step budget), a 1,000-parameter model (one layer, one KV head of 1: 4 bytes of KV a token, so
    one FLOP or one cached token shows in the times), 100 in / 2 out, 128-token slots, 8 sequences: a decode step
    reads the weights and 8 full slots; each prompt's prefill pass runs apart, its 100 tokens' matmuls and causal
    attention and no KV read; ITL = step + 8 / 2 x prefill; the prefill path is busy 8 / 2 x prefill / ITL."""
    tiny = custom_model("my-org/tiny", 1000, layers=1, kv_heads=1, head_dim=1)
    work = Workload(engine="jetstream", input_tokens=100, output_tokens=2, max_model_len=128)
    point = operating_point(tiny, V6E_1, work, 8)

    def step_of(decoding, cached, prompt_tokens, prompt_flops):
        return roofline_step(
            decoding, cached, prompt_tokens, prompt_flops, params=1000, kv_per_token=4, fit=JETSTREAM_FIT
        )

    step = step_of(8, 8 * 128, 0, 0)
    prefill = step_of(0, 0, 100, causal_flops(1, 1, 100))
    one_flop = 1 / (generation("v6e").peak_bf16_flops * JETSTREAM_FIT.compute)
    assert one_flop / step > 1e-7  # a FLOP more in the decode step would show at the tolerance below
    itl = step + 8 / 2 * prefill
    rho = 8 / 2 * prefill / itl
    assert 0.5 < rho < 0.95
    assert point.itl_ms == pytest.approx(itl * 1000, rel=1e-9)
    assert point.output_tokens_per_second == pytest.approx(8 / itl, rel=1e-9)
    assert point.ttft_ms == pytest.approx((prefill + step / 2 + md1(rho, prefill, 0.5)) * 1000, rel=1e-9)
    assert point.ttft_p99_ms == pytest.approx((prefill + step + md1(rho, prefill, 0.99)) * 1000, rel=1e-9)
    assert point.bound == "hbm-bandwidth"


def test_a_per_slot_engines_bound_turns_at_the_ridge():
    """JetStream on v6e with v5e's fit (weights 0.67, compute 0.27): a decode step's matmuls outlast its weight
    read past 918e12 x 0.27 / (1640e9 x 0.67) = 225.6 sequences."""
    ridge = (
        generation("v6e").peak_bf16_flops
        * JETSTREAM_FIT.compute
        / (generation("v6e").hbm_bandwidth_bytes_per_s * JETSTREAM_FIT.weights)
    )
    assert 225 < ridge < 226
    work = Workload(engine="jetstream", input_tokens=64, output_tokens=64, max_model_len=128)
    assert operating_point(LLAMA_8B, V6E_1, work, 225).bound == "hbm-bandwidth"
    assert operating_point(LLAMA_8B, V6E_1, work, 226).bound == "compute"


def test_a_step_whose_matmuls_tie_the_weight_read_is_bandwidth_bound():
    """The bound is compute only when the tokens' matmuls outlast the weight read: a tie (4 x 0.25 s = 1 s) is not;
    prompt tokens count with the decoding ones (2 + 3 tokens: 1.25 s)."""
    cost = StepCost(weights=1.0, per_token=0.25, per_cached_token=0.0, per_flop=0.0, cached_token_bytes=0.0)
    assert not cost.compute_bound(4, 0)
    assert cost.compute_bound(2, 3)
    assert not cost.compute_bound(2, 1)


# --- choose's edges -------------------------------------------------------------------------------------------------

WORK = Workload(engine="vllm", input_tokens=512, output_tokens=256, page_tokens=16, batched_tokens=BUDGET)


@pytest.mark.parametrize(("room", "batch"), [(1.5, 1), (0.5, None)])
def test_a_memory_fraction_with_room_for_one_sequence_gives_batch_one_and_less_gives_none(room, batch):
    """`--gpu-memory-utilization` set so the KV cache has room for 1.5 or 0.5 sequences (640 tokens each, 16-token
    pages): one sequence, bound by the KV cache; or no sequence, refused with the KV cache named."""
    fraction = (LLAMA_8B.params * 2 + RUNTIME + activations(768) + room * KV_PER_TOKEN * 640) / HBM
    work = Workload(
        engine="vllm",
        input_tokens=512,
        output_tokens=256,
        page_tokens=16,
        memory_fraction=fraction,
        batched_tokens=BUDGET,
    )
    assert kv_capacity(LLAMA_8B, V6E_1, work) == (batch or 0)
    chosen = choose(LLAMA_8B, V6E_1, work, ntpot_ms=None, ttft_ms=None)
    if batch:
        assert (chosen.point.batch, chosen.limit) == (1, "kv-capacity")
    else:
        assert chosen == type(chosen)(None, "kv-capacity", "no KV cache room for one sequence beside the weights")


def test_a_limit_just_under_batch_ones_own_latency_is_refused_and_equal_to_it_accepted():
    one = operating_point(LLAMA_8B, V6E_1, WORK, 1)
    limit = one.ntpot_ms * (1 - 1e-9)
    refused = choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=limit, ttft_ms=None)
    assert (refused.point, refused.limit) == (None, "ntpot-target")
    assert refused.why == f"misses the latency limit even at batch 1: NTPOT {one.ntpot_ms:.1f} ms > {limit:g} ms"
    accepted = choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=one.ntpot_ms, ttft_ms=None, max_batch=1)
    assert accepted.point.batch == 1


def test_batch_one_missing_ntpot_with_ttft_exactly_at_its_limit_names_ntpot():
    one = operating_point(LLAMA_8B, V6E_1, WORK, 1)
    refused = choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=one.ntpot_ms / 2, ttft_ms=one.ttft_ms)
    assert (refused.point, refused.limit) == (None, "ntpot-target")


def test_the_limit_named_is_the_one_the_next_batch_breaks():
    """NTPOT limited at batch 10's, TTFT at batch 11's (so 11 meets TTFT exactly and breaks NTPOT; 12 would break
    both): batch 10, stopped by NTPOT."""
    at = {b: operating_point(LLAMA_8B, V6E_1, WORK, b) for b in (10, 11, 12)}
    assert at[10].ntpot_ms < at[11].ntpot_ms and at[11].ttft_ms < at[12].ttft_ms
    chosen = choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=at[10].ntpot_ms, ttft_ms=at[11].ttft_ms)
    assert (chosen.point.batch, chosen.limit) == (10, "ntpot-target")


def test_a_cap_below_one_still_decodes_one_sequence():
    """Batch 1 is the floor (it met the limits above): a cap of 0 must not give a point of batch 0, whose rate of 0
    replicas_for would divide by."""
    chosen = choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=None, ttft_ms=None, max_batch=0)
    assert chosen.point.batch == 1 and chosen.point.output_tokens_per_second > 0


def test_the_bisection_finds_the_largest_batch_under_each_limit_batch_by_batch():
    """For a limit at each batch's own NTPOT, the choice is that batch, every one up to the cap: a bisection that
    stepped past a failing middle by more than one would land one short where the answer sits just below it."""
    cap = 48
    ntpot = {b: operating_point(LLAMA_8B, V6E_1, WORK, b).ntpot_ms for b in range(1, cap + 2)}
    assert all(ntpot[b] < ntpot[b + 1] for b in range(1, cap + 1))  # strictly rising: one answer per limit
    chosen = {
        b: choose(LLAMA_8B, V6E_1, WORK, ntpot_ms=ntpot[b], ttft_ms=None, max_batch=cap).point.batch for b in ntpot
    }
    assert chosen == {b: min(b, cap) for b in ntpot}
