"""A published benchmark run replayed step by step: what a client that sends N prompts at a fixed concurrency measures.

Why: the steady state of tpu_stacks.traffic.model is what a replica does under an open, even load. A published
row is a closed-loop benchmark (vLLM's `bench serve`, InferenceX's `benchmark_serving.py`): N prompts, at most C in
flight, a new one sent as soon as one finishes (request rate inf). When C is N every prompt arrives at once: the run
starts with a wall of prefill, drains with a shrinking batch, and its output tokens over its duration are not the
steady state's. Fitting and judging the model on such rows needs the run itself; sizing a stack does not (it keeps
the steady state).

The replay uses the model's own step cost (model.StepCost): each step decodes one token of every running sequence
and fills the rest of `max_num_batched_tokens` with prompt chunks, first come first served (vLLM's chunked prefill).
As vLLM 0.29.0's scheduler does: a waiting prompt is admitted only while the step's budget has room, and gets its
first chunk at once, while fewer than `max_num_seqs` run and its whole prompt fits the free pages (ledger:
vllm.scheduler.admit-with-budget, vllm.scheduler.reserve-full-prompt); an admitted prompt joins the running list as
its newest request, still prefilling (ledger: vllm.scheduler.running-includes-prefill); when the cache cannot take a
running request's next tokens, the newest request is preempted (a prompt still prefilling before any decoding
sequence, the prompt itself when its own chunk does not fit) and later recomputes its prompt and the tokens it had
produced; a step that preempted admits no waiting prompt (ledger: vllm.scheduler.preempt-newest,
vllm.scheduler.preempt-self, vllm.scheduler.no-waiting-after-preempt).
A request the client sends when an earlier one ends reaches the scheduler after the steps vLLM's engine loop had
already scheduled: one, or two under async scheduling (`send`, model.steps_in_flight: the server's flag, else the
build's default; ledger: vllm.engine.busy-loop, vllm.engine.batch-queue, vllm.engine.async-batches); the engine loop
does not read the clock either. Steps with no prompt ready are advanced in one jump to the next sequence's end (the
cached tokens grow linearly over it). Request lengths: uniform in [ratio x L, L] (the client's
`--random-range-ratio`), spread evenly over the prompts by a golden-ratio sequence, input and output independently.

No decision of the scheduler reads the clock (admission, chunks, preemption and ends follow tokens, pages and the
step budget), so the run's schedule is computed once per (model, slice, workload, client) and only timed under
each calibration: the fit tries hundreds of them per row (tpu_stacks.traffic.fit).
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from operator import sub

from tpu_stacks.catalog.engine_traffic import Calibration
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.traffic.model import (
    MAX_BATCH,
    Workload,
    attention_flops,
    cached_token_bytes,
    kv_free_bytes,
    page_tokens,
    step_budget,
    step_cost,
    steps_in_flight,
)

GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class Client:
    """How the benchmark sent its requests."""

    prompts: int
    concurrency: int | None
    """At most this many requests in flight (`--max-concurrency`); None: every prompt at once."""
    length_ratio: float = 1.0
    """Lengths uniform in [ratio x L, L] around the workload's mean lengths (1.0: every request the same)."""


@dataclass(frozen=True)
class Replay:
    output_tokens_per_second: float
    ttft_p50_ms: float
    ttft_p99_ms: float
    mean_batch: float
    """Sequences decoding per step, on average over the run's steps."""


def lengths(mean: int, ratio: float, count: int, phase: float) -> list[int]:
    """`count` lengths uniform in [ratio x L, L] whose centre is `mean`, spread evenly."""
    top = 2 * mean / (1 + ratio)
    return [max(1, round(top * (ratio + (1 - ratio) * ((phase + i * GOLDEN) % 1)))) for i in range(count)]


@dataclass(frozen=True)
class _Schedule:
    """The run as the scheduler steps it, without its times.

    Why apart: admission, chunking, preemption and ends follow tokens, pages and the step budget, never the clock,
    so no efficiency changes them; the fit tries hundreds of calibrations on the same row and only re-times this
    (`replay`), and tpu_stacks.traffic.fit's search costs one schedule per row, not one per calibration."""

    stretches: tuple[tuple[int, float, float, int], ...]
    """Per stretch of steps, in the run's order: (tokens through the linear layers per step, cached tokens read over
    the stretch, prompt attention FLOPs, steps). A step that prefills is a stretch of one; the decode-only steps up
    to the next event are one stretch (their cached tokens summed)."""
    sent: tuple[int, ...]
    """Per request, in the order their first tokens came: stretches done when it was sent ..."""
    first: tuple[int, ...]
    """... and stretches done at its first token."""
    produced: int
    total_steps: int
    batch_steps: float
    preempted_prefills: int = 0
    """Preemptions of a prompt still prefilling (the newest of vLLM's running list) ..."""
    preempted_decodes: int = 0
    """... and of a decoding sequence (only when no prompt was prefilling)."""
    most_prefilling: int = 0
    """The most prompts admitted and not yet prefilled at once (vLLM admits one only with a token of the step's budget
    for it)."""


def replay(
    model: ResolvedModel,
    shape: SliceShape,
    workload: Workload,
    client: Client,
    fit: Calibration | None = None,
) -> Replay:
    """The benchmark's output tokens/s and TTFT percentiles under the model's step cost."""
    cost = step_cost(model, shape, workload, fit=fit)
    run = _schedule(model, shape, workload, client)
    times = cost.elapsed(run.stretches)
    ttfts = sorted(map(sub, map(times.__getitem__, run.first), map(times.__getitem__, run.sent)))
    return Replay(
        output_tokens_per_second=run.produced / times[-1],
        ttft_p50_ms=statistics.median(ttfts) * 1000,
        ttft_p99_ms=ttfts[min(len(ttfts) - 1, math.ceil(0.99 * len(ttfts)) - 1)] * 1000,
        mean_batch=run.batch_steps / max(1, run.total_steps),
    )


@lru_cache(maxsize=256)
def _schedule(model: ResolvedModel, shape: SliceShape, workload: Workload, client: Client) -> _Schedule:
    """The run's steps under vLLM's scheduler (the module's docstring), counted in stretches."""
    budget = step_budget(workload, shape.generation)
    assert budget is not None, "a replay needs a chunking engine (max_num_batched_tokens)"
    waste = page_tokens(workload) / 2  # a sequence's last page is half full on average
    free = kv_free_bytes(model, shape, workload) / cached_token_bytes(model, shape, workload)
    max_seqs = workload.max_num_seqs or MAX_BATCH
    prompt = lengths(workload.input_tokens, client.length_ratio, client.prompts, 0.5)
    left = lengths(workload.output_tokens, client.length_ratio, client.prompts, 0.25)
    if max(p + o for p, o in zip(prompt, left, strict=True)) + waste > free:
        raise ValueError("one request does not fit the KV cache")
    sent_at = [0] * client.prompts
    ready = [0] * client.prompts  # the first step that can schedule the request
    in_flight = steps_in_flight(workload)
    first = [True] * client.prompts
    started = [0] * client.prompts

    step, sent, produced, batch_steps = 0, 0, 0, 0.0
    preempted_prefills = preempted_decodes = most_prefilling = 0
    stretches: list[tuple[int, float, float, int]] = []
    first_tokens: list[tuple[int, int]] = []
    queue: deque[int] = deque()
    # vLLM's running list, in admission order: the decoding sequences, then the prompts still prefilling (a prompt is
    # admitted only when the budget is left after every earlier one's chunk, so none prefilling is older than a
    # decoding one)
    prefilling: list[list[int]] = []  # [request, prompt tokens done]
    running: list[int] = []  # decoding, in the order they started
    ending: list[tuple[int, int]] = []  # heap of (last step, request); stale entries skipped
    cached_base = 0.0  # sum over decoding sequences of (tokens at start - step it started)
    prefilled = 0  # prompt tokens done by the sequences still prefilling

    def send() -> None:
        """The client's next request, sent when the step that ended an earlier one has returned its tokens. vLLM's
        engine loop schedules the next step as soon as it has a step's output, before the client can answer, so
        while other requests run the new one waits for the steps already scheduled: one, or two under
        `--async-scheduling` (its batch queue holds two; ledger: vllm.engine.busy-loop, vllm.engine.batch-queue,
        vllm.engine.async-batches). An idle engine takes it at once."""
        nonlocal sent
        if sent < client.prompts:
            sent_at[sent] = len(stretches)
            ready[sent] = step + 1 + in_flight
            queue.append(sent)
            sent += 1

    def used(at: int) -> float:
        cached = cached_base + len(running) * at
        return cached + prefilled + (len(running) + len(prefilling)) * waste

    def stop(request: int) -> None:
        nonlocal cached_base
        running.remove(request)
        cached_base -= prompt[request] - started[request]

    def preempt() -> int:
        """vLLM's recompute preemption of the newest request of its running list (a prompt still prefilling before
        any decoding sequence): it gives its pages back and goes first in the waiting queue, to prefill again its
        prompt and the tokens it had produced. Returns the request."""
        nonlocal prefilled, preempted_prefills, preempted_decodes
        if prefilling:
            request, done = prefilling.pop()
            prefilled -= done
            preempted_prefills += 1
        else:
            request = running[-1]
            made = step - started[request]
            stop(request)
            prompt[request] += made
            left[request] -= made
            preempted_decodes += 1
        queue.appendleft(request)
        return request

    room, tokens, attention = 0, 0, 0.0  # this step's: budget left, prompt tokens, prompt attention FLOPs
    done_now: list[list[int]] = []  # prompts whose last chunk is this step's

    def chunk(entry: list[int]) -> None:
        """The entry's next chunk, as much of its prompt as the step's budget has room for."""
        nonlocal room, tokens, attention, prefilled
        request, done = entry
        take = min(prompt[request] - done, room)
        attention += attention_flops(model, done + take) - attention_flops(model, done)
        tokens += take
        room -= take
        entry[1] = done + take
        prefilled += take
        if entry[1] >= prompt[request]:
            done_now.append(entry)

    for _ in range(min(client.prompts, client.concurrency or client.prompts)):
        send()
    while queue or prefilling or running:
        preempted = False
        while (running or prefilling) and used(step + 1) > free:  # the decoding sequences' next token
            preempt()
            preempted = True
        room = budget - len(running)
        tokens, attention = 0, 0.0
        done_now.clear()
        for entry in list(prefilling):
            if room <= 0:
                break
            if entry not in prefilling:  # preempted for an earlier prompt's chunk
                break
            request = entry[0]
            take = min(prompt[request] - entry[1], room)
            # a chunk that does not fit preempts the newest request, this prompt itself when it is the newest
            while entry in prefilling and used(step + 1) + take > free:
                preempt()
                preempted = True
            if entry in prefilling:
                chunk(entry)
        # vLLM schedules no waiting request in a step that preempted; one is admitted while the step's budget has
        # room, fewer than `max_num_seqs` run and its whole prompt fits the free pages, and gets a chunk at once
        while (
            not preempted
            and queue
            and (ready[queue[0]] <= step + 1 or not (running or prefilling))  # an idle engine takes it at once
            and room > 0
            and len(running) + len(prefilling) < max_seqs
            and used(step + 1) + prompt[queue[0]] + waste <= free
        ):
            entry = [queue.popleft(), 0]
            prefilling.append(entry)
            chunk(entry)
        most_prefilling = max(most_prefilling, len(prefilling))
        if tokens:
            step += 1
            stretches.append((len(running) + tokens, cached_base + len(running) * step, attention, 1))
            produced += len(running)
            batch_steps += len(running)
            for entry in done_now:
                prefilling.remove(entry)
                request = entry[0]
                prefilled -= entry[1]
                if first[request]:
                    first_tokens.append((sent_at[request], len(stretches)))
                    first[request] = False
                produced += 1
                left[request] -= 1
                if left[request] > 0:
                    started[request] = step
                    running.append(request)
                    cached_base += prompt[request] - step
                    heapq.heappush(ending, (step + left[request], request))
                else:
                    send()
        elif running:
            # decode-only steps up to the next sequence's end or the step the cache fills, in one stretch (one step
            # after a preemption, when the waiting queue may be admitted again)
            while ending and (
                ending[0][1] not in running or ending[0][0] != started[ending[0][1]] + left[ending[0][1]]
            ):
                heapq.heappop(ending)
            last = ending[0][0]
            space = free - used(step)
            last = min(last, step + max(1, int(space // len(running))))
            if preempted and queue:
                last = step + 1
            elif queue and ready[queue[0]] > step + 1:  # the next request reaches the scheduler then
                last = min(last, ready[queue[0]] - 1)
            jump = last - step
            steps_sum = jump * step + jump * (jump + 1) / 2  # steps step+1 .. last
            stretches.append((len(running), jump * cached_base + len(running) * steps_sum, 0.0, jump))
            produced += len(running) * jump
            batch_steps += len(running) * jump
            step = last
        elif not prefilling and not preempted:
            raise ValueError("requests wait but none can be admitted")
        while ending and ending[0][0] <= step:
            _, request = heapq.heappop(ending)
            if request in running and started[request] + left[request] == step:
                stop(request)
                send()
    sent_at_first, first_at = (tuple(column) for column in zip(*first_tokens, strict=True))
    return _Schedule(
        tuple(stretches),
        sent_at_first,
        first_at,
        produced,
        step,
        batch_steps,
        preempted_prefills,
        preempted_decodes,
        most_prefilling,
    )
