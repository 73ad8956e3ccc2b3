"""The RayService's readiness and authentication as KubeRay v1.7.0 and Ray 2.60.0 run them: every TPU host is Ready
when its raylet is (Ray Serve runs a proxy only on nodes that hold a replica, so KubeRay's Serve check would keep
most hosts unready forever), traffic goes to the head's proxy, and KubeRay token authentication is on."""

from tests.vllm.test_multihost import ONE_SLICE, ray_service, stack, workers
from tpu_stacks.catalog.upstream import fact, number


def test_the_tpu_workers_have_their_own_readiness_probe_without_the_serve_proxy():
    (worker,) = workers(stack(replicas=ONE_SLICE))["template"]["spec"]["containers"]
    probe = worker["readinessProbe"]  # set here, so KubeRay injects none (its own would also ask /-/healthz on 8000)
    assert probe["httpGet"] == {"path": "/api/healthz", "port": number("kuberay.port.dashboard-agent")}
    assert "exec" not in probe
    # KubeRay's own node-check timings, read from the ledger rows of its constants
    assert (probe["initialDelaySeconds"], probe["periodSeconds"], probe["failureThreshold"]) == (
        number("kuberay.readiness.initial-delay"),
        number("kuberay.readiness.period"),
        number("kuberay.readiness.failure-threshold"),
    )
    # the agent's /api/healthz stays public with token authentication (Ray's agent)
    assert fact("ray.dashboard-agent.public-healthz").literal == '"/api/healthz",'


def test_the_head_keeps_kuberays_probes():
    cluster = ray_service(stack(replicas=ONE_SLICE))["spec"]["rayClusterConfig"]
    (head,) = cluster["headGroupSpec"]["template"]["spec"]["containers"]
    assert "readinessProbe" not in head and "livenessProbe" not in head


def test_kuberay_token_authentication_is_on_with_an_explicit_mode_and_a_ray_version():
    cluster = ray_service(stack(replicas=ONE_SLICE))["spec"]["rayClusterConfig"]
    assert cluster["authOptions"] == {"mode": "token"}
    minimum = tuple(int(part) for part in str(fact("kuberay.auth-min-ray-version").value).split("."))
    assert tuple(int(part) for part in cluster["rayVersion"].split(".")) >= minimum
