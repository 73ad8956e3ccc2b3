"""When a closed-loop client's next request reaches vLLM's scheduler (traffic/bench.py `send`), against vLLM's engine loop.

vLLM's engine core takes the requests that have arrived, then runs a step, in turn (ledger: vllm.engine.busy-loop).
A benchmark client sends its next request when a step's output ends an earlier one; by then the engine has scheduled
the step after it: the request waits one step, or two under `--async-scheduling`, whose batch queue holds two steps
(ledger: vllm.engine.batch-queue, vllm.engine.async-batches). An idle engine (nothing else running) takes it at once.
Each request here prefills in one step and every step reads the same weights, so TTFT counts whole steps.
"""

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.traffic.bench import Client, replay
from tpu_stacks.traffic.model import Workload, step_cost

MODEL = lookup_model("meta-llama/Llama-3.1-8B")
SHAPE = slice_shape("v6e", "1x1")


def _work(async_scheduling: bool) -> Workload:
    return Workload(
        engine="vllm",
        input_tokens=100,
        output_tokens=200,
        max_model_len=2048,
        batched_tokens=2048,
        async_scheduling=async_scheduling,
    )


def _steps(ttft_ms: float, work: Workload) -> float:
    """TTFT in engine steps of about one weight read (8 short sequences add little KV to it)."""
    return ttft_ms / 1000 / step_cost(MODEL, SHAPE, work).weights


@pytest.mark.parametrize(("async_scheduling", "waited"), [(False, 1), (True, 2)])
def test_a_request_sent_while_others_run_waits_for_the_steps_already_scheduled(async_scheduling, waited) -> None:
    work = _work(async_scheduling)
    run = replay(MODEL, SHAPE, work, Client(prompts=200, concurrency=8))
    # the median request is a refill: the steps already scheduled, then its own prefill step
    assert _steps(run.ttft_p50_ms, work) == pytest.approx(waited + 1, abs=0.3)


@pytest.mark.parametrize("async_scheduling", [False, True])
def test_an_idle_engine_takes_the_next_request_at_once(async_scheduling) -> None:
    work = _work(async_scheduling)
    run = replay(MODEL, SHAPE, work, Client(prompts=20, concurrency=1))
    assert _steps(run.ttft_p99_ms, work) == pytest.approx(1, abs=0.1)


def test_the_wait_costs_the_closed_loop_little_throughput() -> None:
    """A refill's two-step wait is a small part of a 200-step request: the run's rate barely moves."""
    sync = replay(MODEL, SHAPE, _work(False), Client(prompts=200, concurrency=8))
    pipelined = replay(MODEL, SHAPE, _work(True), Client(prompts=200, concurrency=8))
    assert pipelined.output_tokens_per_second < sync.output_tokens_per_second
    assert pipelined.output_tokens_per_second == pytest.approx(sync.output_tokens_per_second, rel=0.02)
