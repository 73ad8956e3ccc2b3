"""Flex-start and queued-provisioning pools under Pulumi's mocks: every companion GKE documents
(`--flex-start`, `--reservation-affinity=none`, `--no-enable-autorepair`, `--location-policy=ANY`,
autoscaling from 0) on the pool, and the combinations GKE documents as unsupported refused in one line."""

import pytest

from tests.cluster.test_component import CLUSTER, POOL, build, tpu_pools
from tests.mocks import refused
from tpu_stacks.cluster.component import TpuCluster


def test_queued_pool_carries_every_companion_gke_documents():
    """`--enable-queued-provisioning --flex-start --reservation-affinity=none --no-enable-autorepair
    --location-policy=ANY` and autoscaling from 0, plus the gke-queued label its pods select."""
    mocks = build(
        {
            "location": "us-central1-b",
            "slices": [
                {"generation": "v6e", "topology": "4x4", "name": "queued", "queued_provisioning": True},
                {"generation": "v6e", "topology": "2x4", "name": "queued-single", "queued_provisioning": True},
            ],
        }
    )
    for queued in (p.inputs for p in tpu_pools(mocks)):
        assert queued["queuedProvisioning"] == {"enabled": True}
        assert queued["nodeConfig"]["flexStart"] is True  # GKE: flex-start with queued provisioning
        assert queued["management"] == {"autoRepair": False, "autoUpgrade": True}
        assert queued["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert queued["autoscaling"]["minNodeCount"] == 0 and queued["autoscaling"]["locationPolicy"] == "ANY"
        assert "nodeCount" not in queued and "initialNodeCount" not in queued
        assert queued["nodeConfig"]["labels"]["cloud.google.com/gke-queued"] == "true"


def test_other_pools_keep_auto_repair_and_gke_defaults():
    mocks = build(
        {
            "location": "us-central1-b",
            "slices": [
                {"generation": "v6e", "topology": "2x4", "name": "plain"},
                {"generation": "v6e", "topology": "2x4", "name": "spot", "spot": True},
            ],
        }
    )
    pools = {p.inputs["name"]: p.inputs for p in tpu_pools(mocks)}
    for pool in pools.values():
        assert pool["management"]["autoRepair"] is True
        assert "flexStart" not in pool["nodeConfig"] and "queuedProvisioning" not in pool
    assert "reservationAffinity" not in pools["plain"]["nodeConfig"]
    assert pools["spot"]["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}


@pytest.mark.parametrize(
    "slice_args,message",
    [
        (
            {"generation": "v5e", "topology": "2x4", "queued_provisioning": True},
            "cluster.slices[0].queuedProvisioning: True is not known to work for TPU v5e",
        ),
        (
            {"generation": "v6e", "topology": "2x4", "queued_provisioning": True, "flex_start": False},
            "cluster.slices[0].flexStart: False contradicts queuedProvisioning",
        ),
        (
            {"generation": "v6e", "topology": "2x4", "flex_start": True, "max_run_duration": "604801s"},
            "cluster.slices[0].maxRunDuration: '604801s' is longer than the 7 days a flex-start VM may run",
        ),
        (
            {"generation": "v6e", "topology": "2x4", "queued_provisioning": True, "autoscaling": {"min_nodes": 1}},
            "cluster.slices[0].autoscaling.minNodes: 1 must be 0 with flex-start or queued provisioning",
        ),
        (
            {"generation": "v6e", "topology": "2x4", "name": "system"},
            "cluster.slices[0].name: 'system' is the name of the cluster's CPU system pool",
        ),
    ],
)
def test_capacity_and_name_combinations_gke_documents_as_unsupported(slice_args, message):
    assert message in refused(
        lambda: TpuCluster("bad", {"project": "proj", "location": "us-central1-b", "slices": [slice_args]})
    )


def test_a_flex_start_run_of_seven_days_is_accepted():
    mocks = build(
        {
            "location": "us-central1-b",
            "slices": [{"generation": "v6e", "topology": "2x4", "flex_start": True, "max_run_duration": "604800s"}],
        }
    )
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["nodeConfig"]["maxRunDuration"] == "604800s"


def test_a_slice_may_be_named_system_where_no_system_pool_is_declared():
    mocks = build(
        {
            "location": "us-central1",
            "mode": "autopilot",
            "slices": [{"generation": "v6e", "topology": "2x4", "name": "system"}],
        }
    )
    assert mocks.of_type(CLUSTER) and mocks.of_type(POOL) == []
