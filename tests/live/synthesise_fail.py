"""The failing half of the synthetic fixtures (synthesise.py writes both): from a stack's passing answers, the
answers that differ when each applicable check fails, each failure one a real cluster can show (a kind not served,
a Gateway without status, an UNHEALTHY backend, a picker checked on the wrong port, a second proxy-only subnet, an
APIService with FailedDiscoveryCheck, a KubeRay that writes no Ready condition and prunes upgradeStrategy and
authOptions, a replaced worker probe, a libtpu start error, a NotTriggerScaleUp event, a node offering less than
modelled, a failed smoke-test Job, a proposed change in the preview)."""

from __future__ import annotations

import json
from typing import Any

from tests.live.synthesise import NODE_POOL, Answers, _job, _true
from tpu_stacks_live.verify.plan import StackPlan, name_of


def failing(plan: StackPlan, base: Answers) -> dict[str, Any]:
    """The answers that differ from `base`: each applicable check's failure."""
    k: dict[str, Any] = {}
    c: dict[str, Any] = {}
    for path, body in base.kubernetes.items():
        if not isinstance(body, dict):
            k[path] = "RuntimeError: Unable to initialize backend 'tpu': PJRT plugin version 0.54 is not supported\n"
            continue
        kind = body.get("kind")
        if kind == "APIResourceList" and body["groupVersion"].startswith(("inference.", "monitoring.googleapis.com")):
            k[path] = {
                **body,
                "resources": [r for r in body["resources"] if r["kind"] not in ("InferencePool", "PodMonitoring")],
            }
        elif kind == "RayCluster":
            k[path] = {**body, "status": {}}
        elif kind == "Gateway":
            k[path] = {**body, "status": {}}
        elif kind == "APIService":
            k[path] = {
                **body,
                "status": {"conditions": [{**_true("Available"), "status": "False", "reason": "FailedDiscoveryCheck"}]},
            }
        elif kind == "HorizontalPodAutoscaler":
            off = {
                **_true("ScalingActive"),
                "status": "False",
                "message": "the HPA was unable to compute the replica count: no metrics returned",
            }
            k[path] = {**body, "status": {"conditions": [off]}}
        elif kind == "Job" and "smoke-test" in path:
            _job_fail = Answers(plan)
            _job(_job_fail, body, passed=False)
            k.update(_job_fail.kubernetes)
        elif kind == "RayService":
            spec = {**body["spec"], "upgradeStrategy": None}
            k[path] = {
                **body,
                "spec": spec,
                "status": {
                    "conditions": [{**_true("Ready"), "status": "False", "reason": "Initializing"}][:0],
                    "activeServiceStatus": {"applicationStatuses": {}},
                },
            }
        elif kind == "RayJob":
            k[path] = {
                **body,
                "status": {"jobDeploymentStatus": "Initializing"},
            }
        elif kind == "CustomResourceDefinition":
            version = {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "properties": {"spec": {"properties": {"rayClusterConfig": {"properties": {}}}}}
                    }
                },
            }
            k[path] = {**body, "spec": {**body["spec"], "versions": [version]}}
        elif "items" in body and any(i.get("kind") == "Pod" and "-worker-" in name_of(i) for i in body["items"]):
            broken = []
            for item in json.loads(json.dumps(body["items"])):
                item["spec"]["containers"][0]["readinessProbe"] = {
                    "exec": {
                        "command": ["bash", "-c", "wget -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz"]
                    }
                }
                item["spec"]["containers"][0]["env"] = [
                    e for e in item["spec"]["containers"][0]["env"] if e["name"] != "TPU_DEVICE_PLUGIN_ADDR"
                ]
                item["status"]["conditions"] = [{**_true("Ready"), "status": "False"}]
                broken.append(item)
            k[path] = {"items": broken}
        elif "items" in body and any(i.get("kind") == "Node" for i in body["items"]):
            node = json.loads(json.dumps(body["items"][0]))
            node["status"]["allocatable"]["cpu"] = "14000m"
            k[path] = {"items": [node]}
        elif path == "/version":
            k[path] = {**body, "minor": "34", "gitVersion": "v1.34.1-gke.1000000"}
        elif "namespaces/gmp-system/pods" in path:
            k[path] = {"items": [{**p, "spec": {**p["spec"], "hostNetwork": True}} for p in body["items"]]}
        elif path.startswith("/apis/ray.io/v1/namespaces/") and path.endswith("/rayclusters"):
            k[path] = {"items": body["items"] * 2}
    for namespace in sorted({name_of(ns) for ns in plan.of_kind("Namespace", "")}):
        if any(
            pool.inputs.get("autoscaling", {}).get(
                "minNodeCount", pool.inputs.get("autoscaling", {}).get("totalMinNodeCount")
            )
            == 0
            for pool in plan.of_type(NODE_POOL)
        ):
            event = {
                "kind": "Event",
                "reason": "NotTriggerScaleUp",
                "type": "Normal",
                "metadata": {"namespace": namespace},
                "message": "pod didn't trigger scale-up: 1 node(s) had untolerated taint {tpu-stacks.dev/jobs: true}",
            }
            k[base.get(f"/api/v1/namespaces/{namespace}/events", fieldSelector="reason=NotTriggerScaleUp")] = {
                "items": [event]
            }
    for key, answer in base.compute.items():
        if key.startswith("regionBackendServices.getHealth"):
            c[key] = {**answer, "healthStatus": [{"ipAddress": "10.4.0.12", "port": 8000, "healthState": "UNHEALTHY"}]}
        elif key.startswith("regionHealthChecks.get"):
            c[key] = {**answer, "grpcHealthCheck": {**answer["grpcHealthCheck"], "port": 9002}}
        elif key.startswith("regionBackendServices.list"):
            c[key] = [{k2: v for k2, v in s.items() if k2 != "securityPolicy"} for s in answer]
        elif key.startswith("subnetworks.list"):
            c[key] = answer + [{**answer[0], "name": "another-proxy-only", "ipCidrRange": "192.168.70.0/23"}]
        elif key == "firewalls.list":
            c[key] = [{**rule, "sourceRanges": ["0.0.0.0/0"]} for rule in answer]
    missing = sorted(base.promql)[::3]
    promql = {query: [] for query in missing}
    preview = {
        "returncode": 255,
        "output": (
            f"Previewing update ({plan.stack}):\n    ~ gcp:monitoring/dashboard:Dashboard {plan.stack}-dashboard update [diff: ~dashboardJson]\n"
            "error: no changes were expected but changes were proposed\n"
        ),
    }
    return {"kubernetes": k, "compute": c, "promql": promql, "pulumi": {"preview": preview}}
