"""gke-version-supports-tpu, workload-identity-enabled, gcs-fuse-csi-enabled."""

import pulumi_gcp as gcp

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.cluster.component import TpuCluster

V6E_POOL = {"generation": "v6e", "topology": "2x4", "name": "vllm"}
GCSFUSE_VOLUME = {
    "name": "models",
    "csi": {"driver": "gcsfuse.csi.storage.gke.io", "volumeAttributes": {"bucketName": "b"}},
}
SIDECAR = {"gke-gcsfuse/volumes": "true"}


def tpu_cluster(**args):
    return TpuCluster("c", {"project": "p", "location": "us-central1-b", "slices": [V6E_POOL], **args})


def raw_cluster(**args):
    cluster = gcp.container.Cluster("raw", name="raw", location="us-central1-b", initial_node_count=1, **args)
    gcp.container.NodePool(
        "v6e",
        cluster=cluster.name,
        location="us-central1-b",
        node_count=1,
        node_config={"machine_type": "ct6e-standard-8t", "workload_metadata_config": {"mode": "GKE_METADATA"}},
    )
    return cluster


def check(policy, *builders):
    return of(run(capture(lambda: [build() for build in builders][0])), policy)


# gke-version-supports-tpu


def test_cluster_version_older_than_the_generation_needs():
    (problem,) = check("gke-version-supports-tpu", lambda: raw_cluster(min_master_version="1.30"))
    assert problem.urn.endswith("Cluster::raw")
    assert "minMasterVersion 1.30 is older than TPU v6e supports on GKE Standard (1.31.2-gke.1115000" in problem.message
    assert check("gke-version-supports-tpu", lambda: raw_cluster(min_master_version="1.31.2-gke.1115000")) == []
    assert check("gke-version-supports-tpu", lambda: tpu_cluster(min_version="1.32")) == []


def test_a_minor_alias_is_judged_by_its_minor():
    """The program sends `1.34` for a 1.34.3-gke.1318000 floor (GKE creates at the minor's highest patch):
    the pack passes the alias of the floor's minor and still refuses an older minor or an older exact patch."""
    ironwood = lambda version: (
        lambda: gcp.container.NodePool(  # noqa: E731
            "tpu7x",
            cluster="c",
            location="us-central1-c",
            node_count=1,
            version=version,
            node_config={"machine_type": "tpu7x-standard-4t"},
        )
    )
    assert check("gke-version-supports-tpu", ironwood("1.34")) == []
    (problem,) = check("gke-version-supports-tpu", ironwood("1.33"))
    assert "version 1.33 is older than TPU tpu7x" in problem.message
    (problem,) = check("gke-version-supports-tpu", ironwood("1.34.2"))
    assert "version 1.34.2 is older than TPU tpu7x" in problem.message


def test_pools_belong_to_the_cluster_their_cluster_input_depends_on():
    def stack():
        old = gcp.container.Cluster("old", location="us-central1-b", initial_node_count=1, min_master_version="1.30")
        gcp.container.Cluster("cpu-only", location="us-central1-b", initial_node_count=1, min_master_version="1.29")
        gcp.container.NodePool(
            "v6e",
            cluster=old.id,
            location="us-central1-b",
            node_count=1,
            node_config={"machine_type": "ct6e-standard-8t"},
        )

    (problem,) = check("gke-version-supports-tpu", stack)
    assert problem.urn.endswith("Cluster::old")


def test_node_pool_version_is_checked_too():
    def stack():
        gcp.container.NodePool(
            "old",
            cluster="c",
            location="us-central1-b",
            node_count=1,
            version="1.29.1-gke.100",
            node_config={"machine_type": "ct6e-standard-8t"},
        )

    (problem,) = check("gke-version-supports-tpu", stack)
    assert problem.message.startswith("node pool old: version 1.29.1-gke.100 is older than TPU v6e")


def test_autopilot_version_against_the_workloads_generation():
    autopilot = lambda version: (
        lambda: gcp.container.Cluster("ap", location="us-central1", enable_autopilot=True, min_master_version=version)
    )  # noqa: E731
    vllm = lambda: o.deployment("vllm", o.pod("tpu-v6e-slice", "2x4", 8))  # noqa: E731
    (problem,) = check("gke-version-supports-tpu", autopilot("1.31.2-gke.1115000"), vllm)
    assert "on GKE Autopilot (1.31.2-gke.1384000" in problem.message and "not confirmed" in problem.message
    assert check("gke-version-supports-tpu", autopilot("1.32.3-gke.1927000"), vllm) == []


# workload-identity-enabled


def test_tpu_cluster_has_workload_identity_everywhere():
    assert check("workload-identity-enabled", tpu_cluster) == []


def test_raw_cluster_and_pool_without_workload_identity():
    def stack():
        gcp.container.Cluster("raw", location="us-central1-b", initial_node_count=1)
        gcp.container.NodePool("tpu", cluster="raw", node_count=1, node_config={"machine_type": "ct6e-standard-8t"})
        gcp.container.NodePool(
            "cpu",
            cluster="raw",
            node_count=1,
            node_config={"machine_type": "e2-standard-4", "workload_metadata_config": {"mode": "GCE_METADATA"}},
        )

    found = sorted(p.message for p in check("workload-identity-enabled", stack))
    assert len(found) == 3
    assert "node pool cpu: nodeConfig.workloadMetadataConfig.mode is GCE_METADATA; set it to GKE_METADATA" in found[0]
    assert "node pool tpu: nodeConfig.workloadMetadataConfig.mode is not set" in found[1]
    assert "no workloadIdentityConfig.workloadPool" in found[2]
    autopilot = lambda: gcp.container.Cluster("ap", location="us-central1", enable_autopilot=True)  # noqa: E731
    assert check("workload-identity-enabled", autopilot) == []


# gcs-fuse-csi-enabled


def vllm(pod_notes=SIDECAR):
    spec = o.pod(
        "tpu-v6e-slice", "2x4", 8, volumes=[GCSFUSE_VOLUME], volumeMounts=[{"name": "models", "mountPath": "/data"}]
    )
    return o.deployment("vllm", spec, pod_notes=pod_notes)


def test_gcsfuse_volume_needs_the_add_on():
    (problem,) = check(
        "gcs-fuse-csi-enabled", lambda: raw_cluster(workload_identity_config={"workload_pool": "p.svc.id.goog"}), vllm
    )
    assert "GCS FUSE CSI add-on is off" in problem.message and "gcsFuseCsiDriverConfig.enabled: true" in problem.message
    assert check("gcs-fuse-csi-enabled", tpu_cluster, vllm) == []  # TpuCluster turns it on by default
    off = lambda: tpu_cluster(addons={"gcs_fuse": False})  # noqa: E731
    assert len(check("gcs-fuse-csi-enabled", off, vllm)) == 1
    autopilot = lambda: tpu_cluster(mode="autopilot", location="us-central1")  # noqa: E731
    assert check("gcs-fuse-csi-enabled", autopilot, vllm) == []
    assert check("gcs-fuse-csi-enabled", vllm) == []  # no cluster in the stack: an existing cluster, not judged


def test_gcsfuse_volume_needs_the_sidecar_annotation():
    (problem,) = check("gcs-fuse-csi-enabled", tpu_cluster, lambda: vllm(pod_notes=None))
    assert 'lacks the annotation gke-gcsfuse/volumes: "true"' in problem.message
