"""SaxmlStack under mocks: the tutorial's objects derived from the model, secure by default; its
errors before any resource; and the publisher's reconcile script against a loopback Saxml."""

import dataclasses
import json
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pulumi
import pytest

from tests import mocks as mocks_module
from tests.clients import CLIENTS
from tests.mocks import autonamed, capture, project_roles, refused
from tests.policies.harness import capture as capture_registrations
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.saxml import reconcile
from tpu_stacks.saxml.component import SaxmlStack
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import SaxmlSpec

ADMIN_BUCKET = autonamed("saxml-admin")  # the mocks' autonamed admin bucket
TEST_MODEL = "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test"
TUTORIAL_BODY = {"model": "/sax/test/spmd", "model_path": TEST_MODEL, "checkpoint": "None", "replicas": 2}
TUTORIAL = {"cluster": {"project": "proj", "location": "us-central1-a"}, "source_ranges": CLIENTS}
POOL = "gcp:container/nodePool:NodePool"
SINGLE_HOST = {"model": "meta-llama/Meta-Llama-3-8B", "models": []}  # fits one v5e VM (2x2 by default)
NODES_ACCOUNT = "tpu-nodes@proj.iam.gserviceaccount.com"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"

LOGIN_ENV = [{"name": "USER", "value": "app"}, {"name": "LOGNAME", "value": "app"}]  # uid 65532: no passwd entry


class Built:
    """The stack and its resolved outputs (`capture` awaits `kubeconfig`)."""

    def __init__(self, args):
        self.stack = SaxmlStack("saxml", args)
        self.outputs = {}
        names = ("http_endpoint", "admin_bucket", "gsa_email", "published_models", "served_slice", "curl")
        self.kubeconfig = pulumi.Output.all(*(getattr(self.stack, n) for n in names)).apply(
            lambda values: self.outputs.update(zip(names, values, strict=True))
        )


def build(**overrides):
    holder = {}

    def make():
        holder["built"] = Built({**TUTORIAL, **overrides})
        return holder["built"]

    mocks = capture(make)
    return mocks, holder["built"].outputs


@pytest.fixture(scope="module")
def tutorial():
    return build()


def one(mocks, typ, name):
    return mocks.named(typ, name).inputs


def jobset(mocks):
    return one(mocks, JOBSET, "saxml-model-servers")


def publisher_env(mocks):
    (container,) = one(mocks, "kubernetes:batch/v1:Job", "saxml-publisher")["spec"]["template"]["spec"]["containers"]
    return {variable["name"]: variable["value"] for variable in container["env"]}


def model_pod(mocks):
    (replicated,) = jobset(mocks)["spec"]["replicatedJobs"]
    return replicated["template"]["spec"]["template"]


def test_two_compact_4x8_pools_of_eight_ct5lp_nodes_and_a_cpu_pool(tutorial):
    mocks, _ = tutorial
    tpu = [r.inputs for r in mocks.of_type(POOL) if r.name != "saxml-cluster-system"]
    assert sorted(pool["name"] for pool in tpu) == ["tpu1", "tpu2"]  # the tutorial's names
    for pool in tpu:
        assert pool["nodeCount"] == 8
        assert pool["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
        assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x8"}
    system = one(mocks, POOL, "saxml-cluster-system")
    assert not system["nodeConfig"]["machineType"].startswith("ct")


def test_admin_bucket_is_hardened_and_the_service_account_reaches_only_it(tutorial):
    mocks, _ = tutorial
    bucket = one(mocks, "gcp:storage/bucket:Bucket", "saxml-admin")
    assert bucket["uniformBucketLevelAccess"] is True and bucket["publicAccessPrevention"] == "enforced"
    assert bucket["forceDestroy"] is False
    assert one(mocks, "gcp:serviceaccount/account:Account", "saxml-identity-gsa")["accountId"] == "sax-iam-sa"
    grant = mocks.named("gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-identity-bucket-0")
    assert grant.inputs["bucket"] == ADMIN_BUCKET and grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"] == "serviceAccount:sax-iam-sa@proj.iam.gserviceaccount.com"
    # the host-network model servers read the bucket as the nodes' own (minimal) account, read-only
    node_read = mocks.named("gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-node-read")
    assert node_read.inputs["member"] == "serviceAccount:tpu-cluster-nodes@proj.iam.gserviceaccount.com"
    assert node_read.inputs["role"] == "roles/storage.objectViewer"
    assert project_roles(mocks) == []  # not the tutorial's project-wide storage.admin
    binding = one(mocks, "gcp:serviceaccount/iAMMember:IAMMember", "saxml-identity-wi-user")
    assert binding["role"] == "roles/iam.workloadIdentityUser"
    assert binding["member"] == "serviceAccount:proj.svc.id.goog[saxml/sax-sa]"
    ksa = one(mocks, "kubernetes:core/v1:ServiceAccount", "saxml-identity-ksa")
    assert ksa["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "sax-iam-sa@proj.iam.gserviceaccount.com"
    }


def test_admin_server_is_pinned_probed_bounded_and_unprivileged(tutorial):
    mocks, _ = tutorial
    admin = one(mocks, DEPLOYMENT, "saxml-admin-server")
    assert admin["metadata"]["name"] == "sax-admin-server"
    assert admin["spec"]["strategy"] == {"type": "Recreate"}  # never two admin servers on one sax root
    pod = admin["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "sax-sa" and "hostNetwork" not in pod
    (container,) = pod["containers"]
    assert container["image"] == "us-docker.pkg.dev/cloud-tpu-images/inference/sax-admin-server:v1.1.0"
    # without gs://; HOME on an emptyDir (read-only root filesystem: k8s.security)
    assert container["env"] == [
        {"name": "GSBUCKET", "value": ADMIN_BUCKET},
        {"name": "HOME", "value": "/home/app"},
        *LOGIN_ENV,
    ]
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["tcpSocket"] == {"port": 10000}
    assert container["securityContext"]["privileged"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_model_servers_are_one_jobset_derived_from_the_slice(tutorial):
    mocks, _ = tutorial
    model_servers = jobset(mocks)
    assert model_servers["metadata"]["name"] == "sax-model-server-set"
    (replicated,) = model_servers["spec"]["replicatedJobs"]
    assert replicated["name"] == "sax-model-server" and replicated["replicas"] == 2  # one Job per slice
    job = replicated["template"]["spec"]
    assert (job["parallelism"], job["completions"], job["completionMode"]) == (8, 8, "Indexed")
    pod = model_pod(mocks)["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    (container,) = pod["containers"]
    assert (
        container["resources"]["requests"]["google.com/tpu"]
        == "4"
        == container["resources"]["limits"]["google.com/tpu"]
    )
    assert container["args"] == [
        "--port=10001",
        "--sax_cell=/sax/test",
        "--platform_chip=tpuv5e",
        "--platform_topology=4x8",
    ]
    assert container["image"] == "us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0"
    assert container["env"][0] == {"name": "SAX_ROOT", "value": f"gs://{ADMIN_BUCKET}/sax-root"}
    assert [port["containerPort"] for port in container["ports"]] == [10001, 8471]
    assert container["securityContext"]["privileged"] is False
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["serviceAccountName"] == "sax-sa"
    notes = model_servers["metadata"]["annotations"]
    assert notes["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "cloud.google.com/gke-nodepool"
    assert notes["tpu-stacks.dev/model"] == TEST_MODEL and notes["tpu-stacks.dev/tensor-parallel-size"] == "32"
    assert notes["tpu-stacks.dev/context"] == "256" and notes["tpu-stacks.dev/engine"] == "saxml"
    assert "tpu-stacks.dev/host-network-reason" in notes
    assert notes["pulumi.com/waitFor"] == "jsonpath={.status.replicatedJobsStatus[0].ready}=2"


def test_each_slice_is_its_own_replica_not_one_multislice_mesh(tutorial):
    """The tutorial's empty MEGASCALE_NUM_SLICES on every model server: GKE's multislice settings for
    a multi-replica TPU JobSet would otherwise join the two slices into one, and only one model
    server would register (the publisher would never see replicas: 2)."""
    mocks, _ = tutorial
    assert jobset(mocks)["spec"]["replicatedJobs"][0]["replicas"] == 2
    (container,) = model_pod(mocks)["spec"]["containers"]
    megascale = [variable for variable in container["env"] if variable["name"].startswith("MEGASCALE_")]
    assert megascale == [{"name": "MEGASCALE_NUM_SLICES", "value": ""}]


def test_a_broken_slice_restarts_alone_and_never_for_the_last_time(tutorial):
    mocks, _ = tutorial
    policy = jobset(mocks)["spec"]["failurePolicy"]
    assert "maxRestarts" not in policy
    disrupted, failed = policy["rules"]
    assert disrupted["onJobFailureReasons"] == ["PodFailurePolicy"]
    assert disrupted["action"] == failed["action"] == "RestartJobAndIgnoreMaxRestarts"  # only the failed Job
    job = jobset(mocks)["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["backoffLimit"] == 0
    (rule,) = job["podFailurePolicy"]["rules"]
    assert rule == {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert model_pod(mocks)["spec"]["restartPolicy"] == "Never"


def test_restart_limit_counts_crashes_but_not_disruptions():
    mocks, _ = build(restart_limit=5)
    policy = jobset(mocks)["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 5
    disrupted, failed = policy["rules"]
    assert (disrupted["action"], failed["action"]) == ("RestartJobAndIgnoreMaxRestarts", "RestartJob")


def test_jobset_controller_is_a_pinned_release_applied_as_one_group(tutorial):
    mocks, _ = tutorial
    group = one(mocks, "kubernetes:yaml/v2:ConfigGroup", "saxml-jobset-controller")
    assert group["files"] == ["https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"]
    mocks, _ = build(jobset={"install": False})
    assert mocks.of_type("kubernetes:yaml/v2:ConfigGroup") == []


def test_http_server_and_internal_service_on_8888(tutorial):
    mocks, _ = tutorial
    http = one(mocks, DEPLOYMENT, "saxml-http-server")
    (container,) = http["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0"
    assert container["env"] == [
        {"name": "SAX_ROOT", "value": f"gs://{ADMIN_BUCKET}/sax-root"},
        {"name": "HOME", "value": "/home/app"},
        *LOGIN_ENV,
    ]
    assert container["readinessProbe"]["httpGet"] == {"path": "/", "port": 8888}
    assert container["livenessProbe"]["httpGet"] == {"path": "/", "port": 8888}
    service = one(mocks, "kubernetes:core/v1:Service", "saxml-http-service")
    assert service["metadata"]["name"] == "sax-http-lb"
    assert service["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    assert service["spec"]["type"] == "LoadBalancer" and service["spec"]["loadBalancerSourceRanges"] == CLIENTS
    assert service["spec"]["ports"] == [{"name": "http", "port": 8888, "targetPort": 8888, "protocol": "TCP"}]


def test_public_only_on_request_and_then_with_source_ranges():
    mocks, _ = build(exposure="public", source_ranges=["203.0.113.0/24"])
    service = one(mocks, "kubernetes:core/v1:Service", "saxml-http-service")
    assert service["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
    assert "annotations" not in service["metadata"]
    mocks, outputs = build(exposure="cluster")
    assert one(mocks, "kubernetes:core/v1:Service", "saxml-http-service")["spec"]["type"] == "ClusterIP"
    assert outputs["http_endpoint"] == "http://sax-http-lb.saxml.svc.cluster.local:8888"


def test_publisher_job_gets_the_whole_desired_list(tutorial):
    mocks, _ = tutorial
    job = one(mocks, "kubernetes:batch/v1:Job", "saxml-publisher")
    assert "annotations" not in job["metadata"]  # the provider's Job awaiter: Complete, or fail at once
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {variable["name"]: variable["value"] for variable in container["env"]}
    assert json.loads(env["SAX_MODELS"]) == [TUTORIAL_BODY]  # the tutorial's /publish body
    assert env["SAX_HTTP"] == "http://sax-http-lb.saxml.svc.cluster.local:8888"
    assert env["STATE_URL"] == f"gs://{ADMIN_BUCKET}/tpu-stacks/published-models.json"
    assert env["STORAGE_API"] == "https://storage.googleapis.com"
    assert container["image"] == "docker.io/library/python:3.12.8-slim-bookworm"
    assert container["command"] == ["python3", "/opt/sax-publisher/saxml_reconcile.py"]
    assert pod["serviceAccountName"] == "sax-sa" and pod["automountServiceAccountToken"] is False
    assert (
        pod["securityContext"]["runAsNonRoot"] is True
        and container["securityContext"]["readOnlyRootFilesystem"] is True
    )
    script = one(mocks, "kubernetes:core/v1:ConfigMap", "saxml-publisher-script")
    with open(reconcile.__file__, encoding="utf-8") as source:
        assert script["data"] == {"saxml_reconcile.py": source.read()}


def test_sovereign_universe_names_every_identity_in_s3ns(monkeypatch):
    # A new account's e-mail is the provider's (the Account's `email` output): configure it for S3NS.
    s3ns = {**mocks_module.TEST_CONFIG.values, "gcp:universeDomain": "s3nsapis.fr"}
    monkeypatch.setattr(mocks_module, "TEST_CONFIG", dataclasses.replace(mocks_module.TEST_CONFIG, values=s3ns))
    mocks, outputs = build(cluster={**TUTORIAL["cluster"], "location": "u-france-east1-a", "universe": "s3ns"})
    binding = one(mocks, "gcp:serviceaccount/iAMMember:IAMMember", "saxml-identity-wi-user")
    assert binding["member"] == "serviceAccount:proj.s3ns.svc.id.goog[saxml/sax-sa]"
    grant = mocks.named("gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-identity-bucket-0")
    assert grant.inputs["member"] == "serviceAccount:sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"
    ksa = one(mocks, "kubernetes:core/v1:ServiceAccount", "saxml-identity-ksa")
    assert (
        ksa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]
        == "sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"
    )
    env = publisher_env(mocks)
    assert env["STORAGE_API"] == "https://storage.s3nsapis.fr"
    assert outputs["gsa_email"] == "sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"


def test_extra_buckets_and_the_node_account_get_read_access_only():
    mocks, _ = build(checkpoint_buckets=["my-checkpoints"], node_service_account=NODES_ACCOUNT)
    members = mocks.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    grants = {(r.inputs["bucket"], r.inputs["role"], r.inputs["member"]) for r in members}
    assert (
        "my-checkpoints",
        "roles/storage.objectViewer",
        "serviceAccount:sax-iam-sa@proj.iam.gserviceaccount.com",
    ) in grants
    assert (
        ADMIN_BUCKET,
        "roles/storage.objectViewer",
        "serviceAccount:tpu-nodes@proj.iam.gserviceaccount.com",
    ) in grants


def test_without_host_network_and_without_models():
    mocks, outputs = build(host_network=False, models=[])
    pod = model_pod(mocks)
    assert "hostNetwork" not in pod["spec"] and "dnsPolicy" not in pod["spec"] and "annotations" not in pod["metadata"]
    assert "tpu-stacks.dev/host-network-reason" not in jobset(mocks)["metadata"]["annotations"]
    env = publisher_env(mocks)
    assert env["SAX_MODELS"] == "[]"  # the publisher still runs: it unpublishes what it published before
    assert outputs["published_models"] == []
    assert "/sax/test/spmd" in outputs["curl"]["generate"]  # the tutorial's model, to publish by hand


def test_several_models_and_replicas_per_model():
    mocks, outputs = build(
        replicas=3,
        models=[
            {"model": "/sax/test/spmd", "replicas": 2},
            {"model": "/sax/test/spmd1", "model_path": TEST_MODEL, "replicas": 1},
        ],
    )
    assert len([r for r in mocks.of_type(POOL) if r.name != "saxml-cluster-system"]) == 3
    assert jobset(mocks)["spec"]["replicatedJobs"][0]["replicas"] == 3
    assert outputs["published_models"] == ["/sax/test/spmd", "/sax/test/spmd1"]


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"topology": "2x4"}, f"saxml.topology: '2x4' cannot hold {TEST_MODEL}: needs"),
        ({"topology": "2x4"}, "the smallest v5e slice that fits is 4x8 (32 chips)"),
        ({"topology": "8x8"}, "saxml.topology: '8x8' gives 64 devices but"),
        (
            {"models": [{"replicas": 3}]},
            "saxml.models[0].replicas: 3 needs 3 model servers but the stack runs 2 slice(s)",
        ),
        (
            {"models": [{"model": "/sax/test/a"}, {"model": "/sax/test/b"}]},
            "saxml.models: '4 replicas on 2 model servers'",
        ),
        ({"models": [{"model": "spmd"}]}, "saxml.models[0].model: 'spmd' is not a model name in Saxml cell /sax/test"),
        (
            {"models": [{"checkpoint": "/tmp/ckpt"}]},
            "saxml.models[0].checkpoint: '/tmp/ckpt' is neither None nor a gs:// path",
        ),
        ({"models": [{}, {}]}, "saxml.models[1].model: '/sax/test/spmd' is published twice"),
        ({"model": "meta-llama/Meta-Llama-3-8B"}, "saxml.models[0].modelPath is required"),
        ({"model": "acme/unknown"}, "saxml.model: 'acme/unknown' is not in the model catalogue"),
        ({"tpu_generation": "v6e"}, "saxml.tpuGeneration: 'v6e' has no --platform_chip value known"),
        (
            {"images": {"http_server": "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:latest"}},
            "saxml.images.httpServer: 'us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:latest' is not pinned",
        ),
        ({"exposure": "public", "source_ranges": []}, "saxml.sourceRanges: [] is empty for a public endpoint"),
        (
            {"source_ranges": []},
            "saxml.sourceRanges: [] is empty for the internal load balancer that can publish and unpublish models",
        ),
        ({"exposure": "public", "source_ranges": ["0.0.0.0/0"]}, "opens the endpoint to the whole internet"),
        (
            {"jobset": {"version": "v0.5.0"}},
            "saxml.jobset.version: 'v0.5.0' lacks the RestartJob failure-policy actions",
        ),
        ({"jobset": {"version": "latest"}}, "saxml.jobset.version: 'latest' is not a JobSet release tag"),
        ({"gsa_name": "Sax"}, "saxml.gsa_name: 'Sax' is not a valid service account id"),
        # bucket names Cloud Storage reserves, through the Args (https://cloud.google.com/storage/docs/buckets#naming)
        ({"checkpoint_buckets": ["goog-x"]}, "'goog-x' starts with 'goog', which Cloud Storage reserves"),
        (
            {"models": [{"checkpoint": "gs://goog-x/ckpt"}]},
            "saxml.models[0].checkpoint: 'gs://goog-x/ckpt' names bucket 'goog-x', which starts with 'goog'",
        ),
        ({"replicas": 0}, "saxml.replicas: 0 is not accepted"),
        (
            {"cluster": {**TUTORIAL["cluster"], "location": "us-central1", "mode": "autopilot"}},
            "cluster.mode: 'autopilot' does not allow hostNetwork",
        ),
        (
            {"cluster": {**TUTORIAL["cluster"], "min_version": "1.27.2-gke.2100"}},
            "cluster.minVersion: '1.27.2-gke.2100' needs privileged",
        ),
        (
            {"cluster": {**TUTORIAL["cluster"], "slices": [{"generation": "v5e", "topology": "4x8"}]}},
            "cluster.slices: '1 slice(s)' are derived from saxml.model and saxml.replicas; "
            "remove cluster.slices (to add other pools, use a TpuCluster of your own)",
        ),
    ],
)
def test_errors_before_any_resource(overrides, message):
    assert message in refused(lambda: SaxmlStack("bad", {**TUTORIAL, **overrides}))


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"spot": True, "reservation": "my-res"}, "saxml.spot: True cannot consume a reservation"),
        ({"reservation": "My_Res"}, "saxml.reservation: 'My_Res' is not a reservation name"),
        ({"pool_name": "TPU{n}"}, "saxml.poolName: 'TPU1' is not a valid node pool name"),
    ],
)
def test_cluster_refusals_of_the_derived_slices_name_the_saxml_keys(overrides, message):
    assert message in refused(lambda: SaxmlStack("bad", {**TUTORIAL, **overrides}))


@pytest.mark.parametrize(
    "overrides,machine_type,chips",
    [
        ({}, "ct5lp-hightpu-4t", 32),
        (SINGLE_HOST, "ct5lp-hightpu-4t", 4),
        ({**SINGLE_HOST, "topology": "2x4"}, "ct5lp-hightpu-8t", 8),
    ],
)
def test_hosts_per_slice_and_chips_per_host_make_the_slice_the_pools_hold(overrides, machine_type, chips):
    """JobSet parallelism and google.com/tpu come from one shape: together they are the slice, on the pools' VMs."""
    mocks, outputs = build(**overrides)
    job = jobset(mocks)["spec"]["replicatedJobs"][0]["template"]["spec"]
    (container,) = model_pod(mocks)["spec"]["containers"]
    per_host = int(container["resources"]["requests"]["google.com/tpu"])
    assert container["resources"]["limits"]["google.com/tpu"] == str(per_host)
    assert job["parallelism"] == job["completions"]
    assert job["parallelism"] * per_host == chips
    tpu = [r.inputs for r in mocks.of_type(POOL) if r.name != "saxml-cluster-system"]
    assert {pool["nodeConfig"]["machineType"] for pool in tpu} == {machine_type}
    assert machine_type.endswith(f"-{per_host}t")  # a pod takes every chip of its VM
    assert sum(pool["nodeCount"] for pool in tpu) == 2 * job["parallelism"]  # two slices' hosts, no more
    served = outputs["served_slice"]
    assert (served["hosts"], served["chips_per_vm"], served["chips"]) == (job["parallelism"], per_host, chips)


def test_the_saxml_node_account_runs_the_nodes_unless_the_cluster_names_one():
    cluster = ClusterSpec(project="proj", location="us-central1-a")
    spec = SaxmlSpec(source_ranges=CLIENTS, node_service_account=NODES_ACCOUNT)
    assert plan_saxml(spec, cluster).cluster.spec.node_service_account == NODES_ACCOUNT
    assert plan_saxml(SaxmlSpec(source_ranges=CLIENTS), cluster).cluster.spec.node_service_account is None
    other = "cluster-nodes@proj.iam.gserviceaccount.com"
    given = cluster.model_copy(update={"node_service_account": other})
    assert plan_saxml(spec, given).cluster.spec.node_service_account == other
    mocks, _ = build(node_service_account=NODES_ACCOUNT)
    tpu = [r.inputs for r in mocks.of_type(POOL) if r.name != "saxml-cluster-system"]
    assert {pool["nodeConfig"]["serviceAccount"] for pool in tpu} == {NODES_ACCOUNT}


def test_the_decision_layer_loads_no_provider_sdk():
    code = (
        "import sys, tpu_stacks.saxml.plan, tpu_stacks.saxml.spec; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


# -- the publisher's reconcile script ---------------------------------------------------------------


def test_plan_actions_publishes_updates_keeps_and_unpublishes_only_its_own():
    desired = [
        dict(TUTORIAL_BODY),
        {**TUTORIAL_BODY, "model": "/sax/test/b"},
        {**TUTORIAL_BODY, "model": "/sax/test/c"},
    ]
    current = {
        "/sax/test/spmd": {
            "model": "/sax/test/spmd",
            "model_path": TEST_MODEL,
            "checkpoint": "None",
            "max_replicas": 2,
        },
        "/sax/test/b": {"model": "/sax/test/b", "model_path": TEST_MODEL, "checkpoint": "None", "max_replicas": 1},
        "/sax/test/c": None,
        "/sax/test/old": {"model": "/sax/test/old"},
        "/sax/test/gone": None,
    }
    actions = reconcile.plan_actions(desired, ["/sax/test/old", "/sax/test/gone"], current)
    assert [(a.kind, a.model) for a in actions] == [
        ("keep", "/sax/test/spmd"),
        ("update", "/sax/test/b"),
        ("publish", "/sax/test/c"),
        ("unpublish", "/sax/test/old"),
    ]


@pytest.fixture()
def saxml_server():
    """A loopback Sax HTTP server (BaseHTTP generation: exact key counts), GCS and metadata server."""
    state = {"published": {}, "objects": {}, "calls": [], "loads_after": 0}

    class Handler(BaseHTTPRequestHandler):
        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _reply(self, status, payload):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sax(self, method, path, body):
            published = state["published"]
            state["calls"].append((method, path, body))
            keys = {"/publish": 4, "/update": 4, "/unpublish": 1, "/listcell": 1}
            if path in keys and len(body) != keys[path]:
                return self._reply(400, {"Error": "wrong number of keys"})
            name = body.get("model")
            if path == "/listcell":
                if name not in published:
                    return self._reply(400, {"Error": "NOT_FOUND"})
                found = published[name]
                state["loads_after"] -= 1
                active = found["replicas"] if state["loads_after"] < 0 else 0
                return self._reply(
                    200,
                    {
                        "model": name,
                        "model_path": found["model_path"],
                        "checkpoint": found["checkpoint"],
                        "max_replicas": found["replicas"],
                        "active_replicas": active,
                    },
                )
            if path in ("/publish", "/update"):
                if (path == "/publish") == (name in published):
                    return self._reply(400, {"Error": "ALREADY_EXISTS" if name in published else "NOT_FOUND"})
                published[name] = body
                return self._reply(200, body)
            published.pop(name)
            return self._reply(200, body)

        def _gcs(self, method, parsed, raw):
            if self.headers.get("Authorization") != "Bearer token-1":
                return self._reply(401, {"error": "unauthenticated"})
            query = urllib.parse.parse_qs(parsed.query)
            if method == "POST":
                key = ("admin-bucket", query["name"][0])
                state["objects"][key] = raw
                return self._reply(200, {"name": key[1]})
            bucket, name = parsed.path.removeprefix("/storage/v1/b/").split("/o/")
            found = state["objects"].get((bucket, urllib.parse.unquote(name)))
            return self._reply(200, found) if found is not None else self._reply(404, {"error": "not found"})

        def _handle(self, method):
            parsed = urllib.parse.urlparse(self.path)
            raw = self._body()
            if parsed.path == "/token":
                ok = self.headers.get("Metadata-Flavor") == "Google"
                return self._reply(200 if ok else 403, {"access_token": "token-1"})
            if parsed.path.startswith(("/storage/", "/upload/")):
                return self._gcs(method, parsed, raw)
            if parsed.path == "/":
                return self._reply(200, {"message": "HTTP Server for SAX Client"})
            return self._sax(method, parsed.path, json.loads(raw or b"{}"))

        def do_GET(self):  # noqa: N802 (http.server's naming)
            self._handle("GET")

        def do_POST(self):  # noqa: N802
            self._handle("POST")

        def do_PUT(self):  # noqa: N802
            self._handle("PUT")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    env = {
        "SAX_HTTP": base,
        "STORAGE_API": base,
        "METADATA_URL": f"{base}/token",
        "STATE_URL": "gs://admin-bucket/tpu-stacks/published-models.json",
        "READY_SECONDS": "5",
        "WAIT_SECONDS": "0",
    }
    yield env, state
    httpd.shutdown()


def run(env, models, **extra):
    return reconcile.main({**env, "SAX_MODELS": json.dumps(models), **extra})


def mutations(state):
    return [(method, path, body.get("model")) for method, path, body in state["calls"] if path != "/listcell"]


def test_reconcile_publishes_once_then_is_idempotent(saxml_server):
    env, state = saxml_server
    assert run(env, [TUTORIAL_BODY]) == 0
    assert mutations(state) == [("POST", "/publish", "/sax/test/spmd")]
    assert state["published"]["/sax/test/spmd"] == TUTORIAL_BODY
    record = json.loads(state["objects"][("admin-bucket", "tpu-stacks/published-models.json")])
    assert record == {"managed": ["/sax/test/spmd"]}
    state["calls"].clear()
    assert run(env, [TUTORIAL_BODY]) == 0
    assert mutations(state) == []  # /listcell first: already published as desired


def test_reconcile_updates_changed_models_and_unpublishes_removed_ones_only(saxml_server):
    env, state = saxml_server
    state["published"]["/sax/test/manual"] = {**TUTORIAL_BODY, "model": "/sax/test/manual"}  # published by hand
    assert run(env, [TUTORIAL_BODY, {**TUTORIAL_BODY, "model": "/sax/test/two", "replicas": 1}]) == 0
    state["calls"].clear()
    assert run(env, [{**TUTORIAL_BODY, "replicas": 1}]) == 0
    assert mutations(state) == [("PUT", "/update", "/sax/test/spmd"), ("POST", "/unpublish", "/sax/test/two")]
    assert set(state["published"]) == {"/sax/test/spmd", "/sax/test/manual"}
    state["calls"].clear()
    assert run(env, []) == 0
    assert mutations(state) == [("POST", "/unpublish", "/sax/test/spmd")]
    assert set(state["published"]) == {"/sax/test/manual"}  # never the publisher's to remove
    record = json.loads(state["objects"][("admin-bucket", "tpu-stacks/published-models.json")])
    assert record == {"managed": []}


def test_reconcile_waits_for_the_replicas_to_load(saxml_server, monkeypatch):
    env, state = saxml_server
    monkeypatch.setattr(reconcile, "POLL_SECONDS", 0.01)
    state["loads_after"] = 3  # the first /listcell answers report 0 active replicas
    assert run(env, [TUTORIAL_BODY], WAIT_SECONDS="5") == 0
    state["loads_after"] = 10**6
    assert run(env, [TUTORIAL_BODY], WAIT_SECONDS="0.05") == 1  # never loads: the Job fails and retries


def test_reconcile_fails_when_the_server_refuses(saxml_server):
    env, state = saxml_server
    assert run(env, [{**TUTORIAL_BODY, "extra_inputs": {}}]) == 1  # 5 keys: the BaseHTTP server answers 400
    assert state["published"] == {}


def test_outputs_are_the_tutorial_requests_ready_to_paste(tutorial):
    _, outputs = tutorial
    assert outputs["admin_bucket"] == ADMIN_BUCKET
    assert outputs["gsa_email"] == "sax-iam-sa@proj.iam.gserviceaccount.com"
    assert outputs["published_models"] == ["/sax/test/spmd"]
    assert outputs["served_slice"] == {
        "generation": "v5e",
        "topology": "4x8",
        "machine_type": "ct5lp-hightpu-4t",
        "chips": 32,
        "hosts": 8,
        "chips_per_vm": 4,
        "slices": 2,
    }
    address = outputs["http_endpoint"].removeprefix("http://")
    curl = outputs["curl"]
    header = f'curl --request POST --header "Content-type: application/json" -s {address}/'
    assert curl["publish"] == header + f"publish --data '{json.dumps(TUTORIAL_BODY)}'"
    assert curl["listcell"].startswith("curl --request GET ") and curl["listcell"].endswith(
        """--data '{"model": "/sax/test/spmd"}'"""
    )
    assert (
        curl["generate"]
        == header + """generate --data '{"model": "/sax/test/spmd", "query": "How many days are in a week?"}'"""
    )
    assert curl["unpublish"] == header + """unpublish --data '{"model": "/sax/test/spmd"}'"""


def test_pulumi_waits_for_every_slice_after_both_pools_then_for_the_publisher():
    resources = {r.name: r for r in capture_registrations(lambda: SaxmlStack("saxml", TUTORIAL))}
    model_servers = resources["saxml-model-servers"]
    # a custom resource is awaited only through pulumi.com/waitFor: every slice's Job ready
    notes = model_servers.props["metadata"]["annotations"]
    assert notes["pulumi.com/waitFor"] == "jsonpath={.status.replicatedJobsStatus[0].ready}=2"
    # a TPU node (15) + the image (10); the model servers carry no probe (a secondary host serves no port)
    assert model_servers.custom_timeouts == {"create": "25m", "update": "25m"}
    for pool in ("saxml-cluster-tpu1", "saxml-cluster-tpu2"):
        assert resources[pool].urn in model_servers.dependencies
    publisher = resources["saxml-publisher"]
    assert publisher.props["spec"]["activeDeadlineSeconds"] == 45 * 60
    assert publisher.custom_timeouts == {"create": "47m", "update": "47m"}  # just past its own deadline
    assert model_servers.urn in publisher.dependencies


def _namespace_and_policies(mocks):
    (namespace,) = mocks.of_type("kubernetes:core/v1:Namespace")
    policies = sorted(
        p.inputs["metadata"]["name"] for p in mocks.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    )
    return namespace.inputs["metadata"], policies


def test_the_namespace_is_privileged_only_for_host_network_model_servers():
    metadata, policies = _namespace_and_policies(build()[0])
    assert metadata["name"] == "saxml"
    assert metadata["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    # No policy for the model servers: NetworkPolicy does not apply to host-network pods.
    assert policies == ["default-deny-ingress", "sax-admin-server", "sax-http", "sax-publisher", "smoke-test"]
    metadata, policies = _namespace_and_policies(build(host_network=False)[0])
    assert metadata["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert "sax-model-server" in policies
