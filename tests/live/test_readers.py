"""The live readers only read: GET on the Kubernetes API, list/get/getHealth on Compute Engine; a 404 is None and a
403 is Unreadable (UNKNOWN with the fix). The client libraries are exercised with their transport replaced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from tpu_stacks_live.verify.live import LiveCluster, LiveGoogle, LivePulumi
from tpu_stacks_live.verify.readers import Unreadable

ROOT = Path(__file__).resolve().parents[2]

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    return LiveCluster(str(path), None)


def test_every_kubernetes_request_is_a_get(cluster, monkeypatch):
    calls = []

    def call_api(path, method, **kwargs):
        calls.append((method, path, kwargs["query_params"]))
        return {"items": []}

    monkeypatch.setattr(cluster.api_client, "call_api", call_api)
    assert cluster.get("/api/v1/nodes", labelSelector="a=b") == {"items": []}
    cluster.log("/api/v1/namespaces/x/pods/y/log", tailLines="200")
    assert calls == [
        ("GET", "/api/v1/nodes", [("labelSelector", "a=b")]),
        ("GET", "/api/v1/namespaces/x/pods/y/log", [("tailLines", "200")]),
    ]


@pytest.mark.parametrize("status, expected", [(404, None), (403, Unreadable)])
def test_not_found_is_none_and_forbidden_is_unreadable(cluster, monkeypatch, status, expected):
    def call_api(*args, **kwargs):
        raise ApiException(status=status)

    monkeypatch.setattr(cluster.api_client, "call_api", call_api)
    if expected is None:
        assert cluster.get("/api/v1/nodes") is None
    else:
        with pytest.raises(Unreadable) as raised:
            cluster.get("/api/v1/nodes")
        assert "view" in raised.value.fix


@pytest.mark.parametrize("method", ["firewalls.delete", "regionBackendServices.patch", "subnetworks.insert"])
def test_no_compute_call_writes(method):
    with pytest.raises(ValueError, match="not a read-only call"):
        LiveGoogle("p").compute(method)


def test_without_pulumi_on_path_drift_is_not_run(monkeypatch):
    monkeypatch.setenv("PATH", "")
    assert LivePulumi().preview("dev", ".") is None


def test_compute_answers_as_the_rest_api_spells_it():
    """In a fresh interpreter: the Pulumi SDK vendors its own google.rpc.Status (pulumi/runtime/proto/status_pb2.py),
    which the plugin tests load into this process's protobuf pool, and google-cloud-compute's copy then refuses to
    load (duplicate symbol). verify itself never loads Pulumi's copy (it plans without the provider server)."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.live.test_readers import _compute_answers; _compute_answers()"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def _compute_answers() -> None:
    """getHealth through the real client class, its transport replaced: the answer is REST JSON (camelCase)."""
    monkeypatch = pytest.MonkeyPatch()
    from google.cloud import compute_v1

    asked = {}

    def get_health(self, **request):
        asked.update(request)
        status = compute_v1.HealthStatus(health_state="UNHEALTHY", ip_address="10.4.0.12", port=8000)
        return compute_v1.BackendServiceGroupHealth(health_status=[status])

    monkeypatch.setattr(compute_v1.RegionBackendServicesClient, "get_health", get_health)
    google = LiveGoogle("my-project")
    google._credentials = object()  # no Application Default Credentials here
    monkeypatch.setattr(compute_v1.RegionBackendServicesClient, "__init__", lambda self, credentials: None)
    answer = google.compute("regionBackendServices.getHealth", region="r", backendService="b", group="g")
    (status,) = answer["healthStatus"]
    assert {k: status[k] for k in ("healthState", "ipAddress", "port")} == {
        "healthState": "UNHEALTHY",
        "ipAddress": "10.4.0.12",
        "port": 8000,
    }
    assert asked["project"] == "my-project" and asked["resource_group_reference_resource"].group == "g"
