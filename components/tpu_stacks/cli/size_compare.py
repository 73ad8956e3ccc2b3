"""`tpu-stacks size MODEL` without `--tpu`: the smallest slice that holds the model on every generation, side by side.

Why: which generation to run on is the question a user brings; naming one first (`--tpu`) answered a narrower one.
`--tpu` narrows the answer to one generation's full candidate table (cli/size.py); with a traffic target the
generations are compared by cost instead (cli/size_traffic.py).
"""

from __future__ import annotations

import argparse
import json
from copy import copy

from tpu_stacks.catalog.tpu import GENERATIONS
from tpu_stacks.sizing import SizingResult, gib


def _row(result: SizingResult) -> dict[str, object]:
    found = result.recommended
    if found is None:
        largest = result.candidates[-1]
        return {
            "generation": result.generation,
            "recommended": None,
            "why": f"fits no slice: needs {gib(largest.memory.total_bytes)}, the largest"
            f" ({largest.shape.topology}) has {gib(largest.usable_bytes)} usable",
        }
    return {"generation": result.generation, "recommended": found.as_dict(), "why": ""}


def run(args: argparse.Namespace, compute) -> int:  # noqa: ANN001 - cli/size.py's compute(args)
    """Every generation's smallest fitting slice (one `compute` per generation, as `--tpu GEN` would)."""
    results = []
    for gen in GENERATIONS:
        narrowed = copy(args)
        narrowed.tpu = gen.name
        results.append(compute(narrowed))
    first = results[0]
    if args.json:
        print(
            json.dumps(
                {"model": first.model.id, "workload": first.workload, "generations": [_row(r) for r in results]},
                indent=2,
            )
        )
        return 0
    lines = [
        f"{first.model.id}: {first.model.params_text}, {first.workload}; the smallest slice on every"
        " generation (--tpu GEN shows one generation's candidates)",
        "",
        f"  {'gen':<6} {'topology':<10} {'machine type':<20} {'chips':>5} {'needs':>11} {'usable HBM':>11}"
        f" {'$/hour':>8}",
    ]
    for result in results:
        found = result.recommended
        if found is None:
            lines.append(f"  {result.generation:<6} {_row(result)['why']}")
            continue
        price = f"{found.shape.hourly_usd:.2f}" if found.shape.hourly_usd is not None else "n/a"
        lines.append(
            f"  {result.generation:<6} {found.shape.topology:<10} {found.shape.machine_type:<20}"
            f" {found.shape.chips:>5} {gib(found.memory.total_bytes):>11} {gib(found.usable_bytes):>11} {price:>8}"
        )
    print("\n".join(lines))
    return 0
