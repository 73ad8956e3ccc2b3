"""SglangSpec's inputs: each bounded input at its edges (the edge accepted, one past it refused with the line a user
sees) and the defaults the SDK documents (`sglang/args.py`: "Default: 4096", "Default: 1", "Default: 40").

`memFractionStatic` is a share of HBM (SGLang's `--mem-fraction-static`, its default the ledger's
`sglang.default.mem-fraction-static` row): the spec takes it above 0 and below 1 (all of HBM would leave none for
activations), and these tests pin the line a user sees at each side."""

from __future__ import annotations

import pytest

from tests.spec_edges import Edge, check_edge, refusal
from tpu_stacks.inputs.validation import parse
from tpu_stacks.sglang.spec import SglangSpec

BASE = {"model": "Qwen/Qwen3-8B"}


@pytest.mark.parametrize(
    "edge",
    [
        Edge("contextLength", 0, above=True),
        Edge("maxRunningRequests", 0, above=True),
        Edge("replicas", 1, 64),  # LARGEST_REPLICAS (inputs/field_rules.py)
        Edge("startupMinutes", 5, 240),
    ],
    ids=lambda edge: edge.key,
)
def test_each_bounded_input_at_its_edges(edge: Edge) -> None:
    check_edge(SglangSpec, "sglang", BASE, edge)


@pytest.mark.parametrize("fraction", [0.01, 0.5, 0.99])
def test_a_memory_fraction_inside_zero_and_one_is_accepted(fraction: float) -> None:
    assert parse(SglangSpec, {**BASE, "memFractionStatic": fraction}, "sglang").mem_fraction_static == fraction


@pytest.mark.parametrize(
    ("fraction", "sentence"),
    [(0, "greater than 0"), (1, "less than 1"), (1.5, "less than 1"), (-0.5, "greater than 0")],
)
def test_a_memory_fraction_outside_is_refused(fraction: float, sentence: str) -> None:
    assert refusal(SglangSpec, "sglang", {**BASE, "memFractionStatic": fraction}) == (
        f"sglang.memFractionStatic: {fraction} is not accepted; input should be {sentence}"
    )


def test_the_defaults_are_the_documented_ones() -> None:
    """sglang/args.py, the SDK's field descriptions: `contextLength` 4096, `replicas` 1, `startupMinutes` 40;
    `maxRunningRequests` unset (SGLang's own: what the KV pool holds)."""
    spec = SglangSpec(**BASE)
    assert (spec.context_length, spec.replicas, spec.startup_minutes, spec.max_running_requests) == (4096, 1, 40, None)
