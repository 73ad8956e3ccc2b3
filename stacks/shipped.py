"""The stacks this repository ships, listed once, and every stack file a checkout has.

Two sets, on purpose. Every `Pulumi.<stack>.yaml` (`stack_files`: the shipped ones and any a user adds, say
`Pulumi.mine.yaml`) is planned and checked like any stack: schemas, the policy pack, the connectivity contract,
the plan's own monitoring check, and CI previews each. The tables that describe stacks by hand (the README's list,
docs/first-deploy.md, the generated diagrams and budgets, the expected alerts, the benchmarks) cover `SHIPPED`
only, so a stack a user adds never fails a test that asks for a row nobody should write. The README's table of
stacks is checked against this list (tests/stacks/test_shipped_list.py).
"""

from __future__ import annotations

from pathlib import Path

SHIPPED: tuple[str, ...] = (
    "cluster",
    "dev",
    "jetstream-gemma",
    "jetstream-llama3",
    "raytrain",
    "raytrain-multislice",
    "saxml",
    "saxml-s3ns",
    "sglang",
    "vllm",
    "vllm-405b",
    "vllm-fallback",
    "vllm-gateway",
)


def stack_files(root: Path) -> tuple[str, ...]:
    """Every stack of the project in `root`, by its `Pulumi.<stack>.yaml`, sorted."""
    return tuple(sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in root.glob("Pulumi.*.yaml")))
