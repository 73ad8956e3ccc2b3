"""A probe's pod: hardened as every workload pod is, never Ready, labelled so a crashed run's leftovers are found.

- Hardened by the library's own `k8s.security.harden` (the rules every stack pod gets: seccomp RuntimeDefault,
  non-root numeric user, read-only root filesystem, all capabilities dropped, no privilege escalation, /tmp and
  HOME on emptyDirs) as the pinned Python image's user (`catalog.image_users.PYTHON`), with no Kubernetes API
  token unless the probe calls the API server. `harden` builds provider Args; they become the API's JSON here.
- Never Ready: `spec.readinessGates` names a condition nobody sets. "A pod is ready when all its containers are
  ready AND all conditions specified in the readiness gates have status equal to "True"" (the PodSpec field's
  API description), and "If Kubernetes cannot find such a condition in the status.conditions field of a Pod,
  the status of the condition is defaulted to "False"" (kubernetes.io/docs/concepts/workloads/pods/
  pod-lifecycle/#pod-readiness-gate). So an EndpointSlice lists it as not ready and no Service sends it
  traffic although it carries a server's labels.
- It cannot be adopted: a Deployment's ReplicaSets select `pod-template-hash` too, which a probe does not carry
  (kubernetes.io/docs/concepts/workloads/controllers/deployment/#pod-template-hash-label); Jobs select their
  controller's uid.
- What still sees it for its few seconds: a HorizontalPodAutoscaler selects by its Deployment's selector and finds
  a pod with no metric, which it treats conservatively ("assuming those pods were consuming 100% of the desired
  value in case of a scale down, and 0% in case of a scale up", kubernetes.io/docs/tasks/run-application/
  horizontal-pod-autoscale/#algorithm-details), so it does not scale on it; a PodMonitoring scrapes it and
  records `up` 0 for that target (nothing listens in the probe).
- Found after a crash: every probe pod carries `tpu-stacks.dev/probe: "true"` and its run's id
  (`tpu-stacks.dev/probe-run`); `kubectl get pods -A -l tpu-stacks.dev/probe=true` lists leftovers and
  `kubectl delete pods -A -l tpu-stacks.dev/probe=true` removes them. `activeDeadlineSeconds` stops a leftover's
  container on its own once it was scheduled (a pod never scheduled stays Pending until deleted);
  `restartPolicy: Never`, so it runs once.
"""

from __future__ import annotations

import hashlib
import json
import math
from importlib import resources
from typing import Any

import pulumi._types as pulumi_types  # input_type_to_dict: an Args object's fields by their API (camelCase) names
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.image_users import PYTHON
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.smoke import RESOURCES
from tpu_stacks.objects.annotations import API_TOKEN_REASON
from tpu_stacks_live.probe.plan import Probe

MARKER = "tpu-stacks.dev/probe"
RUN = "tpu-stacks.dev/probe-run"
KIND = "tpu-stacks.dev/probe-kind"
READINESS_GATE = "tpu-stacks.dev/probe-never-ready"
CONTAINER = "probe"
ATTEMPT_SECONDS = 5
"""Each attempt's own timeout inside the pod: a drop shows as this much silence."""
GRACE_SECONDS = 30
"""The pod's deadline past the caller's timeout (its container's start is in the caller's timeout)."""
RESOLVER_OPTIONS = "timeout:2 attempts:2"
"""glibc's resolver options for this process: "The options keyword of a system's resolv.conf file can be amended on
a per-process basis by setting the environment variable RES_OPTIONS" (resolv.conf(5)). The defaults (5 s, 2 tries,
per name of a pod's long search list) would let a dropped DNS probe outlast the caller's timeout (UNKNOWN where the
answer is FAIL); 2 s is ample for NodeLocal DNSCache or kube-dns."""
TOKEN_REASON = "a verify --probe pod calls the Kubernetes API server to show the flow to it is open"


def agent_source() -> str:
    """The probe program (agent.py), passed to `python3 -c`: no ConfigMap to create and clean up."""
    return resources.files("tpu_stacks_live.probe").joinpath("agent.py").read_text(encoding="utf-8")


def plain(value: Any) -> Any:
    """Provider Args (and lists and dicts of them) as the API's JSON: the fields that are set, by their API names."""
    if pulumi_types.is_input_type(type(value)):
        return {key: plain(item) for key, item in pulumi_types.input_type_to_dict(value).items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def pod_name(probe: Probe, run_id: str) -> str:
    """`probe-<kind>-<hash of the check>-<run>`: unique per probe and run, within a pod name's 63 characters."""
    digest = hashlib.sha256(probe.check.encode()).hexdigest()[:8]
    return f"probe-{probe.kind}-{digest}-{run_id}"[:63]


def labels(probe: Probe, run_id: str) -> dict[str, str]:
    """The labels of the pod whose flow is tried (so its policies apply to the probe), and the probe's own."""
    return {**probe.labels, MARKER: "true", RUN: run_id, KIND: probe.kind}


def spec(attempts: list[dict[str, Any]]) -> str:
    return json.dumps({"timeout": ATTEMPT_SECONDS, "attempts": attempts}, separators=(",", ":"))


def manifest(probe: Probe, attempts: list[dict[str, Any]], image: str, run_id: str, timeout_s: float) -> dict:
    """The Pod to create (`attempts`: the probe's, or a peer probe's with its target's address filled in)."""
    node_ip = k8s.core.v1.EnvVarArgs(
        name="NODE_IP",
        value_from=k8s.core.v1.EnvVarSourceArgs(
            field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="status.hostIP")
        ),
    )
    container = k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=image,
        command=["python3", "-c", agent_source(), spec(attempts)],
        env=[
            node_ip,
            k8s.core.v1.EnvVarArgs(name="PYTHONDONTWRITEBYTECODE", value="1"),
            k8s.core.v1.EnvVarArgs(name="RES_OPTIONS", value=RESOLVER_OPTIONS),
        ],
        resources=RESOURCES,
        termination_message_policy="FallbackToLogsOnError",
    )
    pod_spec = harden(
        k8s.core.v1.PodSpecArgs(
            containers=[container],
            restart_policy="Never",
            service_account_name=probe.service_account,
            readiness_gates=[k8s.core.v1.PodReadinessGateArgs(condition_type=READINESS_GATE)],
            active_deadline_seconds=math.ceil(timeout_s) + GRACE_SECONDS,
            termination_grace_period_seconds=0,
        ),
        PYTHON,
        api_token=probe.api_token,
        gib=1,
    )
    metadata: dict[str, Any] = {"name": pod_name(probe, run_id), "namespace": probe.namespace}
    metadata["labels"] = labels(probe, run_id)
    metadata["annotations"] = {"tpu-stacks.dev/probe-check": probe.check}
    if probe.api_token:
        metadata["annotations"][API_TOKEN_REASON] = TOKEN_REASON
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": plain(pod_spec)}
