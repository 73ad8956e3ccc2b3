"""SaxmlSpec's inputs: each default as docs/saxml.md's inputs table states it, each bounded input at its edges (the
edge accepted, one past it refused with the line a user sees), and the upstream ports the spec pins.

Upstream (docs/sources.md): [K-SAX], kubernetes-engine-samples ai-ml/llm-multihost-tpus-saxml at c6f85f55
(https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/tree/c6f85f550a5d93a31f8c0831958165cb72646bb8/ai-ml/llm-multihost-tpus-saxml),
and [SAX-IMAGES], google/saxml v1.1.0's Dockerfile.admin
(https://github.com/google/saxml/tree/70f314c76ee58f27d405b38287cde2bda495b0f9)."""

from __future__ import annotations

import pytest

from tests.spec_edges import Edge, check_edge
from tpu_stacks.saxml import spec as saxml_spec
from tpu_stacks.saxml.spec import SaxmlSpec


@pytest.mark.parametrize(
    "edge",
    [
        Edge("replicas", 1, 64),
        Edge("inputSeqLen", 0, above=True),
        Edge("maxDecodeSteps", 0, above=True),
        Edge("batchSize", 0, above=True),
        Edge("restartLimit", 1),  # unset: never give up; 0 would be "give up at once" (docs/saxml.md)
        Edge("httpReplicas", 1, 16),
        Edge("publishWaitMinutes", 0, 120),  # 0: do not wait (docs/saxml.md)
    ],
    ids=lambda edge: edge.key,
)
def test_each_bounded_input_at_its_edges(edge: Edge) -> None:
    check_edge(SaxmlSpec, "saxml", {}, edge)


@pytest.mark.parametrize(("low", "high"), [(1, 64)])
def test_a_published_models_replicas_at_their_edges(low: int, high: int) -> None:
    """`models[i].replicas`: at least one model server, at most the largest replica count (docs/saxml.md: `replicas`
    defaults to all slices)."""
    from tests.spec_edges import refusal
    from tpu_stacks.inputs.validation import parse

    for value in (low, high):
        parse(SaxmlSpec, {"models": [{"replicas": value}]}, "saxml")
    assert refusal(SaxmlSpec, "saxml", {"models": [{"replicas": low - 1}]}) == (
        f"saxml.models[0].replicas: {low - 1} is not accepted; input should be greater than or equal to {low}"
    )
    assert refusal(SaxmlSpec, "saxml", {"models": [{"replicas": high + 1}]}) == (
        f"saxml.models[0].replicas: {high + 1} is not accepted; input should be less than or equal to {high}"
    )


def test_the_defaults_are_the_documented_ones() -> None:
    """docs/saxml.md, the inputs table: `replicas` 2, `inputSeqLen` / `maxDecodeSteps` / `batchSize` 128 / 128 / 1
    (LmCloudSpmd175B32Test's INPUT_SEQ_LEN, MAX_DECODE_STEPS, BATCH_SIZE), `publishWaitMinutes` 20, `httpReplicas` 1,
    `restartLimit` unset."""
    spec = SaxmlSpec()
    assert (spec.replicas, spec.input_seq_len, spec.max_decode_steps, spec.batch_size) == (2, 128, 128, 1)
    assert (spec.publish_wait_minutes, spec.http_replicas, spec.restart_limit) == (20, 1, None)


def test_the_upstream_ports() -> None:
    """[SAX-IMAGES] Dockerfile.admin's PORT 10000 (the admin server); [K-SAX]'s model servers `--port=10001`, their
    declared multi-host port 8471 (libtpu's), sax-http on 8888 (docs/saxml.md's picture says the same)."""
    ports = (saxml_spec.ADMIN_PORT, saxml_spec.MODEL_PORT, saxml_spec.MULTI_HOST_PORT, saxml_spec.HTTP_PORT)
    assert ports == (10000, 10001, 8471, 8888)
