"""The steady state's TTFT under vLLM's async scheduling, against vLLM 0.29.0's engine loop and config defaults.

Source: vllm-tpu 0.29.0 (the pinned build). The engine core's busy loop takes the requests that have arrived, then
steps (ledger: vllm.engine.busy-loop); with a batch queue (vllm/v1/engine/core.py step_with_batch_queue) it schedules
a step and, while the queue is not full, returns without waiting, else it blocks on the oldest step's output (ledger:
vllm.engine.batch-queue). The queue holds max_concurrent_batches steps (ledger: vllm.engine.batch-queue-size): two
under async scheduling with pipeline parallel 1 (ledger: vllm.engine.async-batches), which vLLM turns on when the
server's arguments leave it unset and the executor supports it (ledger: vllm.async-scheduling.unset,
vllm.async-scheduling.default-on, vllm.async-scheduling.executor-at-decision; single host: vllm.executor.default-mp,
vllm.executor.default-uni, vllm.executor.mp-async, vllm.executor.uni-async; Ray Serve LLM: ray.serve-llm.executor-ray,
vllm.executor.ray-v2-default, vllm.executor.ray-v2-class, vllm.executor.ray-v2-async; tpu-inference's own executors
keep it: tpu-inference.executor.single-host-uni, tpu-inference.executor.ray-v2-async; what turns it off, none of which
the stacks set: vllm.async-scheduling.pooling-off, vllm.async-scheduling.speculative-off,
vllm.async-scheduling.executor-off; tpu-inference's executor swap comes after: vllm.async-scheduling.platform-after).

The expected waits are not the model's formula: `_loop_waits` runs that loop (schedule while the queue has room, else
block on the oldest step; the device runs the scheduled steps back to back, one time unit each) for requests arriving
at evenly spread moments, and reads the wait from each arrival to the start of the step that first carries it.
"""

from collections import deque

import pytest

from tpu_stacks.catalog.engine_traffic import traffic_of
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.catalog.upstream import number
from tpu_stacks.traffic import TrafficTarget, evaluate_slice
from tpu_stacks.traffic.bench import Client, replay
from tpu_stacks.traffic.model import Workload, operating_point

MODEL = lookup_model("meta-llama/Llama-3.1-8B")
SHAPE = slice_shape("v6e", "1x1")


def _loop_waits(queue_size: int, arrivals: int = 1000, span: int = 20) -> list[float]:
    """Waits (in steps) of `arrivals` requests spread evenly over `span` steps of a busy engine whose batch queue holds
    `queue_size` steps: vLLM's run_busy_loop with step (queue 1) or step_with_batch_queue."""
    times = sorted(5 + (i + 0.5) / arrivals * span for i in range(arrivals))
    queue: deque[float] = deque()  # the start of each scheduled step, oldest on the right
    now = device_free = 0.0
    taken = 0
    waits: list[float] = []
    while taken < arrivals:
        # _process_input_queue: every request that has arrived joins the scheduler
        arrived = [t for t in times[taken:] if t <= now]
        taken += len(arrived)
        # schedule a step (the engine is busy: there is always work); it runs once the device is free
        start = max(now, device_free)
        device_free = start + 1
        queue.appendleft(start)
        waits += [start - t for t in arrived]
        if len(queue) < queue_size:
            continue  # the queue has room: schedule again without waiting
        now = max(now, queue.pop() + 1)  # block until the oldest step's output
    return sorted(waits)


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


@pytest.mark.parametrize(("queue_size", "p50", "p99"), [(1, 0.5, 0.99), (2, 1.5, 1.99)])
def test_the_loop_waits_half_a_step_then_the_steps_already_queued(queue_size, p50, p99) -> None:
    """The simulation itself: a request waits out the step running, uniform over a step, then the queued ones."""
    waits = _loop_waits(queue_size)
    assert _quantile(waits, 0.5) == pytest.approx(p50, abs=0.01)
    assert _quantile(waits, 0.99) == pytest.approx(p99, abs=0.01)


def _point(async_scheduling: bool | None, batch: int = 1):
    """A 1-token prompt beside long outputs: it prefills in one step and its prefill path is all but idle (no M/D/1
    wait at p50 or p99), so TTFT = its own step + the wait before it."""
    work = Workload(
        engine="vllm",
        input_tokens=1,
        output_tokens=1000,
        max_model_len=2048,
        batched_tokens=512,
        async_scheduling=async_scheduling,
    )
    return operating_point(MODEL, SHAPE, work, batch)


@pytest.mark.parametrize(("async_scheduling", "queue_size"), [(False, 1), (True, 2), (None, 2)])
def test_steady_state_ttft_waits_as_the_engine_loop(async_scheduling, queue_size) -> None:
    """p50 and p99 of the wait before a request's first step, as the loop simulation gives them for the engine's
    batch queue; unset (None) is vLLM 0.29.0's default, async scheduling on. The model's p99 takes the whole step
    running (1 where the loop gives 0.99)."""
    point = _point(async_scheduling)
    step = point.itl_ms
    waits = _loop_waits(queue_size)
    assert point.ttft_ms / step - 1 == pytest.approx(_quantile(waits, 0.5), abs=0.01)
    assert point.ttft_p99_ms / step - 1 == pytest.approx(_quantile(waits, 0.99), abs=0.02)


def test_async_scheduling_moves_ttft_only() -> None:
    """Throughput and the step are the engine's steps, not when a request joins them: only TTFT (and NTPOT through
    it) moves, by one step at p50 and p99."""
    sync, pipelined = _point(False, batch=64), _point(True, batch=64)
    assert pipelined.output_tokens_per_second == sync.output_tokens_per_second
    assert pipelined.itl_ms == sync.itl_ms
    assert pipelined.ttft_ms - sync.ttft_ms == pytest.approx(sync.itl_ms, rel=1e-9)
    assert pipelined.ttft_p99_ms - sync.ttft_p99_ms == pytest.approx(sync.itl_ms, rel=1e-9)
    assert pipelined.ntpot_ms - sync.ntpot_ms == pytest.approx(sync.itl_ms / 1000, rel=1e-9)


def test_the_engine_records_say_which_engine_queues_ahead() -> None:
    """vLLM's record: a queue of vLLM's two under async scheduling, on unless the server says otherwise; an engine
    without the mode (JetStream) schedules one step at a time whatever a workload says."""
    vllm = traffic_of("vllm")
    assert vllm.async_batches == number("vllm.engine.async-batches") == 2
    assert [vllm.steps_in_flight(given) for given in (None, True, False)] == [2, 2, 1]
    jetstream = traffic_of("jetstream")
    assert [jetstream.steps_in_flight(given) for given in (None, True, False)] == [1, 1, 1]


def test_the_replay_reads_the_same_default() -> None:
    """A benchmark replay of a server given no flag refills like one given `--async-scheduling` (one rule)."""
    work = {"engine": "vllm", "input_tokens": 100, "output_tokens": 200, "max_model_len": 2048, "batched_tokens": 2048}
    client = Client(prompts=200, concurrency=8)
    unset = replay(MODEL, SHAPE, Workload(**work), client)
    given = replay(MODEL, SHAPE, Workload(**work, async_scheduling=True), client)
    sync = replay(MODEL, SHAPE, Workload(**work, async_scheduling=False), client)
    assert unset.ttft_p50_ms == given.ttft_p50_ms
    assert unset.ttft_p50_ms > sync.ttft_p50_ms


def test_sizing_predicts_the_stacks_servers_with_the_pinned_default() -> None:
    """`size`, the slo plans and the pack (evaluate_slice) describe a server the stacks start: no async flag given,
    so vLLM 0.29.0's default (on) holds and the predicted TTFT waits the queued step (no published row of the pinned
    build on this slice: the figure is the model's at the chosen batch)."""
    target = TrafficTarget(output_tokens_per_second=1000, input_tokens=1000, output_tokens=200)
    candidate = evaluate_slice(MODEL, SHAPE, target, max_model_len=2048, batched_tokens=512, max_batch=128)
    assert candidate.basis == "model"
    per = candidate.per_replica
    work = {"engine": "vllm", "input_tokens": 1000, "output_tokens": 200, "max_model_len": 2048, "batched_tokens": 512}
    pipelined = operating_point(MODEL, SHAPE, Workload(**work, max_num_seqs=128, async_scheduling=True), per.batch)
    sync = operating_point(MODEL, SHAPE, Workload(**work, max_num_seqs=128, async_scheduling=False), per.batch)
    assert per.ttft_ms == pytest.approx(pipelined.ttft_ms, rel=1e-9)
    assert per.ttft_p99_ms == pytest.approx(pipelined.ttft_p99_ms, rel=1e-9)
    assert per.ttft_ms - sync.ttft_ms == pytest.approx(sync.itl_ms, rel=1e-9)
