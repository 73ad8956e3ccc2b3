"""The shipped stack `sglang`, run as `pulumi up` runs it, offline under mocks: the objects the plan promised, and
none of those the engine's missing metrics rule out."""

from __future__ import annotations

from tests.shipped import shipped

STACK = "sglang"


def resources(typ: str):
    capture = shipped(STACK)
    assert capture.error is None, capture.error
    return [r for r in capture.resources if r.type == typ]


def only(typ: str):
    (found,) = resources(typ)
    return found.inputs


def test_the_deployment_runs_the_pinned_server_on_one_v6e_host_with_the_radix_cache_on():
    deployment = only("kubernetes:apps/v1:Deployment")
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    (server,) = pod["containers"]
    assert server["command"] == ["python3", "-m", "sgl_jax.launch_server"]
    assert "--model-path=Qwen/Qwen3-30B-A3B" in server["args"] and "--tp-size=4" in server["args"]
    assert "--disable-radix-cache" not in server["args"]
    assert server["image"].endswith("/sglang-jax-sglang-tpu/sglang-jax:0.0.1.post1")
    assert server["readinessProbe"]["httpGet"] == {"path": "/health", "port": 30000}
    assert pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "2x2"
    env = {e["name"]: e.get("value") for e in server["env"]}
    assert env["JAX_COMPILATION_CACHE_DIR"] == "/jax-cache"


def test_no_prometheus_scrape_no_hpa_no_metrics_adapter():
    assert resources("kubernetes:monitoring.googleapis.com/v1:PodMonitoring") == []
    assert resources("kubernetes:autoscaling/v2:HorizontalPodAutoscaler") == []
    assert not [r for r in shipped(STACK).resources if "metrics-adapter" in r.name]


def test_the_image_registry_is_the_stacks_own():
    registry = only("gcp:artifactregistry/repository:Repository")
    assert registry["repositoryId"] == "sglang-jax-sglang-tpu" and registry["mode"] == "STANDARD_REPOSITORY"


def test_the_smoke_test_judges_an_openai_completion_and_reads_no_metrics():
    job = only("kubernetes:batch/v1:Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["SMOKE_ANSWER"] == "openai-completion"
    assert env["SMOKE_URL"] == "http://sglang-service.sglang.svc.cluster.local:30000/v1/completions"
    assert "SMOKE_METRICS_URL" not in env


def test_the_service_is_an_internal_load_balancer_for_the_stacks_clients():
    service = only("kubernetes:core/v1:Service")
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["spec"]["loadBalancerSourceRanges"] == ["10.128.0.0/20"]
    assert service["spec"]["ports"][0]["port"] == 30000
