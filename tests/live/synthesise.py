"""Write the synthetic fixtures of `tpu-stacks verify` (tools/live/tpu_stacks_live/fixtures/): for each stack below,
`<stack>-pass.json`, the answers of a cluster and project where the stack runs as planned, and `<stack>-fail.json`,
the same with each applicable check's failure written in.

Every answer is written from the API's schema, never captured: Kubernetes APIResourceList (discovery), the
objects with the status their types define (batch/v1 JobStatus, Gateway API GatewayStatus, InferencePoolStatus,
RayService and RayJob status of KubeRay v1.7.0, APIServiceStatus, HorizontalPodAutoscalerStatus, NodeStatus),
Compute Engine's REST resources (BackendService, BackendServiceGroupHealth, HealthCheck, Subnetwork, Firewall),
and the Prometheus HTTP API's instant-query result. Names come from each stack's plan, so the answers match it.

Run `venv/bin/python -m tests.live.synthesise` after a plan change that renames what the checks read
(tests/live/test_fixtures.py says when).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tpu_stacks.catalog.cpu_machines import allocatable, machine_shape
from tpu_stacks_live.verify.checks.kube import group_path
from tpu_stacks_live.verify.checks.smoke import GATEWAY_ENV
from tpu_stacks_live.verify.plan import NODE_POOL, StackPlan, kinds, load_plan, name_of, namespace_of
from tpu_stacks_live.verify.readers import call_key, request_key

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tools/live/tpu_stacks_live/fixtures"
STACKS = ("vllm-gateway", "vllm-405b", "jetstream-gemma", "raytrain")
LABEL = "synthetic: written by tests/live/synthesise.py from the APIs' schemas and the stack's plan; never read from a cluster"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "APIService", "Node"}
NOW = "2026-11-01T10:00:00Z"  # long enough ago that a status missing since then is stalled
GATEWAY_ADDRESS = "10.128.0.60"
COMPUTE = "https://www.googleapis.com/compute/v1/projects/my-tpu-project"


def plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith("s") else "s")


def _true(kind: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"type": kind, "status": "True", "reason": reason or kind, "message": message, "lastTransitionTime": NOW}


class Answers:
    def __init__(self, plan: StackPlan) -> None:
        self.plan = plan
        self.kubernetes: dict[str, Any] = {}
        self.compute: dict[str, Any] = {}
        self.promql: dict[str, Any] = {}

    def path(self, obj: dict[str, Any]) -> str:
        base = group_path(str(obj["apiVersion"]))
        where = "" if obj["kind"] in CLUSTER_SCOPED else f"/namespaces/{namespace_of(obj)}"
        return f"{base}{where}/{plural(str(obj['kind']))}/{name_of(obj)}"

    def put(self, obj: dict[str, Any], status: dict[str, Any]) -> None:
        metadata = {**obj["metadata"], "creationTimestamp": NOW}
        self.kubernetes[self.path(obj)] = {**obj, "metadata": metadata, "status": status}

    def get(self, path: str, **query: str) -> str:
        return request_key(path, query)

    def call(self, method: str, **params: str) -> str:
        return call_key(method, params)


def discovery(plan: StackPlan) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for version, kind in kinds(plan.objects):
        groups.setdefault(version, []).append(
            {
                "name": plural(kind),
                "singularName": kind.lower(),
                "namespaced": kind not in CLUSTER_SCOPED,
                "kind": kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            }
        )
    return {
        group_path(version): {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": version,
            "resources": found,
        }
        for version, found in groups.items()
    }


def pod(name: str, namespace: str, labels: dict[str, str], containers: list[dict[str, Any]], **status: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "creationTimestamp": NOW},
        "spec": {"containers": containers, "nodeName": status.pop("node", "node-1")},
        "status": {"phase": "Running", "conditions": [_true("Ready")], **status},
    }


def passing(plan: StackPlan) -> Answers:
    a = Answers(plan)
    a.kubernetes.update(discovery(plan))
    for version, kind in kinds(plan.objects):
        for obj in plan.of_kind(kind):
            if obj.get("apiVersion") == version and kind in ("Gateway", "InferencePool", "HTTPRoute"):
                a.put(obj, _gateway_status(obj))
            elif obj.get("apiVersion") == version and kind in ("HealthCheckPolicy", "GCPBackendPolicy"):
                a.put(obj, {"conditions": [_true("Attached")]})
            elif kind == "APIService":
                a.put(obj, {"conditions": [_true("Available", "Passed", "all checks passed")]})
            elif kind == "HorizontalPodAutoscaler":
                a.put(obj, _hpa_status(obj))
            elif kind == "Service" and obj["spec"].get("type") == "LoadBalancer":
                a.put(obj, {"loadBalancer": {"ingress": [{"ip": "10.128.0.50"}]}})
            elif kind == "Job":
                _job(a, obj, passed=True)
            elif kind in ("RayService", "RayJob", "RayCluster"):
                _ray(a, obj)
    _google(a)
    _platform(a)
    for name in _metrics(plan):
        a.promql[f'count({{__name__="{name}"}})'] = [{"metric": {}, "value": [1796000000, "3"]}]
    _pools(a)
    return a


def _platform(a: Answers) -> None:
    """GET /version (a GKE build at the plan's floor or above) and Managed Prometheus's collector pods."""
    floors = [r.inputs.get("minMasterVersion") for r in a.plan.of_type("gcp:container/cluster:Cluster")]
    running = next((f for f in floors if f), "1.35.0-gke.2398000")
    major, minor = running.split(".")[:2]
    a.kubernetes["/version"] = {"major": major, "minor": minor, "gitVersion": f"v{running}", "platform": "linux/amd64"}
    labels = {"app.kubernetes.io/name": "collector"}
    collectors = [pod(f"collector-{i}", "gmp-system", labels, [{"name": "prometheus"}]) for i in range(2)]
    selector = "app.kubernetes.io/name=collector"
    a.kubernetes[a.get("/api/v1/namespaces/gmp-system/pods", labelSelector=selector)] = {"items": collectors}


def _metrics(plan: StackPlan) -> list[str]:
    from tpu_stacks_live.verify.checks.metrics import queried

    return sorted(queried(plan))


def _gateway_status(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "Gateway":
        return {
            "addresses": [{"type": "IPAddress", "value": GATEWAY_ADDRESS}],
            "conditions": [_true("Accepted"), _true("Programmed")],
        }
    parent = {
        "parentRef": {"name": "vllm-gateway", "kind": "Gateway"},
        "conditions": [_true("Accepted"), _true("ResolvedRefs")],
    }
    return {"parents": [parent]}


def _hpa_status(obj: dict[str, Any]) -> dict[str, Any]:
    metric = obj["spec"]["metrics"][0]
    return {
        "currentReplicas": 1,
        "desiredReplicas": 1,
        "currentMetrics": [
            {"type": "Pods", "pods": {"metric": metric["pods"]["metric"], "current": {"averageValue": "0"}}}
        ],
        "conditions": [_true("AbleToScale"), _true("ScalingActive", "ValidMetricFound")],
    }


def _job(a: Answers, job: dict[str, Any], passed: bool) -> None:
    env = {
        e["name"]: e.get("value", "") for c in job["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []
    }
    counter = json.loads(env.get("SMOKE_PICKER_COUNTER") or '{"name": "", "labels": {}}')  # the plan's picker's
    shown = counter["name"] + "{" + ",".join(f'{k}="{v}"' for k, v in counter["labels"].items()) + "}"
    gateway = f", picked by the endpoint picker ({shown} 0 -> 1)" if GATEWAY_ENV in env else ""
    url, metrics_url = env.get("SMOKE_URL", "the server"), env.get("SMOKE_METRICS_URL", "its metrics endpoint")
    url = url.replace("{gateway}", GATEWAY_ADDRESS)  # the script reads the address from the Gateway's status
    line = f"smoke test passed: {url} answered{gateway} and {metrics_url} exposes 8 metric(s)"  # k8s/smoke_check.py
    if not passed:
        line = f"smoke test failed: POST {url} answered 401: invalid API key"
    condition = _true("Complete") if passed else _true("Failed", "BackoffLimitExceeded")
    a.put(job, {"conditions": [condition], "succeeded" if passed else "failed": 1})
    labels = {"job-name": name_of(job)}
    terminated = {"terminated": {"exitCode": 0 if passed else 1, "message": line, "finishedAt": NOW}}
    smoke_pod = pod(f"{name_of(job)}-abcde", namespace_of(job), labels, [{"name": "smoke-test"}])
    smoke_pod["status"] = {
        "phase": "Succeeded" if passed else "Failed",
        "containerStatuses": [{"name": "smoke-test", "state": terminated}],
    }
    a.kubernetes[a.get(f"/api/v1/namespaces/{namespace_of(job)}/pods", labelSelector=f"job-name={name_of(job)}")] = {
        "items": [smoke_pod]
    }


def _workers(a: Answers, obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj["spec"].get("rayClusterConfig") or obj["spec"]
    found = []
    for group in spec.get("workerGroupSpecs") or []:
        template = group["template"]
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        count = int(group.get("replicas") or 1) * int(group.get("numOfHosts") or 1)
        for index in range(count):
            containers = json.loads(json.dumps(template["spec"]["containers"]))
            containers[0].setdefault("env", []).append(
                {"name": "TPU_DEVICE_PLUGIN_ADDR", "value": f"10.0.0.{index + 2}:2112"}
            )
            found.append(pod(f"{name_of(obj)}-worker-{index}", namespace_of(obj), labels, containers))
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        a.kubernetes[a.get(f"/api/v1/namespaces/{namespace_of(obj)}/pods", labelSelector=selector)] = {"items": found}
        for worker in found:
            log = f"/api/v1/namespaces/{namespace_of(obj)}/pods/{name_of(worker)}/log"
            a.kubernetes[a.get(log, container=containers[0]["name"], tailLines="200")] = (
                "INFO libtpu initialized: 4 TPU chips\n"
            )
        break
    return found


def _ray(a: Answers, obj: dict[str, Any]) -> None:
    kind = obj["kind"]
    if kind == "RayService":
        app = {"llm": {"status": "RUNNING", "serveDeploymentStatuses": {"LLMServer": {"status": "HEALTHY"}}}}
        a.put(
            obj,
            {
                "conditions": [_true("Ready", "NonZeroServeEndpoints")],
                "serviceStatus": "Running",
                "activeServiceStatus": {"applicationStatuses": app},
            },
        )
        a.kubernetes[f"/apis/ray.io/v1/namespaces/{namespace_of(obj)}/rayclusters"] = {
            "items": [{"metadata": {"name": f"{name_of(obj)}-abcde"}}]
        }
        version = {
            "name": "v1",
            "served": True,
            "storage": True,
            "schema": {
                "openAPIV3Schema": {
                    "properties": {
                        "spec": {
                            "properties": {
                                "rayClusterConfig": {
                                    "properties": {
                                        "authOptions": {"type": "object", "properties": {"mode": {"type": "string"}}}
                                    }
                                }
                            }
                        }
                    }
                }
            },
        }
        a.kubernetes["/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayservices.ray.io"] = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "rayservices.ray.io"},
            "spec": {"group": "ray.io", "versions": [version]},
        }
    elif kind == "RayJob":
        a.put(obj, {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING", "startTime": NOW})
    else:
        a.put(obj, {"state": "ready", "readyWorkerReplicas": 1})
    if kind in ("RayService", "RayCluster"):
        _workers(a, obj)


def _google(a: Answers) -> None:
    plan = a.plan
    region = plan.region or ""
    services = []
    for obj, port in [(o, None) for o in plan.of_kind("InferencePool")] + [
        (
            {"metadata": {"name": p["spec"]["targetRef"]["name"], "namespace": namespace_of(p)}},
            p["spec"]["default"]["config"],
        )
        for p in plan.of_kind("HealthCheckPolicy")
        if p["spec"]["targetRef"].get("kind") == "Service"
    ]:
        name = f"gkegw1-abcd-{namespace_of(obj)}-{name_of(obj)}-8000-xyz"
        group = f"{COMPUTE}/zones/{plan.location}/networkEndpointGroups/k8s1-{name_of(obj)}"
        service = {
            "kind": "compute#backendService",
            "name": name,
            "region": f"{COMPUTE}/regions/{region}",
            "backends": [{"group": group, "balancingMode": "RATE"}],
            "loadBalancingScheme": "INTERNAL_MANAGED",
        }
        if port is None:
            service["securityPolicy"] = f"{COMPUTE}/regions/{region}/securityPolicies/vllm-gateway-vllm-gateway-armor"
        else:
            check = f"{name}-hc"
            service["healthChecks"] = [f"{COMPUTE}/regions/{region}/healthChecks/{check}"]
            a.compute[a.call("regionHealthChecks.get", region=region, healthCheck=check)] = {
                "kind": "compute#healthCheck",
                "name": check,
                "type": "GRPC",
                "grpcHealthCheck": {"port": port["grpcHealthCheck"]["port"], "portSpecification": "USE_FIXED_PORT"},
            }
        services.append(service)
        a.compute[a.call("regionBackendServices.getHealth", region=region, backendService=name, group=group)] = {
            "kind": "compute#backendServiceGroupHealth",
            "healthStatus": [{"ipAddress": "10.4.0.12", "port": 8000, "healthState": "HEALTHY"}],
        }
    if services:
        a.compute[a.call("regionBackendServices.list", region=region)] = services
    subnets = [
        r.inputs
        for r in plan.of_type("gcp:compute/subnetwork:Subnetwork")
        if r.inputs.get("purpose") == "REGIONAL_MANAGED_PROXY"
    ]
    if subnets:
        s = subnets[0]
        a.compute[a.call("subnetworks.list", region=region, filter='purpose="REGIONAL_MANAGED_PROXY"')] = [
            {
                "kind": "compute#subnetwork",
                "name": s["name"],
                "network": f"{COMPUTE}/global/networks/{s['network']}",
                "ipCidrRange": s["ipCidrRange"],
                "purpose": s["purpose"],
                "role": "ACTIVE",
                "region": f"{COMPUTE}/regions/{region}",
            }
        ]
    rules = []
    for service in plan.of_kind("Service", ""):
        if service["spec"].get("type") == "LoadBalancer":
            rules.append(
                {
                    "kind": "compute#firewall",
                    "name": f"k8s2-{namespace_of(service)}-{name_of(service)}",
                    "direction": "INGRESS",
                    "description": json.dumps(
                        {"kubernetes.io/service-name": f"{namespace_of(service)}/{name_of(service)}"}
                    ),
                    "sourceRanges": service["spec"]["loadBalancerSourceRanges"],
                    "allowed": [{"IPProtocol": "tcp", "ports": [str(p["port"]) for p in service["spec"]["ports"]]}],
                }
            )
    a.compute[a.call("firewalls.list")] = rules


def _pools(a: Answers) -> None:
    for pool in a.plan.of_type(NODE_POOL):
        shape = machine_shape(str((pool.inputs.get("nodeConfig") or {}).get("machineType", "")))
        if shape is None or not (pool.inputs.get("nodeConfig") or {}).get("taints"):
            continue
        cpu, memory = allocatable(shape)
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "gke-jobs-node-1", "labels": {"cloud.google.com/gke-nodepool": pool.inputs["name"]}},
            "status": {"allocatable": {"cpu": f"{cpu}m", "memory": f"{memory // 1024}Ki"}},
        }
        a.kubernetes[a.get("/api/v1/nodes", labelSelector=f"cloud.google.com/gke-nodepool={pool.inputs['name']}")] = {
            "items": [node]
        }
        daemon = pod(
            "kube-proxy-1",
            "kube-system",
            {},
            [{"name": "proxy", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
        )
        daemon["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "kube-proxy"}]
        job = next(j for j in a.plan.of_kind("Job") if (j["spec"]["template"]["spec"].get("nodeSelector") or {}))
        worker = pod(f"{name_of(job)}-xyz", namespace_of(job), {}, job["spec"]["template"]["spec"]["containers"])
        worker["metadata"]["ownerReferences"] = [{"kind": "Job", "name": name_of(job)}]
        a.kubernetes[a.get("/api/v1/pods", fieldSelector="spec.nodeName=gke-jobs-node-1")] = {"items": [daemon, worker]}


def write(stack: str) -> tuple[Path, Path]:
    plan = load_plan(ROOT, stack)
    base = passing(plan)
    good = {
        "_synthetic": LABEL,
        "stack": stack,
        "kubernetes": base.kubernetes,
        "compute": base.compute,
        "promql": base.promql,
        "pulumi": {"preview": {"returncode": 0, "output": "Resources:\n    42 unchanged\n"}},
    }
    from tests.live.synthesise_fail import failing

    bad = {"_synthetic": LABEL, "stack": stack, "_extends": f"{stack}-pass.json", **failing(plan, base)}
    paths = FIXTURES / f"{stack}-pass.json", FIXTURES / f"{stack}-fail.json"
    for path, document in zip(paths, (good, bad), strict=True):
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return paths


if __name__ == "__main__":
    for name in sys.argv[1:] or STACKS:
        print(*write(name))
