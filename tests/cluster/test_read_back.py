"""Read-back of the cluster and its node pools: what the program sends is what GKE answers and the provider
stores, so a second `up` has nothing to update (and nothing to replace: most nodeConfig fields are
ForceNew). Each rule below is the provider's own handling, read in terraform-provider-google
google/services/container/{resource_container_cluster.go,node_config.go} (stored 2026-08-21):

- `oauth_scopes`: the node pool's are canonicalised by a StateFunc (`CanonicalizeServiceScope`), but the
  cluster's `auto_provisioning_defaults.oauth_scopes` (Autopilot) have no StateFunc, only a suppress for
  the `monitoring.write` scope GKE adds (`containerClusterAddedScopesSuppress`): an alias such as
  `cloud-platform` there would differ from the URL GKE answers. Scopes are therefore sent as full URLs.
- `labels`: Optional+Computed, and the suppress (`containerNodePoolLabelsSuppress`) only forgives labels
  GKE adds for GKE Sandbox ("Right now, GKE only applies its own out-of-band labels when you enable
  Sandbox"): the pools set no sandbox_config, and every label they send is theirs.
- `taint`: GKE taints TPU nodes itself; `flattenTaints` keeps only the keys the configuration has (GKE's
  own are in `effective_taints`), so the pools send no taint of GKE's.
- Durations (`max_run_duration`) are read back as GKE writes google.protobuf.Duration: whole seconds, `s`.
- `min_master_version` is never read back (no `d.Set`), and a version chosen at create time is in
  ignoreChanges, so a later `up` with a newer offer has nothing to update (cluster/versions.py).
- The cluster's `nodeConfig` (GKE's deleted default pool) is in ignoreChanges (cluster_ignore_changes).
- `monitoring_config.enable_components` is a TypeSet: the order GKE answers in is no diff.
"""

from __future__ import annotations

import re

import pytest

from tests.cluster.test_component import CLUSTER, POOL, build

SCOPE_URL = re.compile(r"^https://www\.googleapis\.com/auth/[a-z.-]+$")
OUR_LABELS = re.compile(r"^(tpu-stacks/|cloud\.google\.com/gke-queued$)")
"""Labels the pools set: the slice label, and on queued pools the label their pods select (catalog.tpu)."""
DURATION = re.compile(r"^[1-9]\d*s$")
NODE_CONFIG_SENT = {
    "machineType",
    "spot",
    "flexStart",
    "maxRunDuration",
    "reservationAffinity",
    "workloadMetadataConfig",
    "advancedMachineFeatures",
    "oauthScopes",
    "serviceAccount",
    "labels",
}
"""Every nodeConfig field a pool sends, each checked against the provider's read-back above or sent as GKE
answers it (machine type, booleans, enum names). A new field fails this list until someone reads how the
provider reads it back."""

SLICES = {
    "capacity": {
        "location": "us-central1-b",
        "slices": [
            {"generation": "v6e", "topology": "4x4", "name": "flex", "flex_start": True, "max_run_duration": "86400s"},
            {"generation": "v6e", "topology": "4x4", "name": "queued", "queued_provisioning": True},
            {"generation": "v6e", "topology": "2x4", "name": "reserved", "reservation": "my-res"},
            {"generation": "v6e", "topology": "2x4", "name": "spot", "spot": True, "threads_per_core": 1},
        ],
    },
    "ironwood": {
        "location": "us-central1-c",
        "min_version": "1.34.3-gke.1318000",
        "slices": [{"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"}],
    },
}


@pytest.fixture(scope="module", params=sorted(SLICES))
def mocks(request):
    return build(SLICES[request.param])


def test_pools_send_only_fields_whose_read_back_is_known(mocks):
    for pool in mocks.of_type(POOL):
        assert set(pool.inputs["nodeConfig"]) <= NODE_CONFIG_SENT, pool.inputs["name"]
        assert "taints" not in pool.inputs["nodeConfig"] and "sandboxConfig" not in pool.inputs["nodeConfig"]


def test_scopes_are_urls_labels_are_ours_durations_are_seconds(mocks):
    for pool in mocks.of_type(POOL):
        config = pool.inputs["nodeConfig"]
        assert all(SCOPE_URL.match(scope) for scope in config["oauthScopes"])
        assert all(OUR_LABELS.match(key) for key in config.get("labels", {})), config.get("labels")
        if "maxRunDuration" in config:
            assert DURATION.match(config["maxRunDuration"])
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_the_cluster_sends_a_concrete_version_and_its_default_pools_config(mocks):
    (cluster,) = mocks.of_type(CLUSTER)
    version = cluster.inputs.get("minMasterVersion")
    assert version is None or re.fullmatch(r"\d+\.\d+\.\d+-gke\.\d+", version)
    assert all(SCOPE_URL.match(scope) for scope in cluster.inputs["nodeConfig"]["oauthScopes"])


def test_autopilot_provisioning_scopes_are_urls():
    """No StateFunc on auto_provisioning_defaults.oauth_scopes: an alias would be a diff at every `up`."""
    mocks = build({"location": "us-east5", "mode": "autopilot", "slices": [{"generation": "v6e", "topology": "2x4"}]})
    (cluster,) = mocks.of_type(CLUSTER)
    scopes = cluster.inputs["clusterAutoscaling"]["autoProvisioningDefaults"]["oauthScopes"]
    assert scopes and all(SCOPE_URL.match(scope) for scope in scopes)
