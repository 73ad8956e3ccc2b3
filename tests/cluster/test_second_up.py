"""What a second `pulumi up` would show, checked offline: the Cluster ignores the default pool's
nodeConfig (the plan document's options), so GKE's removal of that pool does not replace the cluster,
while the default pool still runs as the nodes' account (terraform-provider-google#12070, #17511,
pulumi-gcp#744)."""

from pathlib import Path

from tests.cluster.test_component import CLUSTER, build
from tests.shipped import shipped
from tpu_stacks.cluster.component import cluster_ignore_changes
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_pool_still_runs_as_the_nodes_account():
    """ignoreChanges on nodeConfig keeps the create-time intent: GKE's short-lived default pool runs as
    the new least-privilege account, never the Compute Engine default one."""
    mocks = build({"location": "us-central1-a", "name": "sax", "slices": [{"generation": "v5e", "topology": "2x4"}]})
    (cluster,) = mocks.of_type(CLUSTER)
    assert cluster.inputs["removeDefaultNodePool"] is True
    assert cluster.inputs["nodeConfig"] == {
        "serviceAccount": "sax-nodes@proj.iam.gserviceaccount.com",
        "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
    }


def test_the_plan_document_shows_the_cluster_ignores_the_default_pools_node_config():
    """The shipped `dev` stack through the offline engine: its Cluster record carries
    ignoreChanges [nodeConfig] (no replacement on the second `up`, terraform-provider-google#12070,
    pulumi-gcp#744) and still the nodeConfig that keeps the default pool off the Compute Engine account."""
    capture = shipped("dev")
    assert capture.error is None, capture.error
    (cluster,) = [r for r in capture.sorted_resources() if r.type == CLUSTER]
    assert cluster.options_document()["ignoreChanges"] == ["nodeConfig"]
    account = cluster.inputs["nodeConfig"]["serviceAccount"]
    assert account.startswith("tpu-dev-nodes@") and "compute@developer" not in account


def test_autopilot_clusters_ignore_nothing():
    """Autopilot sets no nodeConfig (its nodes' account is in autoProvisioningDefaults): nothing to ignore."""
    autopilot = plan_cluster(ClusterSpec(project="p", location="us-central1", mode="autopilot"))
    standard = plan_cluster(ClusterSpec(project="p", location="us-central1-a"))
    assert (cluster_ignore_changes(autopilot), cluster_ignore_changes(standard)) == ([], ["nodeConfig"])
