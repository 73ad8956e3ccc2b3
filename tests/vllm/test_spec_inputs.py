"""VllmSpec's inputs: each default as docs/vllm.md's inputs table states it, each bounded input at its edges (the
edge accepted, one past it refused with the line a user sees), and the renamed KV-cache metric refused with its new
name.

Outside source: vLLM renamed `vllm:gpu_cache_usage_perc` to `vllm:kv_cache_usage_perc` in 0.9 (the engine
catalogue's rename row, catalog/engines/vllm.py; docs/vllm.md's table of differences from the tutorial)."""

from __future__ import annotations

import pytest

from tests.spec_edges import Edge, check_edge, refusal
from tpu_stacks.inputs.validation import parse
from tpu_stacks.vllm.spec import VllmSpec

BASE = {"model": "meta-llama/Llama-3.1-8B"}


@pytest.mark.parametrize(
    "edge",
    [
        Edge("replicas.min", 1),
        Edge("replicas.max", 1, 64),  # LARGEST_REPLICAS (inputs/field_rules.py)
        Edge("autoscaling.target", 0, above=True),
        Edge("maxModelLen", 0, above=True),
        Edge("maxNumBatchedTokens", 0, above=True),
        Edge("maxNumSeqs", 0, above=True),
        Edge("startupMinutes", 5, 240),
    ],
    ids=lambda edge: edge.key,
)
def test_each_bounded_input_at_its_edges(edge: Edge) -> None:
    check_edge(VllmSpec, "vllm", BASE, edge)


def test_an_objectives_priority_at_its_edges() -> None:
    """`gateway.objectives[i].priority`: -1000..1000 (below 0 is sheddable; docs/vllm.md, Priorities)."""

    def objective(priority: int) -> dict:
        return {**BASE, "gateway": {"objectives": [{"name": "chat", "priority": priority}]}}

    for value in (-1000, 1000):
        parse(VllmSpec, objective(value), "vllm")
    key = "vllm.gateway.objectives[0].priority"
    assert refusal(VllmSpec, "vllm", objective(-1001)) == (
        f"{key}: -1001 is not accepted; input should be greater than or equal to -1000"
    )
    assert refusal(VllmSpec, "vllm", objective(1001)) == (
        f"{key}: 1001 is not accepted; input should be less than or equal to 1000"
    )


def test_the_defaults_are_the_documented_ones() -> None:
    """docs/vllm.md, the inputs table: `maxModelLen` 4096 (the tutorial's), `maxNumSeqs` 128, `replicas.min` /
    `replicas.max` 1 / 2, `autoscaling.target` 10, `startupMinutes` 40, an objective's priority 0 (requests naming
    no objective have 0)."""
    spec = VllmSpec(**BASE)
    assert (spec.max_model_len, spec.max_num_seqs, spec.replicas.min, spec.replicas.max) == (4096, 128, 1, 2)
    assert (spec.autoscaling.target, spec.startup_minutes) == (10, 40)
    objective = parse(VllmSpec, {**BASE, "gateway": {"objectives": [{"name": "chat"}]}}, "vllm").gateway.objectives[0]
    assert objective.priority == 0


def test_the_old_kv_cache_metric_is_refused_with_its_new_name() -> None:
    assert refusal(VllmSpec, "vllm", {**BASE, "autoscaling": {"metric": "gpu_cache_usage_perc"}}) == (
        "vllm.autoscaling.metric: 'gpu_cache_usage_perc' is a metric vLLM renamed kv_cache_usage_perc in 0.9; "
        "the pinned vllm v0.29.0 exports only kv_cache_usage_perc; write kv_cache_usage_perc"
    )


@pytest.mark.parametrize("metric", ["kv_cache_usage_perc", "num_requests_waiting"])
def test_the_current_metrics_are_kept(metric: str) -> None:
    """docs/vllm.md: `autoscaling.metric` is `num_requests_waiting` or `kv_cache_usage_perc`."""
    assert parse(VllmSpec, {**BASE, "autoscaling": {"metric": metric}}, "vllm").autoscaling.metric == metric


def test_a_metric_that_is_not_text_gets_the_accepted_names() -> None:
    assert refusal(VllmSpec, "vllm", {**BASE, "autoscaling": {"metric": 5}}) == (
        "vllm.autoscaling.metric: 5 is not accepted; accepted: 'num_requests_waiting' or 'kv_cache_usage_perc'"
    )
