"""What the decided records read back (cluster/decided.py): each capacity kind's selectors, labels and GKE companions,
the multi-host settings, the jobs pool's selector and taint, and the cluster's and a workload's derived values.

tests/cluster/test_plan.py checks several of these through `plan_cluster`, but imports only the plan module, so the
mutation runner never gave them to decided.py (0 of 55 mutants killed by the one test file importing it). The values:
GKE's capacity labels ([XPK], catalog/tpu.py), the flex-start and queued-provisioning companions
(`--no-enable-autorepair --location-policy=ANY --reservation-affinity=none`, catalog/flex_start.py), Workload
Identity's pool `PROJECT_ID.svc.id.goog` (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)."""

from __future__ import annotations

import pytest

from tpu_stacks.catalog.tpu import MULTI_HOST_MAX_PODS_PER_NODE
from tpu_stacks.cluster.decided import JOBS_TAINT, ClusterPlan, PoolPlan, WorkloadPlan
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

TPU_V6E = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"}


def cluster(slices: list[dict], **fields) -> ClusterPlan:
    return plan_cluster(
        ClusterSpec.model_validate(
            {"project": "p", "location": fields.pop("location", "us-east5-b"), **fields, "slices": slices}
        )
    )


def pool(**slice_fields) -> PoolPlan:
    (only,) = cluster([{"generation": "v6e", "topology": "2x4", "name": "serve", **slice_fields}]).pools
    return only


@pytest.mark.parametrize(
    ("fields", "selector", "labels", "auto_repair", "location_policy", "affinity"),
    [
        ({}, {}, {}, True, None, None),
        ({"spot": True}, {"cloud.google.com/gke-spot": "true"}, {}, True, None, "NO_RESERVATION"),
        ({"flexStart": True}, {"cloud.google.com/gke-flex-start": "true"}, {}, False, "ANY", "NO_RESERVATION"),
        (
            {"queuedProvisioning": True, "flexStart": True},
            {"cloud.google.com/gke-queued": "true"},
            {"cloud.google.com/gke-queued": "true"},  # GKE taints queued nodes but does not label them
            False,
            "ANY",
            "NO_RESERVATION",
        ),
        (
            {"reservation": "res-1"},
            {"cloud.google.com/reservation-name": "res-1"},
            {},
            True,
            None,
            "SPECIFIC_RESERVATION",
        ),
    ],
)
def test_each_capacity_kind_reads_back_gkes_labels_and_companions(
    fields, selector, labels, auto_repair, location_policy, affinity
):
    decided = pool(**fields)
    assert decided.capacity_selector() == selector
    assert decided.node_selector() == {**TPU_V6E, **selector}
    assert decided.node_labels() == {"tpu-stacks/slice": "serve", **labels}
    assert (decided.auto_repair, decided.location_policy, decided.reservation_affinity) == (
        auto_repair,
        location_policy,
        affinity,
    )


def test_a_compute_class_is_selected_instead_of_a_capacity_label():
    decided = cluster(
        [{"generation": "v6e", "topology": "2x4", "name": "serve", "capacity": ["spot", "onDemand"]}],
        minVersion="1.33.3-gke.1136000",
    )
    (only,) = decided.pools
    assert only.node_selector() == {**TPU_V6E, "cloud.google.com/compute-class": "serve"}
    assert decided.compute_classes == (only,)


@pytest.mark.parametrize(
    ("generation", "topology", "location", "multi_host", "workload_policy"),
    [
        ("v6e", "2x4", "us-east5-b", False, False),
        ("v5e", "4x8", "us-east5-b", True, False),  # COMPACT placement
        ("tpu7x", "2x2x1", "us-central1-c", False, False),  # Ironwood's placement applies to multi-host slices only
        ("tpu7x", "4x4x4", "us-central1-c", True, True),
    ],
)
def test_multi_host_settings(generation, topology, location, multi_host, workload_policy):
    # tpu7x needs GKE 1.34.3-gke.1318000 ([CTK] examples/gke-tpu-7x): a floor every generation here accepts
    slices = [{"generation": generation, "topology": topology}]
    (first, *_) = cluster(slices, location=location, minVersion="1.34.3-gke.1318000").pools
    assert (first.multi_host, first.uses_workload_policy) == (multi_host, workload_policy)
    assert first.max_pods_per_node == (MULTI_HOST_MAX_PODS_PER_NODE if multi_host else None)


def test_the_jobs_pool_is_selected_by_its_name_and_tainted():
    decided = cluster([], jobsPool={"machineType": "e2-highmem-16"}, location="us-central1-b")
    assert decided.jobs_pool is not None
    assert decided.jobs_pool.node_selector() == {"cloud.google.com/gke-nodepool": "jobs"}
    assert decided.jobs_pool.taint == JOBS_TAINT == ("tpu-stacks.dev/jobs", "true")


def test_the_clusters_derived_values():
    slices = [
        {"generation": "v6e", "topology": "2x4"},
        {"generation": "v5e", "topology": "4x8", "count": 2},
        {"generation": "v6e", "topology": "2x2"},
    ]
    decided = cluster(slices, minVersion="1.33.3-gke.1136000")
    assert decided.workload_pool == "p.svc.id.goog"
    assert decided.autopilot is False and decided.region == "us-east5"
    assert decided.generations == ["v5e", "v6e"]
    assert [p.name for p in decided.pools_of(1)] == ["tpu-v5e-4x8-1", "tpu-v5e-4x8-2"]
    assert decided.compute_classes == ()  # no pool falls back across kinds
    assert decided.version_floor == "1.33.3-gke.1136000"
    existing = {"name": "prod", "location": "us-east5-b"}
    assert cluster([], minVersion="1.33.3-gke.1136000", existing=existing).version_floor is None
    assert cluster([], mode="autopilot", location="us-east5").autopilot is True


def test_two_pools_of_one_class_give_one_class():
    slices = [{"generation": "v5e", "topology": "4x8", "count": 2, "name": "tpu{n}", "capacity": ["spot", "onDemand"]}]
    decided = cluster(slices, minVersion="1.33.3-gke.1136000")
    assert [p.name for p in decided.compute_classes] == ["tpu1"]


def test_a_workload_reads_its_slice_and_first_pool():
    plan = plan_vllm(
        VllmSpec(model="meta-llama/Llama-3.1-8B", exposure="cluster"),
        ClusterSpec(project="p", location="us-central1-b"),
        True,
        False,
    )
    assert isinstance(plan, WorkloadPlan)
    assert (plan.shape.generation, plan.shape.topology) == (plan.verdict.shape.generation, plan.verdict.shape.topology)
    assert plan.pool.name == "vllm-pool" and plan.pools == (plan.pool,)
    assert plan.shape.topology == "1x1" and plan.tensor_parallel_size == 1  # one v6e chip, one JAX device
    two = cluster([{"generation": "v5e", "topology": "4x8", "count": 2}, {"generation": "v5e", "topology": "2x2"}])
    moved = plan.model_copy(update={"cluster": two})
    assert [p.name for p in moved.pools] == ["tpu-v5e-4x8-1", "tpu-v5e-4x8-2"] and moved.pool.name == "tpu-v5e-4x8-1"
