"""VllmStack under mocks: the tutorial's objects, derived from the model, secure by default."""

import json

import pulumi
import pytest

from tests.clients import CLIENTS
from tests.mocks import autonamed, capture, refused
from tests.policies.harness import capture as capture_registrations
from tpu_stacks.vllm.component import VllmStack

SECRET_SIG = "4dabf18193072939515e22adb298388d"
TUTORIAL = {
    "cluster": {"project": "proj", "location": "us-central1-b", "release_channel": "RAPID"},
    "model": "meta-llama/Llama-3.1-70B",
    "tpu_generation": "v6e",
    "source_ranges": CLIENTS,
}


def tutorial(**overrides):
    args = dict(TUTORIAL)
    args["hf_token"] = pulumi.Output.secret("hf_dummy_token_value")
    args.update(overrides)
    return capture(lambda: VllmStack("vllm", args))


@pytest.fixture(scope="module")
def mocks():
    return tutorial()


def one(mocks, typ, name):
    return mocks.named(typ, name).inputs


def deployment(mocks):
    return one(mocks, "kubernetes:apps/v1:Deployment", "vllm-deployment")


def server(mocks):
    (container,) = deployment(mocks)["spec"]["template"]["spec"]["containers"]
    return container


def test_pool_is_sized_from_the_model_and_follows_the_hpa(mocks):
    pool = one(mocks, "gcp:container/nodePool:NodePool", "vllm-cluster-vllm-pool")
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert pool["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert "placementPolicy" not in pool


def test_bucket_is_hardened_and_granted_to_the_ksa_only(mocks):
    bucket = one(mocks, "gcp:storage/bucket:Bucket", "vllm-weights")
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["forceDestroy"] is False
    grant = one(mocks, "gcp:storage/bucketIAMMember:BucketIAMMember", "vllm-identity-bucket-0")
    assert grant["role"] == "roles/storage.objectUser"
    assert grant["bucket"] == autonamed("vllm-weights")
    assert grant["member"] == (
        "principal://iam.googleapis.com/projects/123456789012/locations/global/"
        "workloadIdentityPools/proj.svc.id.goog/subject/ns/vllm/sa/vllm"
    )


def test_token_is_a_secret_mounted_as_a_file(mocks):
    secret = one(mocks, "kubernetes:core/v1:Secret", "vllm-secret")
    assert secret["metadata"]["name"] == "hf-secret"
    data = secret["stringData"]
    assert SECRET_SIG in data  # reaches the engine as a Pulumi secret
    assert set(data["value"]) == {"hf_api_token"}
    container = server(mocks)
    assert "hf_dummy_token_value" not in json.dumps(deployment(mocks))  # the token never reaches the workload
    env = {variable["name"]: variable for variable in container["env"]}
    assert env["HF_TOKEN_PATH"]["value"] == "/var/run/secrets/huggingface/hf_api_token"
    assert "HUGGING_FACE_HUB_TOKEN" not in env and "HF_TOKEN" not in env
    assert {"name": "hf-token", "mountPath": "/var/run/secrets/huggingface", "readOnly": True} in container[
        "volumeMounts"
    ]


def test_deployment_is_derived_from_the_catalogue(mocks):
    spec = deployment(mocks)["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    container = server(mocks)
    assert "--tensor-parallel-size=8" in container["args"]
    assert "--model=meta-llama/Llama-3.1-70B" in container["args"] and "--max-model-len=4096" in container["args"]
    assert container["resources"]["requests"]["google.com/tpu"] == "8"
    assert container["resources"]["limits"]["google.com/tpu"] == "8"
    assert container["image"] == "docker.io/vllm/vllm-tpu:v0.29.0"
    assert container["startupProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    assert container["startupProbe"]["failureThreshold"] * container["startupProbe"]["periodSeconds"] >= 30 * 60
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    annotations = deployment(mocks)["spec"]["template"]["metadata"]["annotations"]
    assert annotations["gke-gcsfuse/volumes"] == "true"
    assert annotations["gke-gcsfuse/memory-limit"] != "0" and annotations["gke-gcsfuse/cpu-limit"] != "0"
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["weights"]["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert "file-cache:enable-parallel-downloads:true" in volumes["weights"]["csi"]["volumeAttributes"]["mountOptions"]
    # the sidecar's cache volume under the name the driver uses, bounded by the weights' size
    assert volumes["gke-gcsfuse-cache"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "145Gi"}
    workload = deployment(mocks)["metadata"]["annotations"]
    assert workload["tpu-stacks.dev/model"] == "meta-llama/Llama-3.1-70B"
    assert workload["tpu-stacks.dev/tensor-parallel-size"] == "8"
    # the prefill step the slice was sized with is the engine's own flag, for the pack to judge the same
    batched = next(a for a in server(mocks)["args"] if a.startswith("--max-num-batched-tokens="))
    assert workload["tpu-stacks.dev/prefill-tokens"] == batched.split("=", 1)[1] == "512"


def test_compile_cache_is_local_per_pod_and_keyed(mocks):
    spec = deployment(mocks)["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in server(mocks)["env"]}
    assert env["VLLM_XLA_CACHE_PATH"] == "/xla-cache"  # never the shared FUSE mount
    restore, upload = spec["initContainers"]
    key = "xla-cache/meta-llama-llama-3.1-70b/v6e-2x4-tp8/v0.29.0"
    assert key in restore["command"][2] and key in upload["command"][2]
    assert "--no-clobber" in upload["command"][2]
    assert upload["restartPolicy"] == "Always"  # a native sidecar
    assert "gcsfuse" not in upload["command"][2]


def test_service_is_internal_by_default(mocks):
    service = one(mocks, "kubernetes:core/v1:Service", "vllm-service")
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    assert service["spec"]["ports"][0]["port"] == 8000


def test_autoscaling_on_vllm_queue(mocks):
    monitor = one(mocks, "kubernetes:monitoring.googleapis.com/v1:PodMonitoring", "vllm-pod-monitoring")
    assert monitor["spec"]["endpoints"] == [{"path": "/metrics", "port": 8000, "interval": "15s"}]
    hpa = one(mocks, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", "vllm-hpa")["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 2)
    (metric,) = hpa["metrics"]
    assert metric["pods"]["metric"]["name"] == "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "10"}
    assert (
        hpa["behavior"]["scaleDown"]["stabilizationWindowSeconds"]
        > hpa["behavior"]["scaleUp"]["stabilizationWindowSeconds"]
    )


def test_metrics_adapter_is_pinned_and_its_iam_is_monitoring_viewer(mocks):
    adapter = one(mocks, "kubernetes:apps/v1:Deployment", "vllm-metrics-adapter-deployment")
    (container,) = adapter["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.15.1-gke.0"
    grant = one(mocks, "gcp:projects/iAMMember:IAMMember", "vllm-metrics-adapter-identity-monitoring-viewer")
    assert grant["role"] == "roles/monitoring.viewer"
    assert grant["member"].endswith("/subject/ns/custom-metrics/sa/custom-metrics-stackdriver-adapter")
    names = {r.inputs["metadata"]["name"] for r in mocks.of_type("kubernetes:apiregistration.k8s.io/v1:APIService")}
    assert names == {
        "v1beta1.custom.metrics.k8s.io",
        "v1beta2.custom.metrics.k8s.io",
        "v1beta1.external.metrics.k8s.io",
    }


def test_public_exposure_needs_source_ranges_and_gets_them():
    mocks = tutorial(exposure="public", source_ranges=["203.0.113.0/24"])
    service = mocks.named("kubernetes:core/v1:Service", "vllm-service").inputs
    assert service["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
    assert "annotations" not in service["metadata"]


def test_open_model_needs_no_token_and_fits_one_chip():
    mocks = capture(
        lambda: VllmStack(
            "dev",
            {
                "cluster": {"project": "proj", "location": "us-central1-b"},
                "model": "Qwen/Qwen2.5-1.5B-Instruct",
                "replicas": {"min": 1, "max": 1},
                "source_ranges": CLIENTS,
            },
        )
    )
    pool = mocks.named("gcp:container/nodePool:NodePool", "dev-cluster-vllm-pool").inputs
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-1t"
    assert mocks.of_type("kubernetes:core/v1:Secret") == []


def test_artifact_registry_remote_repository_serves_the_pinned_image():
    holder = {}

    def make():
        holder["stack"] = VllmStack(
            "reg", {**TUTORIAL, "hf_token": pulumi.Output.secret("t"), "registry": {"mode": "remote"}}
        )
        return holder["stack"]

    mocks = capture(make)
    (repository,) = mocks.of_type("gcp:artifactregistry/repository:Repository")
    assert repository.inputs["mode"] == "REMOTE_REPOSITORY"
    assert repository.inputs["remoteRepositoryConfig"]["dockerRepository"] == {"publicRepository": "DOCKER_HUB"}
    (container,) = mocks.named("kubernetes:apps/v1:Deployment", "reg-deployment").inputs["spec"]["template"]["spec"][
        "containers"
    ]
    assert container["image"] == "us-central1-docker.pkg.dev/proj/vllm-tpu-tpu-cluster/vllm/vllm-tpu:v0.29.0"
    (pull,) = mocks.of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")
    assert pull.inputs["role"] == "roles/artifactregistry.reader"
    assert pull.inputs["member"] == "serviceAccount:tpu-cluster-nodes@proj.iam.gserviceaccount.com"


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"topology": "2x2"}, "vllm.topology: '2x2' cannot hold meta-llama/Llama-3.1-70B: needs"),
        ({"model": "acme/unknown-70b"}, "vllm.model: 'acme/unknown-70b' is not in the model catalogue"),
        ({"hf_token": None}, "hf_token is required: meta-llama/Llama-3.1-70B is gated"),
        ({"image": "vllm/vllm-tpu:latest"}, "vllm.image: 'vllm/vllm-tpu:latest' is not pinned"),
        ({"exposure": "public", "source_ranges": []}, "vllm.sourceRanges: [] is empty for a public endpoint"),
        # an internal load balancer without clients answers the whole VPC; vLLM's API key leaves /invocations open
        ({"source_ranges": []}, "vllm.sourceRanges: [] is empty for the internal load balancer serving the OpenAI"),
        (
            {"source_ranges": [], "api_key": True, "api_key_secret": pulumi.Output.secret("k")},
            "while /invocations serves the same completions without it",
        ),
        ({"exposure": "public", "source_ranges": ["0.0.0.0/0"]}, "opens the endpoint to the whole internet"),
        ({"api_key": True}, "api_key_secret is required when vllm.apiKey is true"),
        (
            {"tpu_generation": "v5e", "model": "meta-llama/Llama-3.1-405B"},
            "runs the vLLM image docker.io/vllm/vllm-tpu:",
        ),
        ({"max_model_len": 0}, "vllm.max_model_len: 0 is not accepted"),
        # the derived slice's refusals name the vllm key the user wrote, not cluster.slices[0]
        ({"reservation": "Bad_Res"}, "vllm.reservation: 'Bad_Res' is not a reservation name"),
        ({"spot": True, "reservation": "r1"}, "vllm.spot: True cannot consume a reservation"),
        ({"maxModelLen": 4096, "modell": "x"}, "vllm.modell: 'x' is not a known setting; did you mean 'model'?"),
        (
            {"cluster": {**TUTORIAL["cluster"], "slices": [{"generation": "v6e", "topology": "2x4"}]}},
            "cluster.slices: '1 slice(s)' are derived from vllm.model; remove cluster.slices",
        ),
        (
            {"cluster": {**TUTORIAL["cluster"], "addons": {"gcsFuse": False}}},
            "cluster.addons.gcsFuse: False is required by VllmStack; remove it or set it to true",
        ),
    ],
)
def test_errors_before_any_resource(overrides, message):
    args = dict(TUTORIAL)
    args["hf_token"] = pulumi.Output.secret("t")
    args.update(overrides)
    if args.get("hf_token") is None:
        del args["hf_token"]
    assert message in refused(lambda: VllmStack("bad", args))


def test_the_hpa_owns_the_replica_count_and_rollouts_never_need_a_spare_tpu_node(mocks):
    spec = deployment(mocks)["spec"]
    assert "replicas" not in spec
    assert spec["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}


def test_a_fixed_replica_count_gets_no_hpa_and_no_adapter():
    mocks = capture(
        lambda: VllmStack(
            "fixed",
            {
                "cluster": {"project": "proj", "location": "us-central1-b"},
                "model": "Qwen/Qwen2.5-1.5B-Instruct",
                "replicas": {"min": 1, "max": 1},
                "source_ranges": CLIENTS,
            },
        )
    )
    assert mocks.named("kubernetes:apps/v1:Deployment", "fixed-deployment").inputs["spec"]["replicas"] == 1
    assert mocks.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler") == []
    assert mocks.of_type("tpu-stacks:index:CustomMetricsAdapter") == []


def registered(args):
    """Every registration (with its options as the engine receives them) of VllmStack('vllm', args)."""
    return {r.name: r for r in capture_registrations(lambda: VllmStack("vllm", args))}


def test_pulumi_waits_as_long_as_the_startup_probe_allows_and_only_after_the_tpu_pool():
    """pulumi-kubernetes gives a Deployment 10 minutes by default; the tutorial's server may take 40."""
    resources = registered({**TUTORIAL, "hf_token": pulumi.Output.secret("t")})
    server_deployment = resources["vllm-deployment"]
    (container,) = server_deployment.props["spec"]["template"]["spec"]["containers"]
    probe = container["startupProbe"]
    assert probe["periodSeconds"] * probe["failureThreshold"] == 40 * 60
    # a TPU node (15) + the image (10) + the probe (40); a rollout restarts up to replicas.max (2) one by one
    assert server_deployment.custom_timeouts == {"create": "65m", "update": "115m"}
    assert resources["vllm-cluster-vllm-pool"].urn in server_deployment.dependencies


def test_the_await_budget_follows_startup_minutes_and_replicas():
    resources = registered(
        {**TUTORIAL, "hf_token": pulumi.Output.secret("t"), "startup_minutes": 90, "replicas": {"min": 1, "max": 1}}
    )
    assert resources["vllm-deployment"].custom_timeouts == {"create": "115m", "update": "115m"}
    # the engine's own wait for its core (vLLM's default 600 s) is the probe's budget, not shorter
    (container,) = resources["vllm-deployment"].props["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    probe = container["startupProbe"]
    assert int(env["VLLM_ENGINE_READY_TIMEOUT_S"]) == 90 * 60 == probe["periodSeconds"] * probe["failureThreshold"]


def test_the_engine_env_is_the_pinned_releases(mocks):
    """v0.29.0 has no VLLM_USE_V1 (vLLM warns of unknown VLLM_* variables); the compile cache variable stays."""
    env = {e["name"]: e.get("value") for e in server(mocks)["env"]}
    assert "VLLM_USE_V1" not in env
    assert env["VLLM_XLA_CACHE_PATH"] == "/xla-cache" and "VLLM_DISABLE_COMPILE_CACHE" not in env
    assert env["VLLM_ENGINE_READY_TIMEOUT_S"] == str(40 * 60)
    without = {
        e["name"]: e.get("value")
        for e in tutorial(compile_cache=False)
        .named("kubernetes:apps/v1:Deployment", "vllm-deployment")
        .inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert without["VLLM_DISABLE_COMPILE_CACHE"] == "1" and "VLLM_XLA_CACHE_PATH" not in without


def test_ready_replicas_is_a_readiness_output():
    """Resolved from the awaited Deployment's status (mocks report none: 0)."""
    values = []

    class Reader:
        def __init__(self):
            stack = VllmStack("vllm", {**TUTORIAL, "hf_token": pulumi.Output.secret("t")})
            self.kubeconfig = stack.ready_replicas.apply(values.append)  # `capture` awaits it

    capture(Reader)
    assert values == [0]


def test_secret_inputs_are_accepted_in_camel_case_as_every_other_input():
    token = "hf_camel_case_token_value"
    mocks = capture(
        lambda: VllmStack(
            "vllm",
            {
                **TUTORIAL,
                "hfToken": pulumi.Output.secret(token),
                "apiKey": True,
                "apiKeySecret": pulumi.Output.secret("k"),
            },
        )
    )
    secret = one(mocks, "kubernetes:core/v1:Secret", "vllm-secret")
    assert token in json.dumps(secret["stringData"])  # the token reached the Kubernetes Secret


def test_a_secret_input_given_in_both_spellings_is_refused():
    message = refused(
        lambda: VllmStack(
            "vllm", {**TUTORIAL, "hf_token": pulumi.Output.secret("a"), "hfToken": pulumi.Output.secret("b")}
        )
    )
    assert message == "hfToken is given twice, also as hf_token; give it once"


def test_an_output_in_a_refused_setting_is_never_stringified():
    message = refused(
        lambda: VllmStack(
            "vllm", {**TUTORIAL, "hf_token": pulumi.Output.secret("a"), "hfTokn": pulumi.Output.secret("x")}
        )
    )
    assert message.startswith("vllm.hfTokn: <an Output> is not a known setting")
    assert "__str__" not in message and "Output[T]" not in message
    message = refused(lambda: VllmStack("vllm", {**TUTORIAL, "model": pulumi.Output.from_input("meta-llama/x")}))
    assert message.startswith("vllm.model: <an Output> is not accepted"), message


def test_a_model_that_does_not_fit_is_reported_before_a_missing_token():
    """Llama 3.1 70B forced onto a 2x2 without a token: the fit is the fundamental error, not the token."""
    message = refused(lambda: VllmStack("vllm", {**TUTORIAL, "topology": "2x2"}))
    assert message.startswith("vllm.topology: '2x2' cannot hold meta-llama/Llama-3.1-70B"), message
    # with the fit fixed, the token is still required
    assert refused(lambda: VllmStack("vllm", dict(TUTORIAL))).startswith("hf_token is required")
