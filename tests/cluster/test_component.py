"""TpuCluster under Pulumi's mocks: the four tutorials' clusters, Autopilot, the sovereign
domain, an existing cluster, and every invalid combination refused before any resource."""

import json

import pytest

from tests.mocks import EXISTING_CLUSTER_ENDPOINT, capture, refused
from tpu_stacks.cluster.component import TpuCluster

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"


def build(args, name="c"):
    return capture(lambda: TpuCluster(name, {"project": "proj", **args}))


def tpu_pools(mocks):
    """TPU pools by name (registration order varies: outputs resolve concurrently)."""
    return sorted((p for p in mocks.of_type(POOL) if p.inputs["name"] != "system"), key=lambda p: p.inputs["name"])


def test_saxml_two_v5e_4x8_slices():
    mocks = build(
        {"location": "us-central1-a", "slices": [{"generation": "v5e", "topology": "4x8", "count": 2, "name": "tpu"}]}
    )
    pools = tpu_pools(mocks)
    assert [p.inputs["name"] for p in pools] == ["tpu-1", "tpu-2"]
    for pool in pools:
        assert pool.inputs["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
        assert pool.inputs["nodeCount"] == 8
        assert pool.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x8"}
        assert pool.inputs["nodeLocations"] == ["us-central1-a"]
        assert pool.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert pool.inputs["maxPodsPerNode"] == 15
        assert "autoscaling" not in pool.inputs
    cluster = mocks.of_type(CLUSTER)[0].inputs
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "proj.svc.id.goog"}
    assert cluster["removeDefaultNodePool"] is True
    system = [p for p in mocks.of_type(POOL) if p.inputs["name"] == "system"]
    assert len(system) == 1 and system[0].inputs["nodeConfig"]["machineType"] == "e2-standard-4"


def test_vllm_v6e_single_host_pool_autoscales_1_to_2():
    mocks = build(
        {
            "location": "us-central1-b",
            "release_channel": "RAPID",
            "slices": [
                {
                    "generation": "v6e",
                    "topology": "2x4",
                    "name": "tpunodepool",
                    "autoscaling": {"min_nodes": 1, "max_nodes": 2},
                }
            ],
        }
    )
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert pool.inputs["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert pool.inputs["initialNodeCount"] == 1
    assert "nodeCount" not in pool.inputs
    assert "placementPolicy" not in pool.inputs  # never a topology on a single-host pool
    assert "maxPodsPerNode" not in pool.inputs
    cluster = mocks.of_type(CLUSTER)[0].inputs
    assert cluster["releaseChannel"] == {"channel": "RAPID"}
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert cluster["monitoringConfig"]["managedPrometheus"] == {"enabled": True}


def test_jetstream_regional_v5e_8t_pool_of_two_nodes():
    mocks = build(
        {
            "location": "us-central1",
            "node_locations": ["us-central1-a"],
            "system_pool": {"machine_type": "e2-standard-4", "nodes": 2},
            "slices": [{"generation": "v5e", "topology": "2x4", "nodes": 2, "name": "tpu-nodepool"}],
        }
    )
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["nodeConfig"]["machineType"] == "ct5lp-hightpu-8t"
    assert pool.inputs["nodeCount"] == 2
    assert pool.inputs["location"] == "us-central1"
    assert pool.inputs["nodeLocations"] == ["us-central1-a"]
    assert "placementPolicy" not in pool.inputs
    assert mocks.of_type(CLUSTER)[0].inputs["nodeLocations"] == ["us-central1-a"]


def test_raytrain_ray_addon_and_v6e_4x4_multi_host_pool():
    mocks = build(
        {
            "location": "us-east5-b",
            "addons": {"ray_operator": True},
            "system_pool": {"machine_type": "n1-standard-16"},
            "slices": [{"generation": "v6e", "topology": "4x4", "name": "v6e-16", "threads_per_core": 1}],
        }
    )
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["nodeConfig"]["machineType"] == "ct6e-standard-4t"
    assert pool.inputs["nodeCount"] == 4
    assert pool.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert pool.inputs["nodeConfig"]["advancedMachineFeatures"] == {"threadsPerCore": 1}
    assert mocks.of_type(CLUSTER)[0].inputs["addonsConfig"]["rayOperatorConfigs"] == [{"enabled": True}]


def test_autopilot_declares_no_node_pools():
    mocks = build(
        {
            "location": "us-central1",
            "mode": "autopilot",
            "addons": {"ray_operator": True},
            "slices": [{"generation": "v6e", "topology": "2x4", "spot": True}],
        }
    )
    assert mocks.of_type(POOL) == []
    cluster = mocks.of_type(CLUSTER)[0].inputs
    assert cluster["enableAutopilot"] is True
    assert "removeDefaultNodePool" not in cluster
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "proj.svc.id.goog"}


def test_autopilot_slice_info_carries_capacity_selectors():
    holder = {}

    def make():
        holder["cluster"] = TpuCluster(
            "ap",
            {
                "project": "proj",
                "location": "us-central1",
                "mode": "autopilot",
                "slices": [{"generation": "v6e", "topology": "2x4", "spot": True}],
            },
        )
        return holder["cluster"]

    capture(make)
    (pool,) = holder["cluster"].plan.pools
    assert pool.node_selector() == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x4",
        "cloud.google.com/gke-spot": "true",
    }


def test_sovereign_universe_uses_s3ns_identity_domain():
    mocks = build(
        {"location": "u-france-east1-a", "universe": "s3ns", "slices": [{"generation": "v5e", "topology": "4x8"}]}
    )
    assert mocks.of_type(CLUSTER)[0].inputs["workloadIdentityConfig"] == {"workloadPool": "proj.s3ns.svc.id.goog"}


def test_tpu7x_multi_host_gets_a_workload_policy():
    mocks = build(
        {
            "location": "us-central1-c",
            "min_version": "1.34.3-gke.1318000",
            "slices": [{"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"}],
        }
    )
    # REGULAR's default (1.34.1-gke.3971000 in the mocks' offer) is below the 1.34.3-gke.1318000 floor:
    # the cluster is created at the channel's newest, which meets it (cluster/versions.py).
    assert mocks.of_type(CLUSTER)[0].inputs["minMasterVersion"] == "1.34.3-gke.1444000"
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "2x2x2"}
    assert policy.inputs["region"] == "us-central1"
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["nodeCount"] == 2
    placement = pool.inputs["placementPolicy"]
    assert placement["tpuTopology"] == "2x2x2" and "policyName" in placement
    assert placement["type"] == ""  # GKE refuses COMPACT for tpu7x and stores no type (ci-infra#547)


def test_capacity_options_map_to_gke_fields():
    mocks = build(
        {
            "location": "us-central1-b",
            "slices": [
                {"generation": "v6e", "topology": "4x4", "name": "flex", "flex_start": True},
                {"generation": "v6e", "topology": "4x4", "name": "queued", "queued_provisioning": True},
                {"generation": "v6e", "topology": "2x4", "name": "reserved", "reservation": "my-res"},
                {"generation": "v6e", "topology": "2x4", "name": "spot", "spot": True},
            ],
        }
    )
    pools = {p.inputs["name"]: p.inputs for p in tpu_pools(mocks)}
    flex = pools["flex"]
    assert flex["nodeConfig"]["flexStart"] is True
    assert flex["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    assert flex["management"]["autoRepair"] is False
    assert flex["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert flex["nodeConfig"]["labels"] == {"tpu-stacks/slice": "flex"}
    queued = pools["queued"]
    assert queued["queuedProvisioning"] == {"enabled": True}
    assert queued["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    assert pools["reserved"]["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["my-res"],
    }
    assert pools["spot"]["nodeConfig"]["spot"] is True


def test_multi_host_autoscaling_is_whole_slice():
    mocks = build(
        {"location": "us-central1-b", "slices": [{"generation": "v6e", "topology": "4x4", "autoscaling": {}}]}
    )
    (pool,) = tpu_pools(mocks)
    assert pool.inputs["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4}


SECRET_SIG = "4dabf18193072939515e22adb298388d"  # Pulumi's wire marker for a secret value


def test_kubeconfig_is_secret_and_uses_the_auth_plugin():
    mocks = capture(lambda: TpuCluster("k2", {"project": "proj", "location": "us-central1-a"}))
    (provider,) = mocks.of_type("pulumi:providers:kubernetes")
    wrapped = provider.inputs["kubeconfig"]
    assert SECRET_SIG in wrapped  # the kubeconfig reaches the engine as a secret
    config = json.loads(wrapped["value"])
    assert config["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert config["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"
    assert provider.inputs["enableServerSideApply"] == "true"


def test_existing_cluster_declares_no_cluster_or_pools():
    mocks = build(
        {
            "location": "us-central1-a",
            "existing": {"name": "prod", "location": "us-central1-a"},
            "slices": [{"generation": "v5e", "topology": "2x4"}],
        }
    )
    assert mocks.of_type(CLUSTER) == [] and mocks.of_type(POOL) == []
    (provider,) = mocks.of_type("pulumi:providers:kubernetes")
    assert (
        json.loads(provider.inputs["kubeconfig"]["value"])["clusters"][0]["cluster"]["server"]
        == f"https://{EXISTING_CLUSTER_ENDPOINT}"
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (
            {"location": "us-central1-a", "slices": [{"generation": "v5e", "topology": "4x9"}]},
            "cluster.slices[0].topology: '4x9' is not a v5e topology; valid: 1x1, 2x2, 2x4, 4x4",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v6e", "topology": "2x4", "flex_start": True, "spot": True}],
            },
            "cluster.slices[0].flexStart: True cannot be combined with spot",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v6e", "topology": "2x4", "queued_provisioning": True, "reservation": "r"}],
            },
            "cluster.slices[0].queuedProvisioning: True cannot use a reservation",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v5e", "topology": "4x8", "machine_type": "ct5lp-hightpu-8t"}],
            },
            "cluster.slices[0].machineType: 'ct5lp-hightpu-8t' cannot form a 4x8 slice",
        ),
        (
            {
                "location": "us-central1",
                "node_locations": ["us-central1-a", "us-central1-b"],
                "slices": [{"generation": "v5e", "topology": "4x8"}],
            },
            "COMPACT placement of the multi-host 4x8 slice needs exactly one zone",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v5e", "topology": "4x8", "autoscaling": {"min_nodes": 2, "max_nodes": 8}}],
            },
            "is not a whole-slice range; a multi-host pool scales only between 0 and 8 nodes",
        ),
        (
            {"location": "us-central1-a", "slices": [{"generation": "v5e", "topology": "4x8", "nodes": 4}]},
            "cluster.slices[0].nodes: 4 does not match the 4x8 slice on ct5lp-hightpu-4t",
        ),
        (
            {"location": "us-central1-a", "min_version": "1.30", "slices": [{"generation": "v6e", "topology": "2x4"}]},
            "cluster.minVersion: '1.30' is older than TPU v6e supports in standard mode; use 1.31.2-gke.1115000 or later",
        ),
        ({"location": "moon-base", "slices": []}, "cluster.location: 'moon-base' is neither a zone nor a region"),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v6e", "topology": "2x4", "max_run_duration": "forever"}],
            },
            "cluster.slices[0].maxRunDuration: 'forever' is not a duration GKE accepts",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v6e", "topology": "2x4", "reservation": "my res!"}],
            },
            "cluster.slices[0].reservation: 'my res!' is not a reservation name",
        ),
        (
            {"location": "us-central1-a", "system_pool": {"machine_type": "ct6e-standard-4t"}},
            "cluster.systemPool.machineType: 'ct6e-standard-4t' is a TPU machine type",
        ),
        (
            {
                "location": "us-central1-a",
                "slices": [{"generation": "v6e", "topology": "2x4", "count": 3, "autoscaling": {"max_nodes": 1}}],
            },
            "cluster.slices[0].autoscaling.maxNodes: 1 is below count 3",
        ),
        (
            {"location": "us-central1-c", "slices": [{"generation": "tpu7x", "topology": "2x2x1"}]},
            "cluster.minVersion is required for TPU tpu7x, which needs GKE 1.34.3-gke.1318000",
        ),
        (
            {"location": "us-central1-b", "mode": "autopilot"},
            "cluster.location: 'us-central1-b' is a zone, and Autopilot clusters are regional; use us-central1",
        ),
        ({"location": "us-central1-a", "universe": "mars"}, "cluster.universe: 'mars' is not a known cloud universe"),
        (
            {"location": "europe-west9-a", "universe": "s3ns"},
            "cluster.location: 'europe-west9-a' is not a region of universe s3ns; use one of u-france-east1-a",
        ),
        (
            {"location": "us-central1-a", "project": "s3ns:proj"},
            "cluster.project: 's3ns:proj' is a project id of universe s3ns, but the stack deploys to universe google",
        ),
        (
            {"location": "us-central1-a", "slices": [{"generation": "v5e", "topologie": "4x8"}]},
            "cluster.slices[0].topologie: '4x8' is not a known setting; did you mean 'topology'?",
        ),
    ],
)
def test_invalid_combinations_are_refused_before_any_resource(args, message):
    assert message in refused(lambda: TpuCluster("bad", {"project": "proj", **args}))


def test_nodes_run_as_the_given_service_account():
    mocks = build(
        {
            "location": "us-central1-a",
            "node_service_account": "tpu-nodes@proj.iam.gserviceaccount.com",
            "slices": [{"generation": "v5e", "topology": "2x4"}],
        }
    )
    for pool in mocks.of_type(POOL):
        assert pool.inputs["nodeConfig"]["serviceAccount"] == "tpu-nodes@proj.iam.gserviceaccount.com"
    assert "nodes" in refused(
        lambda: TpuCluster("bad", {"project": "p", "location": "us-central1-a", "node_service_account": "nodes"})
    )


def test_pools_added_to_an_existing_cluster_go_where_it_is():
    mocks = build(
        {
            "location": "us-central1",
            "existing": {"name": "prod", "location": "europe-west4-a", "project": "other", "create_pools": True},
            "slices": [{"generation": "v6e", "topology": "2x4", "name": "serve"}],
        }
    )
    assert mocks.of_type(CLUSTER) == []
    (pool,) = tpu_pools(mocks)
    assert (pool.inputs["cluster"], pool.inputs["location"], pool.inputs["project"]) == (
        "prod",
        "europe-west4-a",
        "other",
    )
    assert pool.inputs["nodeLocations"] == ["europe-west4-a"]


def test_nodes_run_as_a_new_minimal_account_by_default():
    mocks = build({"location": "us-central1-a", "name": "sax", "slices": [{"generation": "v5e", "topology": "4x8"}]})
    (account,) = mocks.of_type("gcp:serviceaccount/account:Account")
    assert account.inputs["accountId"] == "sax-nodes"
    (role,) = mocks.of_type("gcp:projects/iAMMember:IAMMember")
    assert role.inputs["role"] == "roles/container.defaultNodeServiceAccount"
    assert role.inputs["member"] == "serviceAccount:sax-nodes@proj.iam.gserviceaccount.com"
    for pool in mocks.of_type(POOL):
        assert pool.inputs["nodeConfig"]["serviceAccount"] == "sax-nodes@proj.iam.gserviceaccount.com"
    assert mocks.of_type(CLUSTER)[0].inputs["nodeConfig"]["serviceAccount"] == "sax-nodes@proj.iam.gserviceaccount.com"


def test_numbered_pool_names():
    mocks = build(
        {
            "location": "us-central1-a",
            "slices": [{"generation": "v5e", "topology": "4x8", "count": 2, "name": "tpu{n}"}],
        }
    )
    assert [p.inputs["name"] for p in tpu_pools(mocks)] == ["tpu1", "tpu2"]
