"""The performance model against every published measurement: its prediction, its error, and the fit.

Why a module: docs/sizing-for-traffic.md shows this table, and tests/traffic/test_calibration.py checks the
doc holds exactly what `markdown_table()` prints today (regenerate with
`python -m tpu_stacks.traffic.calibration`), so the stated errors cannot drift from the model.

The model's only fitted number is each engine's efficiency (tpu_stacks.traffic.model.ENGINE_EFFICIENCY).
Every modelled time scales with 1 / efficiency, so a prediction scales with it, and the least-squares fit
in log error is the efficiency that makes the geometric mean of predicted / measured equal to 1.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, Measurement
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.traffic.model import ENGINE_EFFICIENCY, MAX_BATCH, Workload, choose, operating_point


@dataclass(frozen=True)
class Check:
    row: Measurement
    batch: int
    predicted: float

    @property
    def error(self) -> float:
        """(predicted - measured) / measured."""
        return self.predicted / self.row.output_tokens_per_second - 1


def workload_of(row: Measurement) -> Workload:
    return Workload(
        engine=row.engine,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        weight_dtype=row.weight_dtype,
        kv_dtype=row.kv_dtype,
        max_model_len=row.max_model_len,
    )


def check(row: Measurement) -> Check:
    """The model's output tokens/s for the row's slice, request shape and batch (or the batch the model's
    KV capacity gives under the row's cap, when the engine's scheduler chose it)."""
    model = lookup_model(row.model)
    shape = slice_shape(row.generation, row.topology)
    workload = workload_of(row)
    batch = row.batch
    if batch is None:
        chosen = choose(model, shape, workload, ntpot_ms=None, ttft_ms=None, max_batch=row.batch_cap or MAX_BATCH)
        assert chosen.point is not None, f"{row.model} does not fit {row.generation} {row.topology}"
        batch = chosen.point.batch
    return Check(
        row=row, batch=batch, predicted=operating_point(model, shape, workload, batch).output_tokens_per_second
    )


def checks() -> list[Check]:
    return [check(row) for row in MEASUREMENTS]


def fitted_efficiency(engine: str) -> float:
    """The efficiency that makes the engine's predictions right on (geometric) average."""
    errors = [math.log(c.predicted / c.row.output_tokens_per_second) for c in checks() if c.row.engine == engine]
    return ENGINE_EFFICIENCY[engine] / math.exp(sum(errors) / len(errors))


def markdown_table() -> str:
    lines = [
        "| Engine (build) | Measures a pinned build | Model | Slice | Dtype | Input/output tokens | Batch |"
        " Measured out tok/s | Modelled out tok/s | Error | Source |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in checks():
        row = c.row
        batch = f"{c.batch}" if row.batch is not None else f"{c.batch} (modelled; cap {row.batch_cap})"
        lines.append(
            f"| {row.engine} ({row.engine_build}) | {row.engine_version or 'no'}"
            f" | {row.model} | {row.generation} {row.topology} ({row.chips} chips)"
            f" | {row.weight_dtype} | {row.input_tokens}/{row.output_tokens} | {batch} |"
            f" {row.output_tokens_per_second:,.0f} | {c.predicted:,.0f} | {c.error:+.0%} | <{row.source}> |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
