"""RayTrainSpec's inputs: each default as docs/raytrain.md's inputs table states it, each bounded input at its edges
(the edge accepted, one past it refused with the line a user sees), and the default image tag's form.

Outside sources: Ray's `FailureConfig(max_failures)`, where -1 means without limit
(https://docs.ray.io/en/releases-2.49.1/train/api/doc/ray.train.FailureConfig.html); Compute Engine's
`threadsPerCore`, 1 (SMT off) or 2 (https://cloud.google.com/compute/docs/instances/set-threads-per-core)."""

from __future__ import annotations

import pytest

from tests.spec_edges import Edge, check_edge
from tpu_stacks.catalog.engines import RAY
from tpu_stacks.raytrain.engine import MAXTEXT_REVISION
from tpu_stacks.raytrain.spec import RayTrainSpec, default_tag

BASE = {"model": "llama3-8b"}


@pytest.mark.parametrize(
    "edge",
    [
        Edge("slices", 1, 64),
        Edge("threadsPerCore", 1, 2),
        Edge("perDeviceBatchSize", 0, above=True),
        Edge("maxTargetLength", 0, above=True),
        Edge("steps", 0, above=True),
        Edge("checkpointPeriod", 0, above=True),
        Edge("maxFailures", -1, 100),
        Edge("deadlineMinutes", 0, above=True),
    ],
    ids=lambda edge: edge.key,
)
def test_each_bounded_input_at_its_edges(edge: Edge) -> None:
    check_edge(RayTrainSpec, "raytrain", BASE, edge)


def test_a_fractional_batch_per_device_is_accepted() -> None:
    """MaxText's `per_device_batch_size` may be below 1 (docs/raytrain.md: `perDeviceBatchSize`)."""
    assert RayTrainSpec(**BASE, perDeviceBatchSize=0.25).per_device_batch_size == 0.25


def test_the_defaults_are_the_documented_ones() -> None:
    """docs/raytrain.md, the inputs table: `slices` 1, `threadsPerCore` 1 (the tutorial's `--threads-per-core=1`),
    `perDeviceBatchSize` 1, `maxTargetLength` 4096, `steps` 100, `checkpointPeriod` unset, `maxFailures` 1,
    `deadlineMinutes` 240."""
    spec = RayTrainSpec(**BASE)
    assert (spec.slices, spec.threads_per_core, spec.per_device_batch_size) == (1, 1, 1)
    assert (spec.max_target_length, spec.steps, spec.checkpoint_period) == (4096, 100, None)
    assert (spec.max_failures, spec.deadline_minutes) == (1, 240)


def test_the_default_tag_names_ray_and_the_maxtext_commit() -> None:
    """docs/raytrain.md: the image tag is `ray<version>-maxtext-<commit>-...` (the commit cut to ten characters;
    the build's hash follows, added by the image step)."""
    assert default_tag() == f"ray{RAY.version}-maxtext-{MAXTEXT_REVISION[:10]}"
    assert default_tag() == "ray2.49.1-maxtext-404cf1de70"  # the pins docs/raytrain.md names
