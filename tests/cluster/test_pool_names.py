"""The names cluster/pool_names.py derives and the names it keeps free (its mutation survivors: the ComputeClass
name of an unnamed slice, and the jobs pool's name taken only when the cluster has that pool)."""

import pytest

from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.pool_names import class_name
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import UserError


@pytest.mark.parametrize(
    ("generation", "topology", "expected"),
    [
        # GKE's accelerator labels are tpu-v6e-slice and tpu7x (catalog/tpu.py): a generation whose name already
        # starts with "tpu" is not prefixed again, as tests/cluster/test_plan.py pins for Ironwood's pool name.
        ("v6e", "2x4", "tpu-v6e-2x4"),
        ("tpu7x", "2x2x1", "tpu7x-2x2x1"),
    ],
)
def test_an_unnamed_slices_compute_class_is_its_pool_name(generation, topology, expected):
    """One class serves all the pools of a slice spec; a single unnamed slice's class is its pool's name."""
    spec = SliceSpec(generation=generation, topology=topology)
    assert class_name(spec, slice_shape(generation, topology)) == expected


def _cluster(**fields) -> ClusterSpec:
    return ClusterSpec.model_validate({"project": "p", "location": "us-central1-b", **fields})


def test_jobs_is_refused_only_where_the_jobs_pool_is_declared():
    """`jobs` is the name of the cluster's CPU pool for Jobs (names.JOBS_POOL_NAME) only when `cluster.jobsPool`
    asks for that pool; without it a slice may be called so."""
    slices = [{"generation": "v6e", "topology": "2x4", "name": "jobs"}]
    assert [pool.name for pool in plan_cluster(_cluster(slices=slices)).pools] == ["jobs"]
    with pytest.raises(UserError, match=r"^cluster\.slices\[0\]\.name: 'jobs' is the name of the cluster's CPU pool"):
        plan_cluster(_cluster(slices=slices, jobsPool={}))
