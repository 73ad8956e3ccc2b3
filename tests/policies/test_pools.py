"""tpu-node-pool-shape: pools from TpuCluster pass; raw pulumi-gcp pools GKE would reject fail."""

import pulumi_gcp as gcp

from tests.policies.harness import capture, of, run
from tpu_stacks.cluster.component import TpuCluster

POLICY = "tpu-node-pool-shape"


def pool(name="tpu", machine="ct5lp-hightpu-4t", placement=None, **args):
    return gcp.container.NodePool(
        name,
        cluster="c",
        location="us-central1-a",
        node_locations=args.pop("node_locations", ["us-central1-a"]),
        node_config={"machine_type": machine, "workload_metadata_config": {"mode": "GKE_METADATA"}},
        placement_policy=placement,
        **args,
    )


def messages(build):
    return [d.message for d in of(run(capture(build)), POLICY)]


def test_pools_built_by_tpu_cluster_pass():
    slices = [
        {"generation": "v5e", "topology": "4x8", "count": 2, "name": "sax"},
        {"generation": "v6e", "topology": "2x4", "name": "vllm", "autoscaling": {"min_nodes": 1, "max_nodes": 2}},
        {"generation": "v6e", "topology": "4x4", "name": "ray", "autoscaling": {"max_nodes": 4}},
        {"generation": "v5p", "topology": "2x2x2", "name": "flex", "flex_start": True},
        {"generation": "v6e", "topology": "4x4", "name": "queued", "queued_provisioning": True},
        {"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"},
        {"generation": "v5e", "topology": "2x4", "machine_type": "ct5lp-hightpu-4t", "name": "pair"},
    ]
    assert (
        messages(
            lambda: TpuCluster(
                "c",
                {
                    "project": "p",
                    "location": "us-central1-a",
                    "min_version": "1.34.3-gke.1318000",
                    "slices": slices,
                    "allow_uncatalogued": True,  # no zone offers all five generations (catalog/locations.py)
                },
            )
        )
        == []
    )


def test_v5e_4x8_pool_with_4_nodes_needs_8():
    (message,) = messages(lambda: pool(node_count=4, placement={"type": "COMPACT", "tpu_topology": "4x8"}))
    assert "has 4 nodes" in message and "32 chips / 4 per VM" in message and "set nodeCount: 8" in message


def test_correct_raw_multi_host_pool_passes():
    assert messages(lambda: pool(node_count=8, placement={"type": "COMPACT", "tpu_topology": "4x8"})) == []


def test_machine_type_that_cannot_form_the_topology():
    (message,) = messages(
        lambda: pool(machine="ct5lp-hightpu-8t", node_count=4, placement={"type": "COMPACT", "tpu_topology": "4x8"})
    )
    assert "cannot form a 4x8 slice" in message and "ct5lp-hightpu-4t" in message


def test_topology_that_is_not_one_of_the_generation():
    (message,) = messages(lambda: pool(node_count=3, placement={"type": "COMPACT", "tpu_topology": "3x4"}))
    assert "is not a v5e topology" in message


def test_single_host_pool_must_not_set_a_topology():
    (message,) = messages(
        lambda: pool(machine="ct6e-standard-8t", node_count=1, placement={"type": "COMPACT", "tpu_topology": "2x4"})
    )
    assert "single-host" in message and "remove placementPolicy.tpuTopology" in message
    assert messages(lambda: pool(machine="ct6e-standard-8t", node_count=2)) == []


def test_multi_host_pool_needs_compact_placement_in_one_zone():
    (message,) = messages(lambda: pool(node_count=8, placement={"type": "ANY", "tpu_topology": "4x8"}))
    assert "needs placementPolicy type COMPACT" in message
    (message,) = messages(
        lambda: pool(
            node_count=8,
            placement={"type": "COMPACT", "tpu_topology": "4x8"},
            node_locations=["us-central1-a", "us-central1-b"],
        )
    )
    assert "exactly one zone" in message


def test_multi_host_autoscaling_is_zero_or_the_whole_slice():
    (message,) = messages(
        lambda: pool(
            placement={"type": "COMPACT", "tpu_topology": "4x4"},
            autoscaling={"total_min_node_count": 0, "total_max_node_count": 8},
        )
    )
    assert "maximum is 8" in message and "set the maximum to 4" in message
    (message,) = messages(
        lambda: pool(
            placement={"type": "COMPACT", "tpu_topology": "4x4"},
            autoscaling={"total_min_node_count": 2, "total_max_node_count": 4},
        )
    )
    assert "minimum is 2" in message and "0 or 4" in message


def test_autoscaling_limits_cannot_mix_per_zone_and_total():
    (message,) = messages(
        lambda: pool(machine="e2-standard-4", autoscaling={"min_node_count": 1, "total_max_node_count": 3})
    )
    assert "mixes per-zone (minNodeCount) and total (totalMaxNodeCount)" in message


def test_tpu7x_multi_host_pool_needs_a_workload_policy():
    (message,) = messages(
        lambda: pool(machine="tpu7x-standard-4t", node_count=2, placement={"type": "", "tpu_topology": "2x2x2"})
    )
    assert "workload policy" in message and "policyName" in message


def test_tpu7x_refuses_compact_placement():
    found = messages(
        lambda: pool(
            machine="tpu7x-standard-4t",
            node_count=2,
            placement={"type": "COMPACT", "tpu_topology": "2x2x2", "policy_name": "wp"},
        )
    )
    assert len(found) == 1 and "GKE refuses COMPACT placement for tpu7x-standard-4t" in found[0]


# -- flex-start and queued provisioning: GKE's documented companions (issue 12) -------------------------

V6E_4X4 = {"type": "COMPACT", "tpu_topology": "4x4"}
COMPANIONS = {
    "management": {"auto_repair": False, "auto_upgrade": True},
    "autoscaling": {"min_node_count": 0, "max_node_count": 4, "location_policy": "ANY"},
}


def dws_pool(flex=True, queued=False, machine="ct6e-standard-4t", placement=V6E_4X4, affinity="NO_RESERVATION", **args):
    return gcp.container.NodePool(
        "dws",
        cluster="c",
        location="us-central1-b",
        node_locations=["us-central1-b"],
        node_config={
            "machine_type": machine,
            "flex_start": flex or None,
            "reservation_affinity": {"consume_reservation_type": affinity} if affinity else None,
        },
        queued_provisioning={"enabled": True} if queued else None,
        placement_policy=placement,
        **{**COMPANIONS, **args},
    )


def test_flex_start_and_queued_pools_with_every_companion_pass():
    assert messages(lambda: dws_pool()) == []
    assert messages(lambda: dws_pool(queued=True)) == []


def test_queued_pool_without_flex_start():
    (message,) = messages(lambda: dws_pool(flex=False, queued=True))
    assert "queuedProvisioning without nodeConfig.flexStart" in message and "set flexStart: true" in message


def test_flex_start_pool_with_auto_repair():
    (message,) = messages(lambda: dws_pool(management={"auto_repair": True}))
    assert "auto-repair on" in message and "set management.autoRepair: false" in message
    (message,) = messages(lambda: dws_pool(queued=True, management=None))  # GKE's default is on
    assert "auto-repair on" in message


def test_queued_pool_that_may_consume_a_reservation():
    (message,) = messages(lambda: dws_pool(queued=True, affinity=None))
    assert "consumes reservations (GKE default)" in message and "consumeReservationType: NO_RESERVATION" in message


def test_flex_start_pool_with_a_fixed_size_or_the_wrong_autoscaling():
    (message,) = messages(lambda: dws_pool(autoscaling=None, node_count=4))
    assert "without autoscaling from 0" in message and "remove nodeCount" in message
    (message,) = messages(lambda: dws_pool(autoscaling={"min_node_count": 0, "max_node_count": 4}))
    assert "locationPolicy BALANCED (default)" in message and "set autoscaling.locationPolicy: ANY" in message


def test_queued_provisioning_on_a_tpu_gke_refused():
    v5e = {"type": "COMPACT", "tpu_topology": "4x4"}
    (message,) = messages(lambda: dws_pool(queued=True, machine="ct5lp-hightpu-4t", placement=v5e))
    assert "queued provisioning on TPU v5e" in message and "xpk#900" in message
    assert messages(lambda: dws_pool(machine="ct5lp-hightpu-4t", placement=v5e)) == []  # flex-start alone
