"""The performance model against every published row it is fitted on: its prediction, error and leave-one-out.

Why a module: docs/sizing-for-traffic.md shows this table, and tests/traffic/test_calibration.py checks the
doc holds exactly what `markdown_table()` prints today (regenerate with
`python -m tpu_stacks.traffic.calibration`), so the stated errors cannot drift from the model.

In-sample error: the row under its calibration as catalog/engine_traffic.py holds it. Leave-one-out: the row
under its calibration refitted without it (tpu_stacks.traffic.fit), the honest estimate of the error on a row
the fit has not seen; a calibration fitted on one row has none.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass

from tpu_stacks.catalog.engine_traffic import TRAFFIC, Calibration
from tpu_stacks.catalog.throughput_measurements import Measurement
from tpu_stacks.traffic.fit import fit_all, leave_one_out, predict, rows_of

__all__ = ["Check", "checks", "fit_all", "markdown_table"]


@dataclass(frozen=True)
class Check:
    engine: str
    calibration: Calibration
    row: Measurement
    batch: int
    predicted: float
    left_out: float | None

    @property
    def error(self) -> float:
        """(predicted - measured) / measured."""
        return self.predicted / self.row.output_tokens_per_second - 1

    @property
    def loo_error(self) -> float | None:
        return None if self.left_out is None else self.left_out / self.row.output_tokens_per_second - 1


def checks() -> list[Check]:
    found = []
    for engine, traffic in TRAFFIC.items():
        for calibration in traffic.calibrations:
            for row in rows_of(calibration):
                batch, predicted = predict(row, calibration)
                found.append(Check(engine, calibration, row, batch, predicted, leave_one_out(calibration, row)))
    return found


def _dtype(row: Measurement) -> str:
    weights = f"W8A8 {row.weight_dtype}" if row.activation_dtype else row.weight_dtype
    return f"{weights}, KV {row.kv_dtype}"


def markdown_table() -> str:
    lines = [
        "| Engine | Generation | Implementation the rows ran | Build the rows measured | Weights | KV | Compute |"
        " Rows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for engine, traffic in TRAFFIC.items():
        for c in traffic.calibrations:
            lines.append(
                f"| {engine} | {c.generation} | {c.implementation or 'the only one'} | {c.build} | {c.weights:.2f} |"
                f" {c.kv:.2f} | {c.compute:.2f} | {len(c.rows)} |"
            )
        for lent, lender in traffic.borrowed:
            lines.append(f"| {engine} | {lent} | | borrows {lender}'s fit (flagged in every figure) | | | | 0 |")
    lines += [
        "",
        "| Row | Build | Model | Slice | Dtypes | In/out tokens | Batch | Measured out tok/s | Modelled |"
        " Error | Leave-one-out error | Source |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    all_checks = checks()
    for c in all_checks:
        row = c.row
        if row.prompts is not None:
            sent = f"at concurrency {row.concurrency}" if row.concurrency else "at once"
            batch = f"{c.batch} (replay's mean; {row.prompts} prompts {sent})"
        elif row.batch is not None:
            batch = f"{c.batch}"
        else:
            batch = f"{c.batch} (modelled; cap {row.batch_cap})"
        loo = "n/a (only row)" if c.loo_error is None else f"{c.loo_error:+.0%}"
        lines.append(
            f"| {row.id} | {row.engine_build} | {row.model} | {row.generation} {row.topology} ({row.chips} chips)"
            f" | {_dtype(row)} | {row.input_tokens}/{row.output_tokens} | {batch} |"
            f" {row.output_tokens_per_second:,.0f} | {c.predicted:,.0f} | {c.error:+.0%} | {loo} | <{row.source}> |"
        )
    loo = [abs(c.loo_error) for c in all_checks if c.loo_error is not None]
    insample = [abs(c.error) for c in all_checks]
    lines += [
        "",
        f"In sample: median |error| {statistics.median(insample):.0%}, largest {max(insample):.0%} over"
        f" {len(insample)} rows. Leave-one-out: median |error| {statistics.median(loo):.0%}, largest"
        f" {max(loo):.0%} over the {len(loo)} rows whose calibration has another row.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
