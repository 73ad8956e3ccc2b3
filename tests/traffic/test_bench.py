"""The benchmark replay (traffic/bench.py): a closed-loop client's run, step by step, under the model's step cost."""

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.traffic.bench import Client, _schedule, lengths, replay
from tpu_stacks.traffic.model import Workload, kv_capacity, operating_point

MODEL = lookup_model("meta-llama/Llama-3.1-8B")
SHAPE = slice_shape("v6e", "1x1")
WORK = Workload(engine="vllm", input_tokens=1000, output_tokens=500, max_model_len=2048, batched_tokens=2048)


def test_lengths_spread_evenly_around_their_centre():
    spread = lengths(922, 0.8, 1000, 0.5)
    assert min(spread) >= 819 and max(spread) <= 1025
    assert sum(spread) / len(spread) == pytest.approx(922, rel=0.01)
    assert lengths(1000, 1.0, 5, 0.5) == [1000] * 5


def test_a_long_closed_loop_run_approaches_the_steady_state():
    run = replay(MODEL, SHAPE, WORK, Client(prompts=2000, concurrency=16))
    steady = operating_point(MODEL, SHAPE, WORK, 16)
    assert run.output_tokens_per_second == pytest.approx(steady.output_tokens_per_second, rel=0.1)
    assert run.mean_batch == pytest.approx(16, rel=0.1)


def test_prompts_sent_at_once_pay_for_their_prefill_wall():
    burst = replay(MODEL, SHAPE, WORK, Client(prompts=32, concurrency=None))
    steady = operating_point(MODEL, SHAPE, WORK, 32)
    assert burst.output_tokens_per_second < steady.output_tokens_per_second
    # the last prompt waits for every prompt before it (32 x 1,000 tokens at ~2,000 a step): TTFT grows with the
    # queue, far above the steady state's
    assert burst.ttft_p99_ms > 1.5 * burst.ttft_p50_ms
    assert burst.ttft_p50_ms > 5 * steady.ttft_ms


def test_more_sequences_than_the_cache_holds_are_preempted_and_the_run_still_ends():
    long = Workload(engine="vllm", input_tokens=1000, output_tokens=4000, max_model_len=8192, batched_tokens=2048)
    capacity = kv_capacity(MODEL, SHAPE, long)
    run = replay(MODEL, SHAPE, long, Client(prompts=3 * capacity, concurrency=None))
    assert run.output_tokens_per_second > 0
    assert run.mean_batch < 1.5 * capacity


def test_a_prompt_is_admitted_only_with_a_chunk_of_the_step_budget():
    """vLLM 0.29.0 admits a waiting prompt only while the step's token budget has room, and schedules a chunk of it at
    once (ledger: vllm.scheduler.admit-with-budget): 32 prompts of 1,000 tokens sent at once at a budget of 2,048 are
    two whole prompts and part of a third per step, never all 32 admitted and waiting for their turn."""
    run = _schedule(MODEL, SHAPE, WORK, Client(prompts=32, concurrency=None))
    assert run.most_prefilling == 3


def test_the_newest_request_is_preempted_first_even_mid_prefill():
    """vLLM's running list holds a prompt still prefilling as its newest request, and preempts the newest first
    (ledger: vllm.scheduler.running-includes-prefill, vllm.scheduler.preempt-newest): with prompts several steps long
    and a cache the decoding sequences outgrow, prompts mid-prefill are preempted, not only decoding sequences."""
    tight = Workload(engine="vllm", input_tokens=2000, output_tokens=6000, max_model_len=8192, batched_tokens=128)
    capacity = kv_capacity(MODEL, SHAPE, tight)
    run = _schedule(MODEL, SHAPE, tight, Client(prompts=3 * capacity, concurrency=None))
    assert run.preempted_prefills > 0
    assert run.preempted_decodes > 0


def test_a_request_larger_than_the_cache_is_refused():
    huge = Workload(engine="vllm", input_tokens=500_000, output_tokens=10, batched_tokens=2048)
    with pytest.raises(ValueError, match="does not fit the KV cache"):
        replay(MODEL, SHAPE, huge, Client(prompts=2, concurrency=None))
