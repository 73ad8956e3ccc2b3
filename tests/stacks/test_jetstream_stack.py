"""The two JetStream stack files, run as users run them: the whole program offline (preview and up),
strict schemas, the policy pack and `tpu-stacks plan`; and config mistakes as one line, exit 2."""

from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tests.shipped import shipped
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.policy import run_policy_pack
from tpu_stacks_preview.schema import validate_objects

ROOT = Path(__file__).resolve().parents[2]
STACKS = {
    "jetstream-gemma": {
        "dir": "gemma-7b-it",
        "repo": "google/gemma-7b-it-pytorch",
        "name": "gemma",
        "size": "7b",
        "model": "google/gemma-7b-it",
        "gsa": "wi-jetstream",
    },
    "jetstream-llama3": {
        "dir": "llama-3-8b",
        "repo": "meta-llama/Meta-Llama-3-8B",
        "name": "llama-3",
        "size": "8b",
        "model": "meta-llama/Meta-Llama-3-8B",
        "gsa": "wi-jetstream-llama3",
    },
}


@cache
def planned(stack: str):
    preview, up = shipped(stack, preview=True), shipped(stack)
    assert preview.error is None and up.error is None, (preview.error, up.error)
    return preview, up


def resources(stack: str, typ: str):
    return [r for r in planned(stack)[1].resources if r.type == typ]


def only(stack: str, typ: str, name: str | None = None):
    found = [r for r in resources(stack, typ) if name is None or r.name == name]
    assert len(found) == 1, (typ, [r.name for r in resources(stack, typ)])
    return found[0]


@pytest.mark.parametrize("stack", STACKS)
def test_ct5lp_8t_pool_from_zero_to_two_nodes_in_the_tutorial_zone_and_a_jobs_pool(stack):
    pool = only(stack, "gcp:container/nodePool:NodePool", "jetstream-cluster-tpu-nodepool").inputs
    assert pool["name"] == "tpu-nodepool" and pool["nodeConfig"]["machineType"] == "ct5lp-hightpu-8t"
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 2} and pool["nodeLocations"] == ["us-west4-a"]
    jobs = only(stack, "gcp:container/nodePool:NodePool", "jetstream-cluster-jobs").inputs
    assert jobs["nodeConfig"]["machineType"] == "e2-highmem-16" and jobs["autoscaling"]["totalMinNodeCount"] == 0
    system = only(stack, "gcp:container/nodePool:NodePool", "jetstream-cluster-system").inputs
    assert system["nodeConfig"]["machineType"] == "e2-standard-4"
    assert only(stack, "gcp:container/cluster:Cluster").inputs["location"] == "us-west4"


@pytest.mark.parametrize("stack", STACKS)
def test_bucket_grants_and_secret(stack):
    bucket = only(stack, "gcp:storage/bucket:Bucket").inputs
    assert bucket["uniformBucketLevelAccess"] is True and bucket["publicAccessPrevention"] == "enforced"
    grant = only(stack, "gcp:storage/bucketIAMMember:BucketIAMMember").inputs
    assert grant["role"] == "roles/storage.objectUser"
    assert grant["member"] == f"serviceAccount:{STACKS[stack]['gsa']}@my-tpu-project.iam.gserviceaccount.com"
    project_roles = [r.inputs["role"] for r in resources(stack, "gcp:projects/iAMMember:IAMMember")]
    assert project_roles == ["roles/container.defaultNodeServiceAccount"]  # only the nodes' minimal GKE role
    binding = only(stack, "gcp:serviceaccount/iAMMember:IAMMember").inputs
    assert binding["member"] == "serviceAccount:my-tpu-project.svc.id.goog[jetstream/jetstream]"
    secret = only(stack, "kubernetes:core/v1:Secret")
    assert secret.inputs["metadata"]["name"] == "huggingface-secret" and secret.secret_inputs == ["stringData"]


@pytest.mark.parametrize("stack", STACKS)
def test_converter_job_with_the_exact_arguments_before_the_server(stack):
    facts, (_, up) = STACKS[stack], planned(stack)
    bucket = up.stack_outputs["checkpointBucket"]
    job = only(stack, "kubernetes:batch/v1:Job", "jetstream-converter")  # the smoke test is the other Job
    assert job.inputs["metadata"]["name"] == f"checkpoint-converter-{facts['dir']}-bf16"
    (container,) = job.inputs["spec"]["template"]["spec"]["containers"]
    assert container["args"] == [
        "-s=jetstream-pytorch",
        f"-m={facts['repo']}",
        f"-o=gs://{bucket}/pytorch/{facts['dir']}/final/bf16/",
        f"-n={facts['name']}",
        "-q=False",
        "-h=True",
    ]
    assert "google.com/tpu" not in container["resources"]["requests"]
    assert job.options.custom_timeouts == {"create": "122m", "update": "122m"}  # Complete, or its own deadline
    # on the jobs pool, after it, and not after the TPU pool (whose nodes come only for the servers)
    assert any(dep.endswith("::jetstream-cluster-jobs") for dep in job.dependencies)
    assert not any(dep.endswith("::jetstream-cluster-tpu-nodepool") for dep in job.dependencies)
    deployment = only(stack, "kubernetes:apps/v1:Deployment")
    assert job.urn in deployment.dependencies  # the server is created once the checkpoint exists


@pytest.mark.parametrize("stack", STACKS)
def test_deployment_both_containers_per_model_args_and_service(stack):
    facts = STACKS[stack]
    deployment = only(stack, "kubernetes:apps/v1:Deployment").inputs
    assert deployment["metadata"]["name"] == "jetstream-pytorch-server" and deployment["spec"]["replicas"] == 2
    server, http = deployment["spec"]["template"]["spec"]["containers"]
    assert (server["name"], http["name"]) == ("jetstream-pytorch-server", "jetstream-http")
    directory = f"/models/pytorch/{facts['dir']}/final/bf16/"
    assert server["args"] == [
        f"--size={facts['size']}",
        f"--model_name={facts['name']}",
        "--batch_size=32",
        "--max_cache_length=2048",
        "--quantize_weights=False",
        "--quantize_kv_cache=False",
        f"--tokenizer_path={directory}tokenizer.model",
        f"--checkpoint_path={directory}model.safetensors",
        "--prometheus_port=9090",  # v0.2.3's metrics server, scraped by the stack's PodMonitoring
    ]
    assert deployment["metadata"]["annotations"]["tpu-stacks.dev/model"] == facts["model"]
    service = only(stack, "kubernetes:core/v1:Service").inputs
    assert service["metadata"]["name"] == "jetstream-svc" and service["spec"]["type"] == "ClusterIP"
    assert [p["port"] for p in service["spec"]["ports"]] == [8000, 9000, 9090]  # 9090: the smoke test reads metrics


@pytest.mark.parametrize("stack", STACKS)
def test_outputs(stack):
    outputs = planned(stack)[1].stack_outputs
    assert outputs["serviceName"] == "jetstream-svc"
    assert outputs["portForward"] == "kubectl port-forward -n jetstream svc/jetstream-svc 8000:8000"
    assert (
        "localhost:8000/generate" in outputs["curl"] and "What are the top 5 programming languages" in outputs["curl"]
    )
    assert outputs["checkpointPath"] == f"gs://{outputs['checkpointBucket']}/pytorch/{STACKS[stack]['dir']}/final/bf16/"
    assert outputs["slice"] == {
        "generation": "v5e",
        "topology": "2x4",
        "machine_type": "ct5lp-hightpu-8t",
        "chips": 8,
        "nodes": 2,
    }


@pytest.mark.parametrize("stack", STACKS)
def test_strict_schemas_and_no_mandatory_policy_violation(stack):
    preview, up = planned(stack)
    manifests = render_manifests(up)
    assert {m.kind for m in manifests} >= {"Deployment", "Job", "Secret", "Service", "ServiceAccount", "Namespace"}
    assert validate_objects(manifests, kubernetes_version="1.33", project_dir=ROOT).problems == []
    result = run_policy_pack(ROOT / "policies", preview, transport="in-process")
    assert [v for v in result.violations if v.enforcement == "mandatory"] == []


@pytest.mark.parametrize("stack", STACKS)
def test_tpu_stacks_plan_cli(stack, tmp_path):
    result = tpu_stacks(
        "plan",
        "--cwd",
        str(ROOT),
        "--stack",
        stack,
        "--policy-pack",
        str(ROOT / "policies"),
        "--manifests",
        str(tmp_path),
        "--placeholder-secrets",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Schema (Kubernetes 1.33" in result.stdout and "no problems" in result.stdout
    job = yaml.safe_load(
        (tmp_path / f"job-jetstream-checkpoint-converter-{STACKS[stack]['dir']}-bf16.yaml").read_text()
    )
    assert job["spec"]["template"]["spec"]["containers"][0]["args"][1] == f"-m={STACKS[stack]['repo']}"


MISTAKES = [
    ("unknown", {"model": "acme/llm-7b"}, "tpu-stacks:jetstream.model: 'acme/llm-7b' is not in the model catalogue"),
    (
        "cache",
        {"batchSize": 256, "maxCacheLength": 8192},
        "tpu-stacks:jetstream.batchSize: '256 x 8192 tokens' is the KV cache JetStream pre-allocates",
    ),
    ("nozone", {"zone": None}, "tpu-stacks:jetstream.zone is required: cluster us-west4 is regional"),
    (
        "tpu7x",
        {"tpuGeneration": "tpu7x"},
        "tpu-stacks:jetstream.tpuGeneration: 'tpu7x' is not served by the pinned JetStream-PyTorch images",
    ),
]


@pytest.mark.parametrize("case,change,message", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_mistakes_are_one_line_and_exit_2(project, case, change, message):
    document = yaml.safe_load((ROOT / "Pulumi.jetstream-gemma.yaml").read_text())
    section = document["config"]["tpu-stacks:jetstream"]
    section.update({key: value for key, value in change.items() if value is not None})
    for key in [key for key, value in change.items() if value is None]:
        del section[key]
    (project / f"Pulumi.{case}.yaml").write_text(yaml.safe_dump(document))
    result = tpu_stacks("plan", "--cwd", str(project), "--stack", case, "--placeholder-secrets")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
