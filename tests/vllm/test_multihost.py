"""VllmStack on a multi-host slice: the slice decides the object (a KubeRay RayService instead of the
Deployment), replicas are whole slices, and the Serve config is Ray Serve LLM's, parsed back as YAML."""

from pathlib import Path

import pulumi
import pytest
import yaml

from tests.clients import CLIENTS
from tests.mocks import capture, refused
from tests.policies.harness import capture as capture_registrations
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.ray_serve import OPENAI_APP_IMPORT_PATH as IMPORT_PATH
from tpu_stacks.catalog.ray_serve import RAY_SERVE_VERSION
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.k8s.connectivity import External, Pods
from tpu_stacks.k8s.platform_flows import KONNECTIVITY_AGENT, api_endpoint
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks.vllm.multihost_plan import SERVE_IMAGE_DIR, image_build_command
from tpu_stacks.vllm.network import network
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VLLM_IMAGE, VllmSpec

ROOT = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Llama-3.1-405B-Instruct"
BUILT = {"mode": "standard", "image": "vllm-tpu:serve-ray2.60.0"}
CLUSTER = {"project": "proj", "location": "us-central1-b", "release_channel": "RAPID"}


def stack(**overrides):
    args = {"cluster": dict(CLUSTER), "model": MODEL, "tpu_generation": "v6e", "registry": dict(BUILT)}
    args["source_ranges"] = list(CLIENTS)
    args["hf_token"] = pulumi.Output.secret("hf_dummy_token_value")
    args.update(overrides)
    return capture(lambda: VllmStack("vllm", args))


def plan(**spec):
    fields = {"model": MODEL, "registry": BUILT, "source_ranges": CLIENTS, **spec}
    return plan_vllm(VllmSpec(**fields), ClusterSpec(**CLUSTER), hf_token_given=True, api_key_given=False)


ONE_SLICE = {"min": 1, "max": 1}


@pytest.fixture(scope="module")
def fixed():
    return stack(replicas=ONE_SLICE)


@pytest.fixture(scope="module")
def ranged():
    return stack(replicas={"min": 1, "max": 3})


def kinds(mocks) -> set[str]:
    return {r.inputs.get("kind") for r in mocks.resources if isinstance(r.inputs, dict)}


def ray_service(mocks):
    (found,) = [r.inputs for r in mocks.resources if r.inputs.get("kind") == "RayService"]
    return found


def workers(mocks):
    (group,) = ray_service(mocks)["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    return group


def serve(mocks):
    return yaml.safe_load(ray_service(mocks)["spec"]["serveConfigV2"])


def test_a_single_host_model_keeps_the_deployment():
    single = stack(model="meta-llama/Llama-3.1-70B", registry={"mode": "none"})
    assert {"Deployment", "HorizontalPodAutoscaler"} <= kinds(single) and "RayService" not in kinds(single)
    assert not plan(model="meta-llama/Llama-3.1-70B").multi_host


def test_405b_is_a_ray_service_over_one_v6e_4x8_slice(fixed):
    assert "RayService" in kinds(fixed) and "Deployment" not in kinds(fixed)
    assert not {"HorizontalPodAutoscaler", "APIService"} & kinds(fixed)  # no HPA, no metrics adapter
    service = ray_service(fixed)
    group = workers(fixed)
    assert group["numOfHosts"] == 8
    (worker,) = group["template"]["spec"]["containers"]
    assert worker["resources"]["limits"]["google.com/tpu"] == "4"
    assert group["template"]["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    head = service["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]
    (head_container,) = head["containers"]
    assert "google.com/tpu" not in head_container["resources"]["limits"]  # the head is a CPU pod
    assert service["spec"]["rayClusterConfig"]["rayVersion"] == RAY_SERVE_VERSION
    # hardened like every server pod; the head keeps no API token without the autoscaler
    assert worker["securityContext"]["runAsNonRoot"] and head["automountServiceAccountToken"] is False
    assert service["metadata"]["annotations"]["pulumi.com/waitFor"] == "condition=Ready"


def test_the_serve_config_is_ray_serve_llms_openai_app_with_tensor_parallelism_32(fixed):
    config = serve(fixed)
    (app,) = config["applications"]
    assert (app["import_path"], app["route_prefix"]) == (IMPORT_PATH, "/")
    (llm,) = app["args"]["llm_configs"]
    # loaded from the folder the download Job wrote on the bucket's mount: the engine downloads nothing
    assert llm["model_loading_config"] == {"model_id": MODEL, "model_source": f"/data/{MODEL}"}
    assert llm["accelerator_type"] == "TPU-V6E"
    assert llm["accelerator_config"] == {"kind": "tpu", "topology": "4x8"}
    kwargs = llm["engine_kwargs"]
    assert (kwargs["tensor_parallel_size"], kwargs["pipeline_parallel_size"]) == (32, 1)
    assert kwargs["max_model_len"] == 4096 and kwargs["distributed_executor_backend"] == "ray"
    assert "download_dir" not in kwargs
    # scaled on requests in flight per replica, the engine's batch as the target (Ray Serve LLM's own default
    # target is 1e9: it would never scale on load)
    assert llm["deployment_config"]["autoscaling_config"] == {
        "min_replicas": 1,
        "max_replicas": 1,
        "target_ongoing_requests": 128,
    }
    assert llm["runtime_env"]["env_vars"]["VLLM_ENGINE_READY_TIMEOUT_S"] == str(
        40 * 60
    )  # startupMinutes, as single-host
    assert llm["runtime_env"]["env_vars"]["TPU_MULTIHOST_BACKEND"] == "ray"
    assert config["http_options"]["port"] == 8000


def test_the_serve_config_exports_the_engines_metrics_through_ray(fixed):
    """The dashboard and alerts of a multi-host stack read vLLM's metrics under Ray's names (`ray_vllm_...`,
    catalog/engines/ray.py `through_ray`), which Ray Serve LLM exports only with `log_engine_metrics` on (ledger:
    ray.serve-llm.log-engine-metrics): the config sets it true explicitly rather than trust a default."""
    (llm,) = serve(fixed)["applications"][0]["args"]["llm_configs"]
    assert llm["log_engine_metrics"] is True


def test_replicas_are_whole_slices(fixed, ranged):
    # fixed: one node pool per slice, scaling atomically 0..8 (no TPU node before the RayService asks); no autoscaler
    fixed_plan = plan(replicas=ONE_SLICE)
    assert [(p.node_count, p.autoscaling_min, p.autoscaling_max) for p in fixed_plan.cluster.pools] == [(None, 0, 8)]
    assert ray_service(fixed)["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] is False
    # a range: a pool per possible slice, each scaling atomically 0..8; KubeRay's autoscaler in whole slices
    pools = plan(replicas={"min": 1, "max": 3}).cluster.pools
    assert [(p.node_count, p.autoscaling_min, p.autoscaling_max) for p in pools] == [(None, 0, 8)] * 3
    cluster = ray_service(ranged)["spec"]["rayClusterConfig"]
    group = workers(ranged)
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"], group["numOfHosts"]) == (1, 1, 3, 8)
    assert cluster["enableInTreeAutoscaling"] is True
    assert cluster["autoscalerOptions"]["securityContext"]["runAsNonRoot"] is True
    assert cluster["headGroupSpec"]["template"]["spec"]["automountServiceAccountToken"] is True
    assert serve(ranged)["applications"][0]["args"]["llm_configs"][0]["deployment_config"]["autoscaling_config"] == {
        "min_replicas": 1,
        "max_replicas": 3,
        "target_ongoing_requests": 128,
    }
    assert "HorizontalPodAutoscaler" not in kinds(ranged)


def test_a_capacity_fallback_applies_through_one_compute_class_without_active_migration():
    """GKE's ComputeClasses take multi-host TPU slices (tpu count = chips per node, the slice's topology):
    the worker group selects the class and GKE creates a slice's pool per pending replica. Active migration
    is off: it would move the slice's hosts one by one, and one evicted host stops the whole Serve replica."""
    cluster = {**CLUSTER, "location": "us-east5-b", "min_version": "1.33.3-gke.1136000"}
    mocks = stack(cluster=cluster, capacity=["spot", "onDemand"], replicas={"min": 1, "max": 2})
    (compute_class,) = [r.inputs for r in mocks.resources if r.inputs.get("kind") == "ComputeClass"]
    priorities = compute_class["spec"]["priorities"]
    assert {p["tpu"]["topology"] for p in priorities} == {"4x8"} and {p["tpu"]["count"] for p in priorities} == {4}
    selector = workers(mocks)["template"]["spec"]["nodeSelector"]
    assert selector["cloud.google.com/compute-class"] == compute_class["metadata"]["name"]
    assert compute_class["spec"]["activeMigration"] == {"optimizeRulePriority": False}


def test_the_service_and_its_exposure_are_unchanged(fixed):
    (service,) = [r.inputs for r in fixed.resources if r.inputs.get("kind") == "Service"]
    assert service["metadata"]["name"] == "vllm-service"
    assert service["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"}]
    # the head, while KubeRay marks its Serve proxy healthy (a TPU host has a proxy only while it holds a replica)
    assert service["spec"]["selector"] == {
        "app": "vllm-tpu",
        "tpu-stacks.dev/ray-node": "head",
        "ray.io/serve": "true",
    }
    public = stack(exposure="public", source_ranges=["203.0.113.0/24"])
    (open_service,) = [r.inputs for r in public.resources if r.inputs.get("kind") == "Service"]
    assert open_service["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]


def test_the_contract_covers_head_workers_serve_and_the_operator():
    decided = plan(replicas={"min": 1, "max": 2})
    head, worker, download = network(decided, {"app": "vllm-tpu"}, (8000,))
    assert head.labels == {"app": "vllm-tpu", "tpu-stacks.dev/ray-node": "head"}
    assert worker.labels == {"app": "vllm-tpu", "tpu-stacks.dev/ray-node": "worker"}
    ray_pods = Pods("vllm", {"app": "vllm-tpu"})

    def flows(group):
        return {(f.direction, f.peer, f.port) for f in group.flows}

    for group in (head, worker):
        assert {("ingress", ray_pods, None), ("egress", ray_pods, None)} <= flows(group)  # GCS, raylets, ...
        assert any(f.direction == "ingress" and f.port == 8080 for f in group.flows)  # Ray's metrics
    # clients reach Serve's proxy on the head only (the Service selects it); the Ray pods reach it as Ray pods
    assert any(f.direction == "ingress" and f.port == 8000 for f in head.flows)
    assert not any(f.direction == "ingress" and f.port == 8000 for f in worker.flows)
    # GKE's Ray add-on (the default) calls the head through konnectivity-agent; no operator label is admitted
    assert ("ingress", KONNECTIVITY_AGENT, 8265) in flows(head)
    assert ("ingress", KONNECTIVITY_AGENT, 8000) in flows(head)  # the operator checks the head's Serve proxy
    assert ("ingress", KONNECTIVITY_AGENT, 8265) not in flows(worker)
    assert not [f for f in head.flows if isinstance(f.peer, Pods) and f.peer.namespace == "*" and f.peer.labels]
    assert any(f.port == 8353 for f in worker.flows) and not any(f.port == 8353 for f in head.flows)
    # Ray's dashboard agent reads the TPU device plugin's metrics on the node (the TPU webhook's address, port-only)
    (plugin,) = [f for f in worker.flows if f.port == 2112]
    assert (plugin.direction, type(plugin.peer).__name__) == ("egress", "Hosts")
    assert not any(f.port == 2112 for f in head.flows)
    assert any(f.direction == "egress" and f.port == 443 for f in head.flows)  # the autoscaler's API calls
    # the download Job: its own labels (no Ray pod's, so no Ray flow reaches it), nothing in, DNS and HTTPS out
    assert download.labels == {"app": "vllm-weights-download"}
    assert not [f for f in download.flows if f.direction == "ingress"]
    assert {(f.port, f.protocol) for f in download.flows} >= {(53, "UDP"), (53, "TCP"), (443, "TCP")}
    assert ray_pods not in {f.peer for f in download.flows}


def test_the_head_calls_the_kubernetes_api_only_when_the_autoscaler_may_change_the_slices():
    """KubeRay's autoscaler (on the head) runs only for a replica range; a fixed count calls no API: min == max
    is fixed, min < max a range (the `<` in vllm/network.py, not `<=`)."""
    (endpoint,) = api_endpoint()

    def head_flows(replicas):
        head, _worker, _download = network(plan(replicas=replicas), {"app": "vllm-tpu"}, (8000,))
        return head.flows

    assert endpoint in head_flows({"min": 1, "max": 2})
    assert endpoint not in head_flows({"min": 2, "max": 2})
    assert endpoint not in head_flows(ONE_SLICE)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"registry": {"mode": "none"}},
            f"vllm.registry.mode: 'none' runs the vLLM image {VLLM_IMAGE}, which has no Ray Serve LLM",
        ),
        ({"extra_args": ["--enforce-eager"]}, "vllm.extraArgs[0]: '--enforce-eager' cannot be given on the multi-host"),
        ({"api_key": True}, "vllm.apiKey: True is not offered on the multi-host 4x8 slice"),
        ({"autoscaling": {"target": 5}}, "vllm.autoscaling: 'num_requests_waiting' has no effect on the multi-host"),
        ({"tpu_generation": "tpu7x"}, "vllm.tpuGeneration: 'tpu7x' is not offered for multi-host serving"),
        # Ray Serve LLM has no API key: an internal load balancer must name its clients, else it answers the VPC
        (
            {"source_ranges": []},
            "vllm.sourceRanges: [] is empty for the internal load balancer of the multi-host 4x8 slice: it answers "
            "every address of the VPC",
        ),
    ],
)
def test_what_the_multi_host_mode_cannot_take_is_refused_in_one_line(spec, message):
    with pytest.raises(UserError) as error:
        plan(**spec)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    overrides = {"registry": spec["registry"]} if "registry" in spec else {}
    if "registry" in spec:
        assert message in refused(lambda: VllmStack("bad", {**_args(), **overrides}))


def test_a_plain_vllm_image_is_refused_in_standard_registry_mode_on_the_multi_host_slice():
    """Registry mode standard runs the image the user pushed: on a multi-host slice it must be the Ray Serve image
    built from ray_serve_image/. A vLLM release tag (the plain image's, as the single-host recipe pushes it) is
    refused in one line naming the key, with the shipped example's tag as the fix, which is accepted."""
    shipped = yaml.safe_load((ROOT / "Pulumi.vllm-405b.yaml").read_text())["config"]["tpu-stacks:vllm"]["registry"]
    for image in (f"vllm-tpu:{VLLM.version}", "vllm-tpu:v0.9.2", f"vllm/vllm-tpu:{VLLM.version}"):
        with pytest.raises(UserError) as error:
            plan(registry={"mode": "standard", "image": image})
        message = str(error.value)
        assert message.startswith(f"vllm.registry.image: '{image}' carries a vLLM release tag") and "\n" not in message
        assert f"no Ray Serve LLM {RAY_SERVE_VERSION}, on the multi-host 4x8 slice" in message
        assert message.endswith(f"e.g. {shipped['image']}")
    assert plan(registry=shipped).multi_host and plan(registry=BUILT).multi_host  # Ray Serve images are taken
    one_host = plan(
        model="meta-llama/Llama-3.1-70B", registry={"mode": "standard", "image": f"vllm-tpu:{VLLM.version}"}
    )
    assert not one_host.multi_host  # one host runs the plain image, as before
    bad = {**_args(), "registry": {"mode": "standard", "image": f"vllm-tpu:{VLLM.version}"}}
    assert "vllm.registry.image: " in refused(lambda: VllmStack("bad", bad))


def test_without_an_api_key_multi_host_names_its_clients_or_stays_in_the_cluster():
    with pytest.raises(UserError, match=r"Ray Serve LLM's OpenAI app has no API key or other authentication"):
        plan(source_ranges=[])
    with pytest.raises(UserError, match=r"remove apiKey and name your clients in vllm.sourceRanges, or use exposure"):
        plan(api_key=True, source_ranges=[])
    assert plan(source_ranges=[], exposure="cluster").multi_host  # ClusterIP: the cluster's pods only
    ranges = {f.peer for f in network(plan(), {"app": "vllm-tpu"}, ())[0].flows if f.port == 8000}
    assert External("10.128.0.0/20") in ranges and External("0.0.0.0/0") not in ranges


def _args():
    return {
        "cluster": dict(CLUSTER),
        "model": MODEL,
        "hf_token": pulumi.Output.secret("t"),
        "registry": dict(BUILT),
        "source_ranges": list(CLIENTS),
    }


def test_the_image_build_command_carries_the_pins_and_runs_as_the_stack_s_builder():
    """One rule with SGLang's build (gcp/cloud_build.py): the stack's project and region, its builder account, the
    source staged in its bucket; the pins as substitutions."""
    account = "projects/p/serviceAccounts/b@p.iam.gserviceaccount.com"
    command = image_build_command("r/p/vllm-tpu:serve-ray2.60.0", VLLM_IMAGE, "p", "us-east5", account, "bkt")
    assert command.startswith(
        f"gcloud builds submit {SERVE_IMAGE_DIR} --project=p --region=us-east5 "
        f"--config={SERVE_IMAGE_DIR}/cloudbuild.yaml"
    )
    assert f"_VLLM_IMAGE={VLLM_IMAGE}" in command and f"_RAY_VERSION={RAY_SERVE_VERSION}" in command
    assert command.endswith(f" --service-account={account} --gcs-source-staging-dir=gs://bkt/source")


def test_only_a_multi_host_stack_with_its_own_registry_declares_a_builder():
    """The Ray Serve image is built into the stack's registry (mode standard); the builder account, its grants and
    the source bucket come with it, and nothing of it on one host."""
    multi = registrations()
    builder = [name for name in multi if name.startswith("vllm-image-builder") or name == "vllm-build-source"]
    assert sorted(builder) == [
        "vllm-build-source",
        "vllm-image-builder",
        "vllm-image-builder-logs",
        "vllm-image-builder-push",
        "vllm-image-builder-source",
    ]
    single = registrations(model="meta-llama/Llama-3.1-8B-Instruct")
    assert "vllm-rayservice" not in single and not [n for n in single if "builder" in n or "build-source" in n]


# The weights: one download Job, awaited before the RayService; the Ray pods only read them.


def registrations(**overrides):
    """Every registration of VllmStack('vllm', ...) with its options (dependencies, timeouts)."""
    args = {"cluster": dict(CLUSTER), "model": MODEL, "tpu_generation": "v6e", "registry": dict(BUILT)}
    args.update(hf_token=pulumi.Output.secret("t"), replicas=ONE_SLICE, source_ranges=list(CLIENTS), **overrides)
    return {r.name: r for r in capture_registrations(lambda: VllmStack("vllm", args))}


def test_one_download_job_writes_the_weights_before_the_ray_service_starts():
    resources = registrations()
    job, service = resources["vllm-weights-download"], resources["vllm-rayservice"]
    assert job.urn in service.dependencies  # pulumi up waits for the Job to complete first
    spec = job.props["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    # the pinned upstream vLLM image (published: vLLM's own huggingface_hub), not the Ray Serve image the user
    # builds during the first up, so the download never waits for that build; one snapshot_download into the mount
    assert container["image"] == VLLM_IMAGE
    head = service.props["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] != VLLM_IMAGE
    assert container["command"][:2] == ["python3", "-c"]
    assert container["command"][3:] == [MODEL, f"/data/{MODEL}"]
    assert "snapshot_download" in container["command"][2] and "'original/*'" in container["command"][2]
    # hardened; the token read from the stack's Secret as a file, never an env value; no TPU
    assert container["securityContext"]["runAsNonRoot"] and pod["automountServiceAccountToken"] is False
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["HF_TOKEN_PATH"] == "/var/run/secrets/huggingface/hf_api_token" and "HF_TOKEN" not in env
    token = next(v for v in pod["volumes"] if v["name"] == "hf-token")
    assert token["secret"]["secretName"] == "hf-secret"
    assert "google.com/tpu" not in container["resources"]["limits"] and "nodeSelector" not in pod
    weights = next(v for v in pod["volumes"] if v["name"] == "weights")
    assert "only-dir=weights" in weights["csi"]["volumeAttributes"]["mountOptions"]
    assert not weights["csi"].get("readOnly")
    assert pod["restartPolicy"] == "Never" and spec["backoffLimit"] == 2
    # budget from the size: 811.7 GB at the documented 100 MB/s = 136 min, plus a CPU node (15) and the image (10)
    assert spec["activeDeadlineSeconds"] == (15 + 10 + 136) * 60
    assert job.custom_timeouts == {"create": "163m", "update": "163m"}


def test_the_ray_pods_mount_the_weights_read_only():
    service = ray_service(stack(replicas=ONE_SLICE))
    cluster = service["spec"]["rayClusterConfig"]
    for template in (cluster["headGroupSpec"]["template"], cluster["workerGroupSpecs"][0]["template"]):
        pod = template["spec"]
        (weights,) = [v for v in pod["volumes"] if v["name"] == "weights"]
        assert weights["csi"]["readOnly"] is True
        (mount,) = [m for c in pod["containers"] for m in c["volumeMounts"] if m["name"] == "weights"]
        assert mount == {"name": "weights", "mountPath": "/data", "readOnly": True}
        assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"


def test_a_single_host_stack_has_no_download_job():
    """One host downloads alone, as before: the server's --download-dir, no Job."""
    single = registrations(model="meta-llama/Llama-3.1-70B", registry={"mode": "none"}, smoke_test=False)
    assert "vllm-deployment" in single and "vllm-weights-download" not in single
    assert not [r for r in single.values() if r.type == "kubernetes:batch/v1:Job"]


def _millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)


def test_the_cpu_pool_holds_the_ray_head_and_the_download_job():
    """The default system pool (one e2-standard-4, about 3.9 allocatable vCPUs) holds neither the 4-CPU Ray head
    nor the download Job, and a Standard cluster provisions no other CPU node: a multi-host stack gets a larger
    one unless cluster.systemPool is given; a single-host stack keeps the default."""
    decided = plan(replicas=ONE_SLICE).cluster.spec.system_pool
    assert (decided.machine_type, decided.nodes) == ("n2-standard-16", 1)
    assert plan(model="meta-llama/Llama-3.1-70B").cluster.spec.system_pool.machine_type == "e2-standard-4"
    chosen = plan_vllm(
        VllmSpec(model=MODEL, registry=BUILT, source_ranges=CLIENTS),
        ClusterSpec(**CLUSTER, systemPool={"machineType": "n2-standard-32", "nodes": 2}),
        hf_token_given=True,
        api_key_given=False,
    ).cluster.spec.system_pool
    assert (chosen.machine_type, chosen.nodes) == ("n2-standard-32", 2)  # yours wins
    resources = registrations()
    job = resources["vllm-weights-download"].props["spec"]["template"]["spec"]["containers"][0]
    head = resources["vllm-rayservice"].props["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]
    asked = _millicores(job["resources"]["requests"]["cpu"]) + _millicores(
        head["containers"][0]["resources"]["requests"]["cpu"]
    )
    assert asked <= 16_000 - 2_000  # both, with room for kube-system, the sidecars and GKE's reservation
