"""JetStreamSpec's inputs: each default as docs/jetstream.md's inputs table states it, each bounded input at its
edges (the edge accepted, one past it refused with the line a user sees), and the upstream facts the spec pins
(the tutorial's ports and batch sizes, the jetstream-http build that first serves /healthcheck).

Upstream: [K-JETSTREAM-CONV], the converter flow, kubernetes-engine-samples at ae62563f
(https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/tree/ae62563f1b920450d017a1e1182c0ef903276458/ai-ml/llm-serving-tpus-jetstream/pytorch),
and [K-JETSTREAM], the download flow, at 585132bb (docs/sources.md)."""

from __future__ import annotations

import pytest

from tests.spec_edges import Edge, check_edge
from tpu_stacks.jetstream import spec as jetstream_spec
from tpu_stacks.jetstream.spec import JetStreamSpec

BASE = {"model": "google/gemma-7b-it"}


@pytest.mark.parametrize(
    "edge",
    [
        Edge("converter.diskGib", 40, 4000),
        Edge("converter.timeoutMinutes", 10, 1440),  # a day at most
        Edge("converter.backoffLimit", 0, 10),
        Edge("converter.ttlHours", 0, 24 * 90),  # 90 days; 0 keeps the Job until destroy (docs/jetstream.md)
        Edge("replicas", 1, 64),  # LARGEST_REPLICAS (inputs/field_rules.py)
        Edge("batchSize", 0, 4096, above=True),
        Edge("maxCacheLength", 0, above=True),
        Edge("maxInputLength", 0, above=True),
        Edge("maxOutputLength", 0, above=True),
        Edge("startupMinutes", 5, 240),
    ],
    ids=lambda edge: edge.key,
)
def test_each_bounded_input_at_its_edges(edge: Edge) -> None:
    check_edge(JetStreamSpec, "jetstream", BASE, edge)


def test_the_defaults_are_the_documented_ones() -> None:
    """docs/jetstream.md, the inputs table (`converter.diskGib` 150, `timeoutMinutes` 120, `backoffLimit` 2,
    `ttlHours` 24, `replicas` 2, `maxCacheLength` 2048, `maxInputLength`/`maxOutputLength` 1024/1024,
    `startupMinutes` 30)."""
    spec = JetStreamSpec(**BASE)
    converter = spec.converter
    assert (converter.disk_gib, converter.timeout_minutes, converter.backoff_limit, converter.ttl_hours) == (
        150,
        120,
        2,
        24,
    )
    assert (spec.replicas, spec.max_cache_length, spec.max_input_length, spec.max_output_length) == (
        2,
        2048,
        1024,
        1024,
    )
    assert spec.startup_minutes == 30


def test_the_tutorials_ports_and_batches() -> None:
    """[K-JETSTREAM-CONV]'s Deployment: jetstream-http on 8000, the server's gRPC on 9000, `--batch_size=32`;
    [K-JETSTREAM] (after its ad1460eb) `--override_batch_size=30`; docs/jetstream.md's picture of the pod says the
    same ports."""
    assert (jetstream_spec.HTTP_PORT, jetstream_spec.GRPC_PORT) == (8000, 9000)
    assert jetstream_spec.FLOW_BATCH == {"converter": 32, "download": 30}


@pytest.mark.parametrize(
    ("tag", "path"),
    [
        ("v0.2.2", "/"),
        ("v0.2.3", "/healthcheck"),
        ("v0.1.9", "/"),
        ("v0.3.0", "/healthcheck"),
        ("v1.0.0", "/healthcheck"),
    ],
)
def test_healthcheck_from_jetstream_http_v0_2_3(tag: str, path: str) -> None:
    """jetstream-http serves /healthcheck from v0.2.3 ([K-JETSTREAM]'s Deployment probes it with the v0.2.3 gateway;
    [K-JETSTREAM-CONV]'s v0.2.2 gateway has no such route, so older builds are probed at `/`)."""
    from tests.jetstream.test_plan import _gemma

    image = f"{jetstream_spec.REGISTRY}/jetstream-http:{tag}"
    assert _gemma(topology="2x4", httpImage=image).health_path == path
