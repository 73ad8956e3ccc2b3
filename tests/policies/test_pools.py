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
        {"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"},
        {"generation": "v5e", "topology": "2x4", "machine_type": "ct5lp-hightpu-4t", "name": "pair"},
    ]
    assert (
        messages(
            lambda: TpuCluster(
                "c",
                {"project": "p", "location": "us-central1-a", "min_version": "1.34.3-gke.1318000", "slices": slices},
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
