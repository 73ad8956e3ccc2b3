"""serving-clients-named (advisory) on raw programs: hand-written LoadBalancer Services in front of model servers,
declared with pulumi-kubernetes (no project component), judged against the pods the same program runs."""

from typing import Any

import pulumi_kubernetes as k8s

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.catalog.inference_gateway import SAX_HTTP_REPOSITORY

POLICY = "serving-clients-named"
INTERNAL = {"networking.gke.io/load-balancer-type": "Internal"}
VLLM_IMAGE = "vllm/vllm-tpu:v0.29.0"
V6E = "tpu-v6e-slice"


def vllm(name: str = "vllm-tpu", args: tuple[str, ...] = (), env: list[dict[str, Any]] | None = None) -> None:
    """The GKE vLLM tutorial's server ([K-VLLM]): a Deployment labelled `app: <name>`."""
    spec = o.pod(
        V6E,
        "2x4",
        8,
        image=VLLM_IMAGE,
        command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
        args=["--host=0.0.0.0", "--port=8000", "--tensor-parallel-size=8", "--model=meta-llama/Llama-3.1-8B", *args],
        **({"env": env} if env else {}),
    )
    o.deployment(name, spec)


def sax_http() -> None:
    """The Saxml tutorial's HTTP server ([K-SAX] sax-http.yaml): no TPU, its own Deployment."""
    spec = {"containers": [{"name": "sax-http", "image": f"{SAX_HTTP_REPOSITORY}:v1.0.0"}]}
    o.deployment("sax-http", spec)


def findings(build, config: dict[str, Any] | None = None) -> list[Any]:
    found = of(run(capture(build), config), POLICY)
    assert {d.level for d in found} <= {"advisory"}
    return found


def test_an_internal_load_balancer_in_front_of_vllm_without_ranges_is_reported():
    def build():
        vllm()
        o.service("vllm-tpu", notes=INTERNAL)

    (finding,) = findings(build)
    assert finding.urn.endswith("Service::vllm-tpu")
    assert finding.message.startswith(
        "Service serving/vllm-tpu is a LoadBalancer in front of Deployment serving/vllm-tpu (vllm) with no "
        "loadBalancerSourceRanges: it answers every address of the VPC and of the networks connected to it"
    )
    assert "set spec.loadBalancerSourceRanges to your clients' ranges" in finding.message
    assert "\n" not in finding.message


def test_the_same_load_balancer_with_its_clients_ranges_passes():
    def build():
        vllm()
        o.service("vllm-tpu", notes=INTERNAL, loadBalancerSourceRanges=["10.128.0.0/20"])

    assert findings(build) == []


def test_an_api_key_is_named_but_not_taken_for_a_lock():
    """vLLM's key guards /v1, /v2, /inference and /cohere; /invocations answers without it (ledger vllm.api-key.*)."""

    def by_flag():
        vllm(args=("--api-key=$(KEY)",))
        o.service("vllm-tpu", notes=INTERNAL)

    def by_env():
        secret = {"secretKeyRef": {"name": "vllm", "key": "api_key"}}
        vllm(env=[{"name": "VLLM_API_KEY", "valueFrom": secret}])
        o.service("vllm-tpu", notes=INTERNAL)

    for build in (by_flag, by_env):
        (finding,) = findings(build)
        assert "--api-key/VLLM_API_KEY guards /v1, /v2, /inference and /cohere only" in finding.message
        assert "/invocations answers without it" in finding.message


def test_a_public_load_balancer_and_ranges_that_cover_everything_are_reported_too():
    def public():
        vllm()
        o.service("vllm-tpu")

    (finding,) = findings(public)
    assert "it answers the whole internet" in finding.message

    def halves():
        vllm()
        o.service("vllm-tpu", notes=INTERNAL, loadBalancerSourceRanges=["0.0.0.0/1", "128.0.0.0/1"])

    (finding,) = findings(halves)
    assert "with source ranges that together cover 0.0.0.0/0" in finding.message


def test_sax_http_is_a_model_server_by_its_image():
    def build():
        sax_http()
        o.service("sax-http", notes=INTERNAL)

    (finding,) = findings(build)
    assert "in front of Deployment serving/sax-http (saxml front end)" in finding.message


def test_a_rayservice_behind_a_load_balancer_is_a_model_server():
    def build():
        worker = o.pod(V6E, "4x4", 4, image="example/ray-serve:2.60.0")
        service = o.rayservice("llm", worker, 4, "applications: []")
        selector = {"ray.io/node-type": "head"}
        k8s.core.v1.Service(
            "llm-serve",
            metadata={"name": "llm-serve", "namespace": "serving", "annotations": INTERNAL},
            spec={"type": "LoadBalancer", "selector": selector, "ports": [{"port": 8000}]},
        )
        return service

    (finding,) = findings(build)
    assert "in front of RayService serving/llm (Ray Serve)" in finding.message


def test_cluster_ip_services_non_serving_pods_and_other_namespaces_pass():
    def cluster_ip():  # the Inference Gateway's pool and picker Services are ClusterIP
        vllm()
        o.service("vllm-tpu", kind="ClusterIP")

    def not_a_model_server():
        o.deployment("web", {"containers": [{"name": "web", "image": "nginx:1.27"}]})
        o.service("web", notes=INTERNAL)

    def no_selector():
        vllm()
        k8s.core.v1.Service(
            "manual",
            metadata={"name": "manual", "namespace": "serving", "annotations": INTERNAL},
            spec={"type": "LoadBalancer", "ports": [{"port": 8000}]},
        )

    def elsewhere():
        vllm()
        k8s.core.v1.Service(
            "vllm-tpu",
            metadata={"name": "vllm-tpu", "namespace": "other", "annotations": INTERNAL},
            spec={"type": "LoadBalancer", "selector": {"app": "vllm-tpu"}, "ports": [{"port": 8000}]},
        )

    for build in (cluster_ip, not_a_model_server, no_selector, elsewhere):
        assert findings(build) == [], build.__name__


def test_a_load_balancer_meant_for_the_vpc_can_be_allowed():
    def build():
        vllm()
        o.service("vllm-tpu", notes=INTERNAL)

    assert findings(build, {POLICY: {"allowedServices": ["serving/vllm-tpu"]}}) == []
