"""The live readers only read: GET on the Kubernetes API, list/get/getHealth on Compute Engine; a 404 is None and a
403 is Unreadable (UNKNOWN with the fix). The client libraries are exercised with their transport replaced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


class Pool:
    """The urllib3 pool under kubernetes 37.0.2's REST client: the request the client really builds (method, URL
    with its query, headers) and a canned answer; everything above it (param_serialize, call_api,
    response_deserialize) is the pinned client's own code."""

    def __init__(self, status: int = 200, body: bytes = b'{"items": []}', content_type: str = "application/json"):
        self.sent: list[tuple[str, str, dict]] = []
        self.status, self.body, self.content_type = status, body, content_type

    def request(self, method, url, **kwargs):
        from urllib3.response import HTTPResponse

        self.sent.append((method, url, kwargs.get("headers") or {}))
        return HTTPResponse(body=self.body, status=self.status, headers={"content-type": self.content_type})


def test_every_kubernetes_request_is_a_get_with_the_token(cluster, monkeypatch):
    pool = Pool()
    monkeypatch.setattr(cluster.api_client.rest_client, "pool_manager", pool)
    assert cluster.get("/api/v1/nodes", labelSelector="a=b") == {"items": []}
    pool.body, pool.content_type = b"line one\nline two\n", "text/plain"
    assert cluster.log("/api/v1/namespaces/x/pods/y/log", tailLines="200") == "line one\nline two\n"
    assert [(method, url) for method, url, _ in pool.sent] == [
        ("GET", "https://10.0.0.1/api/v1/nodes?labelSelector=a%3Db"),
        ("GET", "https://10.0.0.1/api/v1/namespaces/x/pods/y/log?tailLines=200"),
    ]
    assert all(headers["authorization"] == "Bearer not-a-real-token" for _, _, headers in pool.sent)


@pytest.mark.parametrize(
    "status, fix",
    [(404, None), (403, "view"), (401, "gke-gcloud-auth-plugin"), (500, "retry")],
)
def test_not_found_is_none_and_refusals_name_their_fix(cluster, monkeypatch, status, fix):
    monkeypatch.setattr(cluster.api_client.rest_client, "pool_manager", Pool(status=status, body=b"{}"))
    if fix is None:
        assert cluster.get("/api/v1/nodes") is None
    else:
        with pytest.raises(Unreadable) as raised:
            cluster.get("/api/v1/nodes")
        assert fix in raised.value.fix


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

    def get_health(self, request):
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
    assert asked == {
        "project": "my-project",
        "region": "r",
        "backend_service": "b",
        "resource_group_reference_resource": {"group": "g"},
    }
    # the request dicts are what the client's own request types accept (proto-plus refuses an unknown key)
    compute_v1.GetHealthRegionBackendServiceRequest(asked)
    compute_v1.ListSubnetworksRequest({"project": "p", "region": "r", "filter": 'purpose = "REGIONAL_MANAGED_PROXY"'})
    compute_v1.GetRegionHealthCheckRequest({"project": "p", "region": "r", "health_check": "h"})
