"""The `saxml` and `saxml-s3ns` stacks as `tpu-stacks plan` runs them: the whole program under mocks,
the tutorial's resources derived from the model, strict schemas (the JobSet against its CRD), the
sovereign identity domains, and config mistakes as one line naming the key."""

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tests.shipped import shipped
from tpu_stacks.gcp.universe import advisories, cluster_features, universe
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.schema import VENDORED_CRDS, validate_objects

ROOT = Path(__file__).resolve().parents[2]
CRDS = VENDORED_CRDS  # the schemas the planner ships
POOL = "gcp:container/nodePool:NodePool"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
IDENTITY_DOMAINS = ("svc.id.goog", "iam.gserviceaccount.com")


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    """Converted CRDs are cached on disk; these tests use their own cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.delenv("TPU_STACKS_CRDS", raising=False)
        yield


def planned(stack, preview):
    capture = shipped(stack, preview=preview)
    assert capture.error is None, capture.error.detail
    return capture


@pytest.fixture(scope="module")
def saxml_up():
    return planned("saxml", preview=False)


@pytest.fixture(scope="module")
def s3ns_up():
    return planned("saxml-s3ns", preview=False)


def one(capture, typ, name=None):
    found = [r for r in capture.of_type(typ) if name is None or r.name == name]
    assert len(found) == 1, (typ, name, [r.name for r in capture.of_type(typ)])
    return found[0]


def k8s_object(capture, kind, name):
    found = [
        r
        for r in capture.resources
        if r.custom
        and r.type.startswith("kubernetes:")
        and r.inputs.get("kind") == kind
        and r.inputs.get("metadata", {}).get("name") == name
    ]
    assert len(found) == 1, (kind, name)
    return found[0]


def check_tutorial_architecture(capture, project="my-tpu-project"):
    """What both stacks must yield (the s3ns one differs only in identity domains)."""
    pools = [r.inputs for r in capture.of_type(POOL)]
    tpu = [p for p in pools if p["nodeConfig"]["machineType"].startswith("ct")]
    assert len(tpu) == 2 and len(pools) == 3  # two TPU slices and the CPU pool
    for pool in tpu:
        assert pool["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t" and pool["nodeCount"] == 8
        assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x8"}
    bucket = one(capture, "gcp:storage/bucket:Bucket")
    assert bucket.inputs["uniformBucketLevelAccess"] is True and bucket.inputs["publicAccessPrevention"] == "enforced"
    assert one(capture, "gcp:serviceaccount/account:Account", "saxml-identity-gsa").inputs["accountId"] == "sax-iam-sa"
    grant = one(capture, "gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-identity-bucket-0").inputs
    assert grant["bucket"] == bucket.id and grant["role"] == "roles/storage.objectUser"
    project_roles = [r.inputs["role"] for r in capture.of_type("gcp:projects/iAMMember:IAMMember")]
    assert project_roles == ["roles/container.defaultNodeServiceAccount"]  # the nodes' minimal role, nothing else
    assert one(capture, "gcp:serviceaccount/iAMMember:IAMMember").inputs["role"] == "roles/iam.workloadIdentityUser"
    assert (
        "iam.gke.io/gcp-service-account"
        in k8s_object(capture, "ServiceAccount", "sax-sa").inputs["metadata"]["annotations"]
    )
    k8s_object(capture, "Deployment", "sax-admin-server")
    (replicated,) = k8s_object(capture, "JobSet", "sax-model-server-set").inputs["spec"]["replicatedJobs"]
    job = replicated["template"]["spec"]
    assert (replicated["replicas"], job["parallelism"], job["completions"]) == (2, 8, 8)
    pod = job["template"]["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    assert pod["containers"][0]["resources"]["limits"]["google.com/tpu"] == "4"
    k8s_object(capture, "Deployment", "sax-http")
    service = k8s_object(capture, "Service", "sax-http-lb").inputs
    assert service["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    assert [port["port"] for port in service["spec"]["ports"]] == [8888]
    publisher = k8s_object(capture, "Job", "sax-publisher").inputs
    env = {v["name"]: v["value"] for v in publisher["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert json.loads(env["SAX_MODELS"]) == [
        {
            "model": "/sax/test/spmd",
            "checkpoint": "None",
            "replicas": 2,
            "model_path": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
        }
    ]


def test_tutorial_stack_yields_the_tutorial_architecture(saxml_up):
    check_tutorial_architecture(saxml_up)
    binding = one(saxml_up, "gcp:serviceaccount/iAMMember:IAMMember").inputs
    assert binding["member"] == "serviceAccount:my-tpu-project.svc.id.goog[saxml/sax-sa]"
    grant = one(saxml_up, "gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-identity-bucket-0").inputs
    assert grant["member"] == "serviceAccount:sax-iam-sa@my-tpu-project.iam.gserviceaccount.com"
    annotations = k8s_object(saxml_up, "ServiceAccount", "sax-sa").inputs["metadata"]["annotations"]
    assert annotations == {"iam.gke.io/gcp-service-account": "sax-iam-sa@my-tpu-project.iam.gserviceaccount.com"}


def test_sovereign_stack_is_the_same_architecture_in_s3ns_domains(s3ns_up):
    check_tutorial_architecture(s3ns_up)
    cluster = one(s3ns_up, "gcp:container/cluster:Cluster").inputs
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "my-tpu-project.s3ns.svc.id.goog"}
    binding = one(s3ns_up, "gcp:serviceaccount/iAMMember:IAMMember").inputs
    assert binding["member"] == "serviceAccount:my-tpu-project.s3ns.svc.id.goog[saxml/sax-sa]"
    grant = one(s3ns_up, "gcp:storage/bucketIAMMember:BucketIAMMember", "saxml-identity-bucket-0").inputs
    assert grant["member"] == "serviceAccount:sax-iam-sa@my-tpu-project.s3ns.iam.gserviceaccount.com"
    ksa = k8s_object(s3ns_up, "ServiceAccount", "sax-sa")
    annotations = ksa.inputs["metadata"]["annotations"]
    assert annotations == {"iam.gke.io/gcp-service-account": "sax-iam-sa@my-tpu-project.s3ns.iam.gserviceaccount.com"}
    account = one(s3ns_up, "gcp:serviceaccount/account:Account", "saxml-identity-gsa")
    assert account.urn in ksa.dependencies  # the annotation is the account's own e-mail output
    assert s3ns_up.stack_outputs["serviceAccount"] == "sax-iam-sa@my-tpu-project.s3ns.iam.gserviceaccount.com"


def test_sovereign_stack_deploys_to_s3ns_one_region_in_the_project_as_s3ns_writes_it(s3ns_up):
    """u-france-east1 (zones -a/-b/-c) is S3NS's only region; the region parser keeps it whole, so the
    bucket is planned there. Resources get `s3ns:my-tpu-project`; identities the bare id."""
    config = yaml.safe_load((ROOT / "Pulumi.saxml-s3ns.yaml").read_text())["config"]
    s3ns = universe("s3ns")
    assert s3ns.check_location(config["tpu-stacks:cluster"]["location"]) == config["gcp:region"] == "u-france-east1"
    cluster = one(s3ns_up, "gcp:container/cluster:Cluster").inputs
    assert (cluster["location"], cluster["project"]) == ("u-france-east1-a", "s3ns:my-tpu-project")
    for pool in s3ns_up.of_type(POOL):
        assert pool.inputs["nodeLocations"] == ["u-france-east1-a"] and pool.inputs["project"] == "s3ns:my-tpu-project"
    bucket = one(s3ns_up, "gcp:storage/bucket:Bucket").inputs
    assert (bucket["location"], bucket["project"]) == ("U-FRANCE-EAST1", "s3ns:my-tpu-project")


def test_no_identity_of_the_sovereign_plan_carries_the_project_prefix(s3ns_up):
    strings = _strings([r.inputs for r in s3ns_up.resources] + [s3ns_up.stack_outputs])
    pools = [m for s in strings for m in re.findall(r"[\w.:-]+\.svc\.id\.goog", s)]
    emails = [m for s in strings for m in re.findall(r"[\w.-]+@[\w.:-]+\.iam\.gserviceaccount\.com", s)]
    assert pools and emails
    assert not [identity for identity in pools + emails if "s3ns:" in identity]


def features_of(capture):
    """What a planned stack uses, in the terms of the universe catalogue."""
    cluster = one(capture, "gcp:container/cluster:Cluster").inputs
    return cluster_features(
        "autopilot" if cluster.get("enableAutopilot") else "standard",
        machine_types=[pool.inputs["nodeConfig"]["machineType"] for pool in capture.of_type(POOL)],
        bucket_locations=[bucket.inputs["location"] for bucket in capture.of_type("gcp:storage/bucket:Bucket")],
    )


def test_what_s3ns_documents_as_unavailable_is_one_advisory_line_each(s3ns_up, saxml_up):
    lines = advisories(universe("s3ns"), features_of(s3ns_up))
    assert [line.split(" this stack plans")[0] for line in lines] == [
        "Cloud de Confiance by S3NS (s3ns) does not offer the GKE mode standard",
        "Cloud de Confiance by S3NS (s3ns) does not offer the machine series ct5lp, e2",
    ]
    assert advisories(universe("google"), features_of(saxml_up)) == []


def test_every_identity_string_of_the_sovereign_plan_is_in_s3ns():
    """In preview, provider-computed values are unknown, so every identity string is the program's own.
    (In up mode the offline mock computes the Account's `name` in the Google domain.)"""
    preview = planned("saxml-s3ns", preview=True)
    strings = _strings([r.inputs for r in preview.resources] + [preview.stack_outputs])
    identities = [s for s in strings if any(domain in s for domain in IDENTITY_DOMAINS)]
    assert identities, "the plan names no identity at all"
    assert all(".s3ns." in s for s in identities), [s for s in identities if ".s3ns." not in s]


def _strings(value):
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_kubernetes_objects_use_the_cluster_provider_and_wait_for_what_they_need(saxml_up):
    by_urn = saxml_up.by_urn()
    provider = one(saxml_up, "pulumi:providers:kubernetes")
    for record in saxml_up.resources:
        if record.type.startswith("kubernetes:") and (record.custom or record.remote):
            assert record.provider and record.provider.startswith(provider.urn), record.urn
    model_servers = one(saxml_up, JOBSET)
    needs = {by_urn[urn].type for urn in model_servers.dependencies}
    assert "kubernetes:yaml/v2:ConfigGroup" in needs  # the JobSet controller and its webhook first
    assert POOL in needs and "kubernetes:apps/v1:Deployment" in needs  # the slices and the admin server
    assert model_servers.options.delete_before_replace is True  # JobSet specs are immutable; the name is fixed
    publisher = one(saxml_up, "kubernetes:batch/v1:Job", "saxml-publisher")
    assert model_servers.urn in publisher.dependencies  # published after the servers are up
    controller = one(saxml_up, "kubernetes:yaml/v2:ConfigGroup")
    assert controller.remote and controller.inputs["files"] == [
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
    ]


def test_stack_outputs(saxml_up):
    outputs = saxml_up.stack_outputs
    assert outputs["publishedModels"] == ["/sax/test/spmd"]
    assert outputs["slice"]["topology"] == "4x8" and outputs["slice"]["hosts"] == 8
    assert outputs["httpEndpoint"].endswith(":8888")
    for request in ("Publish", "Listcell", "Generate", "Unpublish"):
        assert outputs[f"curl{request}"].startswith("curl --request ")
    assert "/generate --data" in outputs["curlGenerate"]


@pytest.mark.parametrize("stack", ["saxml", "saxml-s3ns"])
def test_every_object_passes_strict_schemas_and_the_jobset_its_crd(stack):
    manifests = render_manifests(planned(stack, preview=False))
    kinds = sorted(m.kind for m in manifests)
    assert kinds == [
        "ConfigMap",
        "ConfigMap",  # the smoke test's script
        "Deployment",
        "Deployment",
        "Job",
        "Job",  # the smoke test
        "JobSet",
        "Namespace",
        *["NetworkPolicy"] * 5,  # deny-all, admin, http, publisher, smoke test (host-network model servers: none)
        "Service",
        "ServiceAccount",
    ]
    report = validate_objects(manifests, kubernetes_version="1.33", crd_dir=CRDS)
    assert report.problems == [] and report.notices == [], (report.problems, report.notices)
    assert report.validated == len(manifests)


def test_plan_cli_writes_the_jobset_manifest(tmp_path):
    result = tpu_stacks("plan", "--cwd", str(ROOT), "--stack", "saxml", "--manifests", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    jobset = yaml.safe_load((tmp_path / "jobset-saxml-sax-model-server-set.yaml").read_text())
    assert jobset["spec"]["replicatedJobs"][0]["replicas"] == 2


def tutorial_config(**saxml):
    config = yaml.safe_load((ROOT / "Pulumi.saxml.yaml").read_text())["config"]
    config["tpu-stacks:saxml"] = {**config["tpu-stacks:saxml"], **saxml}
    return config


CASES = [
    (
        "small",
        tutorial_config(topology="2x4"),
        "tpu-stacks:saxml.topology: '2x4' cannot hold saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
    ),
    (
        "noslices",
        tutorial_config(models=[{"model": "/sax/test/spmd", "replicas": 3}]),
        "tpu-stacks:saxml.models[0].replicas: 3 needs 3 model servers but the stack runs 2 slice(s)",
    ),
    (
        "typo",
        tutorial_config(models=[{"model": "/sax/test/spmd", "modelpath": "x"}]),
        "tpu-stacks:saxml.models[0].modelpath: 'x' is not a known setting; did you mean 'model",
    ),  # modelPath or model_path
    (
        "public",
        tutorial_config(exposure="public", sourceRanges=[]),
        "tpu-stacks:saxml.sourceRanges: [] is empty for a public endpoint",
    ),
    (
        "internal-open",
        tutorial_config(sourceRanges=[]),
        "tpu-stacks:saxml.sourceRanges: [] is empty for the internal load balancer that can publish and unpublish",
    ),
]


@pytest.mark.parametrize("stack,config,message", CASES, ids=[case[0] for case in CASES])
def test_config_mistakes_are_one_line_naming_the_key(project, stack, config, message):
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    capture = run_program(project, stack, preview=True)
    assert capture.error is not None and capture.error.kind == "user"
    assert message in capture.error.message and "\n" not in capture.error.message
    assert [r for r in capture.resources if r.type != "pulumi:pulumi:Stack"] == []
