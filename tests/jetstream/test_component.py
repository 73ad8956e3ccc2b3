"""JetStreamStack under mocks: the tutorial's objects for both models, derived from the catalogue,
least privilege, the converter on CPU, and every refusal before any resource exists."""

import json
import subprocess
import sys
from types import SimpleNamespace

import pulumi
import pytest

from tests.mocks import autonamed, capture, project_roles, refused, workload_accounts
from tests.policies.harness import capture as capture_registrations
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.jetstream.plan import plan_jetstream
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.objects.annotations import TENSOR_PARALLEL
from tpu_stacks.objects.awaits import NODE_PROVISIONING_MINUTES
from tpu_stacks.sizing import tensor_parallel_size

SECRET_SIG = "4dabf18193072939515e22adb298388d"
TOKEN = "hf_dummy_token_value"
CLUSTER = {"project": "proj", "location": "us-west4", "system_pool": {"machine_type": "e2-standard-4"}}
BUCKET = autonamed("js-checkpoints")  # the mocks' autonamed bucket
GEMMA = {"cluster": CLUSTER, "model": "google/gemma-7b-it", "zone": "us-west4-a"}
LLAMA = {"cluster": CLUSTER, "model": "meta-llama/Meta-Llama-3-8B", "zone": "us-west4-a"}
# The tutorial's converter and server arguments, per model ([K-JETSTREAM-CONV], [CONVERTER]).
CONVERTER_ARGS = {
    "gemma": [
        "-s=jetstream-pytorch",
        "-m=google/gemma-7b-it-pytorch",
        f"-o=gs://{BUCKET}/pytorch/gemma-7b-it/final/bf16/",
        "-n=gemma",
        "-q=False",
        "-h=True",
    ],
    "llama": [
        "-s=jetstream-pytorch",
        "-m=meta-llama/Meta-Llama-3-8B",
        f"-o=gs://{BUCKET}/pytorch/llama-3-8b/final/bf16/",
        "-n=llama-3",
        "-q=False",
        "-h=True",
    ],
}
SERVER_ARGS = {
    "gemma": [
        "--size=7b",
        "--model_name=gemma",
        "--batch_size=32",
        "--max_cache_length=2048",
        "--quantize_weights=False",
        "--quantize_kv_cache=False",
        "--tokenizer_path=/models/pytorch/gemma-7b-it/final/bf16/tokenizer.model",
        "--checkpoint_path=/models/pytorch/gemma-7b-it/final/bf16/model.safetensors",
        "--prometheus_port=9090",
    ],
    "llama": [
        "--size=8b",
        "--model_name=llama-3",
        "--batch_size=32",
        "--max_cache_length=2048",
        "--quantize_weights=False",
        "--quantize_kv_cache=False",
        "--tokenizer_path=/models/pytorch/llama-3-8b/final/bf16/tokenizer.model",
        "--checkpoint_path=/models/pytorch/llama-3-8b/final/bf16/model.safetensors",
        "--prometheus_port=9090",
    ],
}
JOB_NAMES = {"gemma": "checkpoint-converter-gemma-7b-it-bf16", "llama": "checkpoint-converter-llama-3-8b-bf16"}
DEPLOYMENT, JOB = "kubernetes:apps/v1:Deployment", "kubernetes:batch/v1:Job"


def build(base, **overrides):
    args = {**base, "hf_token": pulumi.Output.secret(TOKEN), **overrides}
    return capture(lambda: JetStreamStack("js", args))


@pytest.fixture(scope="module", params=["gemma", "llama"])
def tutorial(request):
    return request.param, build(GEMMA if request.param == "gemma" else LLAMA)


def one(mocks, typ, name):
    return mocks.named(typ, name).inputs


def pod(mocks, typ=DEPLOYMENT, name="js-deployment"):
    return one(mocks, typ, name)["spec"]["template"]["spec"]


def containers(mocks):
    return {c["name"]: c for c in pod(mocks)["containers"]}


def test_pool_scales_from_zero_to_two_ct5lp_8t_nodes_in_the_zone(tutorial):
    _, mocks = tutorial
    cluster = one(mocks, "gcp:container/cluster:Cluster", "js-cluster")
    assert cluster["location"] == "us-west4"  # regional, as the tutorial
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "proj.svc.id.goog"}
    system = one(mocks, "gcp:container/nodePool:NodePool", "js-cluster-system")
    assert system["nodeConfig"]["machineType"] == "e2-standard-4"
    pool = one(mocks, "gcp:container/nodePool:NodePool", "js-cluster-tpu-nodepool")
    assert pool["name"] == "tpu-nodepool"
    assert pool["nodeConfig"]["machineType"] == "ct5lp-hightpu-8t"
    # No TPU node before the servers ask: 0..replicas, per zone (the pool has one zone), no fixed or initial count.
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 2}
    assert "nodeCount" not in pool and "initialNodeCount" not in pool
    assert pool["nodeLocations"] == ["us-west4-a"]
    assert "placementPolicy" not in pool  # single-host: no --tpu-topology


def test_bucket_is_hardened_and_the_only_grant_is_on_it(tutorial):
    _, mocks = tutorial
    bucket = one(mocks, "gcp:storage/bucket:Bucket", "js-checkpoints")
    assert bucket["uniformBucketLevelAccess"] is True and bucket["publicAccessPrevention"] == "enforced"
    assert bucket["location"] == "US-WEST4" and bucket["forceDestroy"] is False
    (grant,) = mocks.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    assert grant.inputs["bucket"] == BUCKET
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"] == "serviceAccount:wi-jetstream@proj.iam.gserviceaccount.com"
    # Nothing project-wide: no roles/storage.objectUser on the project, no insightsCollectorService.
    assert project_roles(mocks) == []  # only the nodes' own minimal GKE role is project-wide


def test_a_dedicated_ksa_impersonates_wi_jetstream(tutorial):
    _, mocks = tutorial
    (account,) = workload_accounts(mocks)
    assert account.inputs["accountId"] == "wi-jetstream"
    (binding,) = mocks.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == "serviceAccount:proj.svc.id.goog[jetstream/jetstream]"  # not [default/default]
    (ksa,) = mocks.of_type("kubernetes:core/v1:ServiceAccount")
    assert ksa.inputs["metadata"]["name"] == "jetstream" and ksa.inputs["metadata"]["namespace"] == "jetstream"
    assert ksa.inputs["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "wi-jetstream@proj.iam.gserviceaccount.com"
    }
    for spec in (pod(mocks), pod(mocks, JOB, "js-converter")):
        assert spec["serviceAccountName"] == "jetstream"
        assert spec["automountServiceAccountToken"] is False


def test_token_is_a_secret_read_from_a_file(tutorial):
    _, mocks = tutorial
    secret = one(mocks, "kubernetes:core/v1:Secret", "js-hf-secret")
    assert secret["metadata"]["name"] == "huggingface-secret"
    assert secret["stringData"][SECRET_SIG] and set(secret["stringData"]["value"]) == {"HUGGINGFACE_TOKEN"}
    job = pod(mocks, JOB, "js-converter")
    assert TOKEN not in json.dumps(job) and TOKEN not in json.dumps(pod(mocks))
    (converter,) = job["containers"]
    assert {"name": "huggingface-credentials", "mountPath": "/huggingface", "readOnly": True} in converter[
        "volumeMounts"
    ]
    volume = next(v for v in job["volumes"] if v["name"] == "huggingface-credentials")
    assert volume["secret"] == {
        "secretName": "huggingface-secret",
        "defaultMode": 0o400,
        "items": [{"key": "HUGGINGFACE_TOKEN", "path": "HUGGINGFACE_TOKEN"}],
    }
    # The token is no variable; HOME, and the Hugging Face client's state in it, is on the scratch disk.
    assert [e["name"] for e in converter.get("env", [])] == ["HF_XET_CHUNK_CACHE_SIZE_BYTES", "HOME", "USER", "LOGNAME"]
    # The converter-flow server reads the converted checkpoint, never the token.
    assert "huggingface-credentials" not in {v["name"] for v in pod(mocks)["volumes"]}


def test_converter_job_has_the_exact_per_model_arguments_and_no_tpu(tutorial):
    model, mocks = tutorial
    job = one(mocks, JOB, "js-converter")
    assert job["metadata"]["name"] == JOB_NAMES[model]  # one name per model: two can run at once
    spec = job["spec"]
    assert spec["ttlSecondsAfterFinished"] == 24 * 3600  # not upstream's 30 s: the logs can be read
    assert spec["backoffLimit"] == 2 and spec["activeDeadlineSeconds"] == 120 * 60
    template = spec["template"]["spec"]
    assert template["restartPolicy"] == "Never"
    (container,) = template["containers"]
    assert container["name"] == "inference-checkpoint"
    assert container["image"] == "us-docker.pkg.dev/cloud-tpu-images/inference/inference-checkpoint:v0.2.3"
    assert container["args"] == CONVERTER_ARGS[model]
    assert all(arg.count("=") >= 1 and arg.startswith("-") and not arg.startswith("--") for arg in container["args"])
    resources = container["resources"]
    assert "google.com/tpu" not in resources["requests"] and "google.com/tpu" not in resources.get("limits", {})
    assert resources["requests"]["cpu"] == "8" and resources["requests"]["memory"] == "64Gi"
    # Standard: the jobs pool (a CPU node from 0), selected by GKE's pool label, its taint tolerated; no TPU at all.
    assert template["nodeSelector"] == {"cloud.google.com/gke-nodepool": "jobs"}
    assert template["tolerations"] == [
        {"key": "tpu-stacks.dev/jobs", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    scratch = next(v for v in template["volumes"] if v["name"] == "scratch")
    claim = scratch["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "150Gi" and claim["storageClassName"] == "standard-rwo"
    assert {m["mountPath"] for m in container["volumeMounts"] if m["name"] == "scratch"} == {
        "/base",
        "/pt-ckpt",
        "/tmp",
        "/home/app",  # HOME: gcloud's config, the Hugging Face cache, the script's user-installed packages
        "/jetstream-pytorch",  # the script clones jetstream-pytorch here (the root filesystem is read-only)
    }
    assert "home" not in {v["name"] for v in template["volumes"]}  # no 2 GiB HOME emptyDir


def test_deployment_has_both_containers_with_per_model_args(tutorial):
    model, mocks = tutorial
    deployment = one(mocks, DEPLOYMENT, "js-deployment")
    assert deployment["metadata"]["name"] == "jetstream-pytorch-server" and deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}  # no third TPU node
    spec = pod(mocks)
    assert spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    server, http = containers(mocks)["jetstream-pytorch-server"], containers(mocks)["jetstream-http"]
    assert list(containers(mocks)) == ["jetstream-pytorch-server", "jetstream-http"]
    assert server["args"] == SERVER_ARGS[model]
    assert server["image"].endswith("/jetstream-pytorch-server:v0.2.3") and http["image"].endswith(
        "/jetstream-http:v0.2.2"
    )
    assert server["resources"]["requests"] == {"google.com/tpu": "8", "cpu": "8", "memory": "64Gi"}
    assert server["resources"]["limits"]["google.com/tpu"] == "8"
    assert http["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}
    metrics = {"name": "metrics", "containerPort": 9090}  # JetStream's --prometheus_port, scraped by PodMonitoring
    assert server["ports"] == [{"name": "grpc", "containerPort": 9000}, metrics] and http["ports"] == [
        {"name": "http", "containerPort": 8000}
    ]
    assert server["startupProbe"]["tcpSocket"] == {"port": 9000}
    assert server["startupProbe"]["failureThreshold"] * server["startupProbe"]["periodSeconds"] == 30 * 60
    assert server["livenessProbe"]["tcpSocket"] == {"port": 9000}
    # HTTP side: jetstream-http v0.2.2 predates /healthcheck, so it is probed at its root.
    assert http["readinessProbe"]["httpGet"] == {"path": "/", "port": 8000}
    assert http["livenessProbe"]["httpGet"] == {"path": "/", "port": 8000}
    annotations = deployment["metadata"]["annotations"]
    assert (
        annotations["tpu-stacks.dev/engine"],
        annotations["tpu-stacks.dev/batch"],
        annotations["tpu-stacks.dev/context"],
    ) == ("jetstream", "32", "2048")


def test_checkpoint_is_a_read_only_fuse_mount_behind_a_wait(tutorial):
    model, mocks = tutorial
    spec = pod(mocks)
    volume = next(v for v in spec["volumes"] if v["name"] == "gcs-fuse-checkpoint")
    assert volume["csi"] == {
        "driver": "gcsfuse.csi.storage.gke.io",
        "readOnly": True,
        "volumeAttributes": {"bucketName": BUCKET, "mountOptions": "implicit-dirs"},
    }
    server = containers(mocks)["jetstream-pytorch-server"]
    assert {"name": "gcs-fuse-checkpoint", "mountPath": "/models", "readOnly": True} in server["volumeMounts"]
    template = one(mocks, DEPLOYMENT, "js-deployment")["spec"]["template"]
    assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert template["metadata"]["annotations"]["gke-gcsfuse/memory-limit"] != "0"
    wait = spec["initContainers"][0]
    assert wait["name"] == "wait-for-checkpoint"
    directory = "gemma-7b-it" if model == "gemma" else "llama-3-8b"
    script = wait["command"][2]
    assert f"gs://{BUCKET}/pytorch/{directory}/final/bf16/model.safetensors" in script and "tokenizer.model" in script
    assert script.startswith("until ") and JOB_NAMES[model] in script  # waits and says where to look; never exits 1


def test_compile_cache_is_per_pod_and_synced_through_the_api(tutorial):
    model, mocks = tutorial
    spec = pod(mocks)
    server = containers(mocks)["jetstream-pytorch-server"]
    assert {"name": "JAX_COMPILATION_CACHE_DIR", "value": "/jax-cache"} in server["env"]
    restore, upload = spec["initContainers"][1:]
    slug = "google-gemma-7b-it" if model == "gemma" else "meta-llama-meta-llama-3-8b"
    remote = f"gs://{BUCKET}/jax-cache/{slug}/v5e-2x4/v0.2.3"  # keyed by model, slice and server build
    assert restore["command"][2].startswith(f"gcloud storage rsync --recursive {remote} /jax-cache ")
    assert f"--no-clobber /jax-cache {remote}" in upload["command"][2] and upload["restartPolicy"] == "Always"
    assert "gcsfuse" not in upload["command"][2]  # the API (atomic object writes), never the FUSE mount
    assert next(v for v in spec["volumes"] if v["name"] == "jax-cache")["emptyDir"] == {"sizeLimit": "20Gi"}


def test_service_is_cluster_ip_on_both_ports_and_the_metrics_port_where_the_engine_serves_one(tutorial):
    """The converter flow's engine serves metrics (`--prometheus_port`): the smoke test reads them through the Service."""
    _, mocks = tutorial
    service = one(mocks, "kubernetes:core/v1:Service", "js-service")
    assert service["metadata"]["name"] == "jetstream-svc"
    assert service["spec"]["type"] == "ClusterIP" and service["spec"]["selector"] == {"app": "jetstream-pytorch-server"}
    assert [(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [
        ("jetstream-http", 8000, 8000),
        ("jetstream-grpc", 9000, 9000),
        ("metrics", 9090, 9090),
    ]
    download = build(GEMMA, flow="download")
    ports = one(download, "kubernetes:core/v1:Service", "js-service")["spec"]["ports"]
    assert [p["name"] for p in ports] == ["jetstream-http", "jetstream-grpc"]  # `jpt serve` exports no metrics


def test_outputs_port_forward_curl_and_checkpoint_path():
    keys = ("service_name", "port_forward", "curl", "checkpoint_path", "converter_job")
    values = {}

    def make():
        stack = JetStreamStack("js", {**GEMMA, "hf_token": pulumi.Output.secret(TOKEN)})
        collected = pulumi.Output.all(*(getattr(stack, key) for key in keys)).apply(
            lambda got: values.update(zip(keys, got))
        )
        return SimpleNamespace(kubeconfig=collected)  # capture() waits for this output

    capture(make)
    assert values["service_name"] == "jetstream-svc"
    assert values["port_forward"] == "kubectl port-forward -n jetstream svc/jetstream-svc 8000:8000"
    assert values["curl"] == (
        'curl --request POST --header "Content-type: application/json" -s localhost:8000/generate '
        '--data \'{"prompt": "What are the top 5 programming languages", "max_tokens": 200}\''
    )
    assert values["checkpoint_path"] == f"gs://{BUCKET}/pytorch/gemma-7b-it/final/bf16/"
    assert values["converter_job"] == "checkpoint-converter-gemma-7b-it-bf16"


def test_download_flow_has_no_converter_and_reads_the_token_file():
    mocks = build(GEMMA, flow="download")
    assert [job.name for job in mocks.of_type(JOB)] == ["js-smoke-test"]  # no converter; the smoke test only
    spec = pod(mocks)
    server, http = containers(mocks)["jetstream-pytorch-server"], containers(mocks)["jetstream-http"]
    assert server["image"].endswith(":v0.2.4") and http["image"].endswith("/jetstream-http:v0.2.3")
    assert server["args"] == [
        "--model_id=google/gemma-7b-it",
        "--override_batch_size=30",
        "--enable_model_warmup=True",
        "--max_input_length=1024",
        "--max_output_length=1024",
        "--working_dir=/weights",
        "--internal_jax_compilation_cache=/jax-cache",
    ]
    assert {"name": "huggingface-credentials", "mountPath": "/huggingface", "readOnly": True} in server["volumeMounts"]
    assert http["readinessProbe"]["httpGet"] == {"path": "/healthcheck", "port": 8000}  # v0.2.3 has it
    assert all(v["name"] != "gcs-fuse-checkpoint" for v in spec["volumes"])
    assert next(v for v in spec["volumes"] if v["name"] == "weights")["emptyDir"] == {"sizeLimit": "20Gi"}
    assert [c["name"] for c in spec["initContainers"]] == ["jax-cache-restore", "jax-cache-upload"]
    annotations = one(mocks, DEPLOYMENT, "js-deployment")["metadata"]["annotations"]
    assert (annotations["tpu-stacks.dev/batch"], annotations["tpu-stacks.dev/context"]) == ("30", "2048")


def test_the_jobs_pool_exists_only_where_the_converter_runs_on_it():
    """The converter flow on Standard gets it; the download flow has no converter, a nodeSelector runs it on the
    user's nodes, and an existing cluster's pools are not this stack's: no jobs pool in any of them."""

    def pools(mocks):
        return sorted(p.inputs["name"] for p in mocks.of_type("gcp:container/nodePool:NodePool"))

    assert pools(build(GEMMA)) == ["jobs", "system", "tpu-nodepool"]
    assert pools(build(GEMMA, flow="download")) == ["system", "tpu-nodepool"]
    mine = build(GEMMA, converter={"node_selector": {"pool": "big-cpus"}})
    assert pools(mine) == ["system", "tpu-nodepool"]
    job = pod(mine, JOB, "js-converter")
    assert job["nodeSelector"] == {"pool": "big-cpus"} and "tolerations" not in job
    existing = {**CLUSTER, "existing": {"name": "mine", "location": "us-west4"}}
    assert pools(build(GEMMA, cluster=existing)) == []  # its TPU pool is described, not created
    # there the converter still runs on the TPU pool's CPUs, taking no chip (that pool is the user's, and up anyway)
    assert pod(build(GEMMA, cluster=existing), JOB, "js-converter")["nodeSelector"] == {
        "cloud.google.com/gke-nodepool": "tpu-nodepool"
    }


def test_the_converter_waits_for_the_jobs_pool_and_the_servers_for_the_tpu_pool():
    resources = registered(GEMMA)
    converter, server = resources["js-converter"], resources["js-deployment"]
    jobs, tpu = resources["js-cluster-jobs"].urn, resources["js-cluster-tpu-nodepool"].urn
    assert jobs in converter.dependencies and tpu not in converter.dependencies
    assert {tpu, converter.urn} <= set(server.dependencies)


def test_autopilot_declares_no_pool_and_the_converter_gets_a_cpu_node():
    mocks = build({**LLAMA, "cluster": {"project": "proj", "location": "us-west4", "mode": "autopilot"}}, zone=None)
    assert mocks.of_type("gcp:container/nodePool:NodePool") == []
    job = pod(mocks, JOB, "js-converter")
    assert "nodeSelector" not in job and "tolerations" not in job
    assert pod(mocks)["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "2x4"


def test_quantized_settings_fit_more_and_use_an_int8_checkpoint():
    mocks = build(LLAMA, batch_size=96, max_cache_length=8192, quantize_weights=True, quantize_kv_cache=True)
    (container,) = pod(mocks, JOB, "js-converter")["containers"]
    assert "-q=True" in container["args"] and container["args"][2].endswith("/pytorch/llama-3-8b/final/int8/")
    server = containers(mocks)["jetstream-pytorch-server"]
    assert "--quantize_kv_cache=True" in server["args"] and "--batch_size=96" in server["args"]
    assert one(mocks, JOB, "js-converter")["metadata"]["name"] == "checkpoint-converter-llama-3-8b-int8"


def test_auto_topology_picks_the_smallest_single_host_slice():
    mocks = build(LLAMA, topology="auto", replicas=1)
    pool = one(mocks, "gcp:container/nodePool:NodePool", "js-cluster-tpu-nodepool")
    assert (pool["nodeConfig"]["machineType"], pool["autoscaling"]["maxNodeCount"]) == ("ct5lp-hightpu-4t", 1)


def test_the_pool_is_the_plans_one_slice_with_a_node_per_replica():
    stack = {}
    mocks = capture(lambda: stack.setdefault("js", JetStreamStack("js", {**GEMMA, "hf_token": "t", "replicas": 3})))
    plan = stack["js"].plan
    (pool,) = plan.cluster.pools_of(0)
    assert plan.pool == pool and plan.cluster.pools == (pool,)
    assert (pool.name, pool.autoscaling_min, pool.autoscaling_max, pool.zone, pool.shape.machine_type) == (
        "tpu-nodepool",
        0,
        3,
        "us-west4-a",
        "ct5lp-hightpu-8t",
    )
    declared = one(mocks, "gcp:container/nodePool:NodePool", "js-cluster-tpu-nodepool")
    assert (declared["name"], declared["autoscaling"]["maxNodeCount"]) == ("tpu-nodepool", 3)
    assert plan.cluster.region == "us-west4" and plan.cluster.spec.addons.gcs_fuse is True


def test_tensor_parallelism_is_the_projects_one_rule(tutorial):
    _, mocks = tutorial
    plan = plan_jetstream(JetStreamSpec(model="google/gemma-7b-it", zone="us-west4-a"), ClusterSpec(**CLUSTER), True)
    assert plan.tensor_parallel_size == tensor_parallel_size(plan.shape) == 8
    annotations = one(mocks, DEPLOYMENT, "js-deployment")["metadata"]["annotations"]
    assert annotations[TENSOR_PARALLEL] == str(tensor_parallel_size(plan.shape))


def test_download_flow_needs_no_gcs_fuse():
    mocks = build(GEMMA, flow="download", cluster={**CLUSTER, "addons": {"gcs_fuse": False}})
    cluster = one(mocks, "gcp:container/cluster:Cluster", "js-cluster")
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": False}
    assert "gke-gcsfuse/volumes" not in json.dumps(one(mocks, DEPLOYMENT, "js-deployment"))


def test_the_decision_layer_imports_no_provider_sdk():
    code = (
        "import sys, tpu_stacks.jetstream.plan, tpu_stacks.jetstream.spec, tpu_stacks.jetstream.models; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "base,overrides,message",
    [
        (GEMMA, {"model": "acme/unknown-7b"}, "jetstream.model: 'acme/unknown-7b' is not in the model catalogue"),
        (
            GEMMA,
            {"model": "meta-llama/Llama-3.1-70B"},
            "jetstream.model: 'meta-llama/Llama-3.1-70B' is not served by JetStream-PyTorch; JetStream knows: google/gemma-7b-it",
        ),
        (
            GEMMA,
            {"model": "google/gemma-7b"},
            "jetstream.model: 'google/gemma-7b' has no known checkpoint-converter arguments",
        ),
        (
            GEMMA,
            {"batch_size": 256, "max_cache_length": 8192},
            "jetstream.batchSize: '256 x 8192 tokens' is the KV cache JetStream pre-allocates: 916.7 GiB",
        ),
        (
            LLAMA,
            {"batch_size": 96, "max_cache_length": 8192},
            "jetstream.batchSize: '96 x 8192 tokens' is the KV cache JetStream pre-allocates",
        ),
        (
            GEMMA,
            {"flow": "download", "max_input_length": 4096, "max_output_length": 4096, "batch_size": 128},
            "jetstream.batchSize: '128 x 8192 tokens' is the KV cache",  # 16,384 is beyond Gemma's 8,192 (test_plan)
        ),
        (
            GEMMA,
            {"topology": "1x1"},
            "jetstream.topology: '1x1' cannot hold google/gemma-7b-it: weights and runtime alone need",
        ),
        (
            GEMMA,
            {"topology": "4x4"},
            "jetstream.topology: '4x4' is a multi-host slice (4 VMs); JetStream-PyTorch serves "
            "from one VM; use a single-host v5e topology: 1x1, 2x2, 2x4",
        ),
        (GEMMA, {"gsa_name": "WI_Jetstream"}, "jetstream.gsa_name: 'WI_Jetstream' is not a valid service account id"),
        (GEMMA, {"namespace": "Serving"}, "jetstream.namespace: 'Serving' is not a valid Kubernetes name"),
        (GEMMA, {"topology": "3x3"}, "jetstream.topology: '3x3' is not a v5e topology"),
        (GEMMA, {"hf_token": None}, "hf_token is required: google/gemma-7b-it is gated on Hugging Face"),
        # a slice too small is reported even without a token: the token must not hide it
        (GEMMA, {"topology": "1x1", "hf_token": None}, "jetstream.topology: '1x1' cannot hold google/gemma-7b-it"),
        (GEMMA, {"zone": None}, "jetstream.zone is required: cluster us-west4 is regional"),
        (
            GEMMA,
            {"tpu_generation": "tpu7x"},
            "jetstream.tpuGeneration: 'tpu7x' is not served by the pinned JetStream-PyTorch images (v0.2.x, 2024; "
            "upstream archived 1 Feb 2026), which serve TPU v5e; use tpuGeneration: v5e, or serve on tpu7x with "
            "VllmStack (tpu-stacks:vllm)",
        ),
        (GEMMA, {"zone": "us-east1-b"}, "jetstream.zone: 'us-east1-b' is not a zone of us-west4"),
        (GEMMA, {"spot": True, "reservation": "tpu-res"}, "jetstream.spot: True cannot consume a reservation"),
        (GEMMA, {"reservation": "Bad_Res"}, "jetstream.reservation: 'Bad_Res' is not a reservation name"),
        (
            GEMMA,
            {"cluster": {**CLUSTER, "slices": [{"generation": "v5e", "topology": "2x4"}]}},
            "cluster.slices: '1 slice(s)' are derived from jetstream.model; remove cluster.slices",
        ),
        (
            GEMMA,
            {"cluster": {**CLUSTER, "addons": {"gcs_fuse": False}}},
            "cluster.addons.gcsFuse: False is required by JetStreamStack",
        ),
        (GEMMA, {"server_image": "us-docker.pkg.dev/x/jetstream-pytorch-server:latest"}, "jetstream.serverImage: "),
        (GEMMA, {"max_input_length": 4096}, "jetstream.maxInputLength: 4096 applies only to flow download"),
        (
            GEMMA,
            {"flow": "download", "max_cache_length": 4096},
            "jetstream.maxCacheLength: 4096 applies only to flow converter",
        ),
        (GEMMA, {"batch_size": 0}, "jetstream.batch_size: 0 is not accepted"),
        (GEMMA, {"converter": {"disk_gb": 10}}, "jetstream.converter.disk_gb: 10 is not a known setting; did you mean"),
        (
            GEMMA,
            {"cluster": {**CLUSTER, "jobs_pool": {"machine_type": "e2-highmem-8"}}},
            "cluster.jobsPool.machineType: 'e2-highmem-8' leaves a pod 7.41 CPU and 55.5 GiB (GKE's reservations and "
            "the node's own pods taken), less than the converter Job requests: 8 CPU (jetstream.converter.cpu), 64Gi "
            "(jetstream.converter.memory); use e2-highmem-16 (the smallest that holds it), or remove machineType",
        ),
        (
            GEMMA,
            {"converter": {"memory": "2Ti"}},
            "jetstream.converter.memory: '2Ti' with 8 CPU is more than one node of any catalogued E2/N2 machine type",
        ),
        (
            GEMMA,
            {"flow": "download", "cluster": {**CLUSTER, "jobs_pool": {"machine_type": "e2-highmem-16"}}},
            "cluster.jobsPool: '<set>' holds only the converter Job, which flow download has not; remove it",
        ),
        (
            GEMMA,
            {"converter": {"node_selector": {"pool": "mine"}}, "cluster": {**CLUSTER, "jobs_pool": {}}},
            "cluster.jobsPool: '<set>' would hold nothing: jetstream.converter.nodeSelector runs the converter on",
        ),
    ],
    ids=[
        "unknown",
        "not-jetstream",
        "no-converter-args",
        "kv-gemma",
        "kv-llama",
        "kv-download",
        "too-small",
        "multi-host",
        "gsa-name",
        "namespace",
        "topology",
        "token",
        "fit-before-token",
        "zone",
        "tpu7x",
        "zone-elsewhere",
        "spot-and-reservation",
        "reservation-name",
        "slices-given",
        "fuse-off",
        "latest",
        "flow-input",
        "flow-cache",
        "batch-zero",
        "typo",
        "jobs-pool-too-small",
        "converter-larger-than-any-node",
        "jobs-pool-download-flow",
        "jobs-pool-beside-node-selector",
    ],
)
def test_errors_before_any_resource(base, overrides, message):
    args = {**base, "hf_token": pulumi.Output.secret("t"), **overrides}
    args = {key: value for key, value in args.items() if value is not None}
    assert message in refused(lambda: JetStreamStack("bad", args))


def registered(base, **overrides):
    """Every registration (with its options as the engine receives them) of JetStreamStack('js', ...)."""
    args = {**base, "hf_token": pulumi.Output.secret(TOKEN), **overrides}
    return {r.name: r for r in capture_registrations(lambda: JetStreamStack("js", args))}


@pytest.mark.parametrize("flow", ["converter", "download"])
def test_pulumi_waits_as_long_as_the_startup_probe_allows_and_only_after_the_tpu_pool(flow):
    """pulumi-kubernetes gives a Deployment 10 minutes by default; the server's startup probe allows 30."""
    resources = registered(GEMMA, flow=flow)
    server_deployment = resources["js-deployment"]
    probe = next(c for c in server_deployment.props["spec"]["template"]["spec"]["containers"] if "startupProbe" in c)
    assert probe["startupProbe"]["periodSeconds"] * probe["startupProbe"]["failureThreshold"] == 30 * 60
    # a TPU node (15: the pool scales from 0 for these pods) + the image (10) + the probe (30); a rollout restarts
    # the 2 replicas one by one
    assert (
        NODE_PROVISIONING_MINUTES == 15
        and resources["js-cluster-tpu-nodepool"].props["autoscaling"]["minNodeCount"] == 0
    )
    assert server_deployment.custom_timeouts == {"create": "55m", "update": "95m"}
    # on the pool even when no converter Job orders it (download flow)
    assert resources["js-cluster-tpu-nodepool"].urn in server_deployment.dependencies
    assert ("js-converter" in resources) == (flow == "converter")


def test_the_converter_is_awaited_just_past_its_own_deadline():
    job = registered(GEMMA)["js-converter"]
    assert job.props["spec"]["activeDeadlineSeconds"] == 120 * 60
    assert job.custom_timeouts == {"create": "122m", "update": "122m"}  # its DeadlineExceeded, not our timeout
