"""Fitting each (engine build, generation, model implementation) calibration to its rows, and leave-one-out.

Why its own module: the efficiencies in catalog/engine_traffic.py are constants, so a review can read them;
this module recomputes them from the rows of tpu_stacks.catalog.throughput_measurements (the only data it
reads), and tests/traffic/test_calibration.py fails when the constants drift from what it computes.

The fit: three efficiencies (weights, kv, compute; tpu_stacks.traffic.model) minimise the sum of squared log
errors over the calibration's rows, plus a ridge that pulls the three logs towards their mean (weight
`RIDGE`): with one or two rows the three are not all identifiable, and the ridge makes the answer the single
common efficiency that fits; with rows that vary in batch, context and prompt length the data pull them apart.
Coordinate descent in log efficiency from 0.03 to 1, each coordinate by golden-section search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache

from tpu_stacks.catalog.engine_traffic import TRAFFIC, Calibration
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, Measurement, row_model
from tpu_stacks.catalog.tpu import SliceShape, slice_shape
from tpu_stacks.traffic.bench import Client, replay
from tpu_stacks.traffic.model import MAX_BATCH, Workload, choose, operating_point

RIDGE = 0.05
LOWEST = 0.03
"""The smallest efficiency the fit considers (of 1, the roofline)."""
SWEEPS = 3


NOT_BINDING = 10**7
"""The step budget of a chunking engine's row whose source does not give `--max-num-batched-tokens`: modelled as
not binding (a whole prompt fits one step) rather than at a default of another build."""


def _budget(row: Measurement) -> int | None:
    if row.batched_tokens is not None or TRAFFIC[row.engine].default_batched_tokens is None:
        return row.batched_tokens
    return NOT_BINDING


def workload_of(row: Measurement) -> Workload:
    return Workload(
        engine=row.engine,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        weight_dtype=row.weight_dtype,
        kv_dtype=row.kv_dtype,
        max_model_len=row.max_model_len,
        activation_dtype=row.activation_dtype,
        batched_tokens=_budget(row),
        memory_fraction=row.memory_fraction,
        page_tokens=row.page_tokens,
        max_num_seqs=row.batch_cap,
        async_scheduling=row.async_scheduling,
    )


@cache
def _setup(row: Measurement) -> tuple[ResolvedModel, SliceShape, Workload]:
    """The row's model, slice and workload (pure in the row: the fit asks for them at every calibration it tries)."""
    return row_model(row), slice_shape(row.generation, row.topology), workload_of(row)


def predict(row: Measurement, fit: Calibration) -> tuple[int, float]:
    """(batch, modelled output tokens/s) for the row under `fit`: the benchmark replayed when the row gives its
    client (the batch is then the run's mean), else the steady state at the row's batch, or the batch the KV cache
    holds under the row's cap when the engine's scheduler chose it."""
    model, shape, workload = _setup(row)
    if row.prompts is not None and workload.batched_tokens is not None:
        # a closed-loop benchmark of a chunking engine: replayed as the client ran it (tpu_stacks.traffic.bench)
        run = replay(model, shape, workload, Client(row.prompts, row.concurrency, row.length_ratio), fit=fit)
        return round(run.mean_batch), run.output_tokens_per_second
    batch = row.batch
    if batch is None:
        chosen = choose(
            model, shape, workload, ntpot_ms=None, ttft_ms=None, max_batch=row.batch_cap or MAX_BATCH, fit=fit
        )
        assert chosen.point is not None, f"{row.id}: {chosen.why}"
        batch = chosen.point.batch
    return batch, operating_point(model, shape, workload, batch, fit=fit).output_tokens_per_second


def _loss(rows: Sequence[Measurement], fit: Calibration) -> float:
    errors = sum(math.log(predict(row, fit)[1] / row.output_tokens_per_second) ** 2 for row in rows)
    logs = [math.log(fit.weights), math.log(fit.kv), math.log(fit.compute)]
    mean = sum(logs) / 3
    return errors + RIDGE * sum((value - mean) ** 2 for value in logs)


def _golden(loss: Callable[[float], float], low: float, high: float) -> float:
    """The log-efficiency in [low, high] that minimises `loss` (golden-section search, to 0.2% in efficiency)."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = loss(c), loss(d)
    while b - a > 0.002:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = loss(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = loss(d)
    return (a + b) / 2


def fit_rows(start: Calibration, rows: Sequence[Measurement]) -> Calibration:
    """The efficiencies that fit `rows` best (rounded to two digits, as the catalogue keeps them): the best single
    common efficiency first, then each of the three in turn, SWEEPS times."""
    return _fitted(start, tuple(rows))


@cache
def _fitted(start: Calibration, rows: tuple[Measurement, ...]) -> Calibration:
    """fit_rows, once per process for the same calibration and rows (a pure function of frozen inputs): the
    calibration table, its tests and the doc check ask for the same fits and leave-one-outs."""
    low, high = math.log(LOWEST), 0.0
    common = math.exp(
        _golden(
            lambda e: _loss(rows, replace(start, weights=math.exp(e), kv=math.exp(e), compute=math.exp(e))), low, high
        )
    )
    best = replace(start, weights=common, kv=common, compute=common)
    for _ in range(SWEEPS):
        for name in ("weights", "kv", "compute"):
            value = _golden(lambda e, n=name, b=best: _loss(rows, replace(b, **{n: math.exp(e)})), low, high)
            best = replace(best, **{name: math.exp(value)})
    return replace(best, weights=round(best.weights, 2), kv=round(best.kv, 2), compute=round(best.compute, 2))


def rows_of(calibration: Calibration) -> list[Measurement]:
    by_id = {row.id: row for row in MEASUREMENTS}
    return [by_id[name] for name in calibration.rows]


def fit_all() -> dict[tuple[str, str, str | None], Calibration]:
    """Every calibration of every engine, refitted on its rows, by (engine, generation, model implementation)."""
    return {
        (engine, calibration.generation, calibration.implementation): fit_rows(calibration, rows_of(calibration))
        for engine, traffic in TRAFFIC.items()
        for calibration in traffic.calibrations
    }


def leave_one_out(calibration: Calibration, row: Measurement) -> float | None:
    """The row's modelled output tokens/s when its calibration is fitted without it (None: it is the only row)."""
    others = [other for other in rows_of(calibration) if other.id != row.id]
    if not others:
        return None
    return predict(row, fit_rows(calibration, others))[1]
