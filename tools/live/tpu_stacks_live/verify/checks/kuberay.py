"""What the stack assumes of GKE's Ray add-on, whose KubeRay version Google manages and does not name: the ledger's
`gke.ray-addon.*` claims, each settled here against the behaviour of KubeRay v1.7.0 the stack was written for
(ledger rows kuberay.*). Read with GET only: the RayService and RayJob, their pods, the CRD's schema.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from tpu_stacks.k8s.platform_flows import TPU_DEVICE_PLUGIN_METRICS_PORT
from tpu_stacks.ray.ports import SERVE_HEAD_PORTS
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import (
    condition,
    list_objects,
    pod_ready,
    pods,
    read_object,
    ref,
    selector,
)
from tpu_stacks_live.verify.plan import StackPlan, name_of, namespace_of
from tpu_stacks_live.verify.registry import Check, Context, check

RAY = "ray.io"
STALLED_MINUTES = 30
"""How long a RayJob or RayService may go without a status from its head before the operator's path is blamed: the
TPU nodes of a pool from zero and the head's start take minutes (docs/first-deploy.md's budgets)."""
_TPU_START_ERRORS = re.compile(r"Unable to initialize backend 'tpu'|PJRT.*version|plugin version", re.IGNORECASE)


def _services(plan: StackPlan) -> list[dict[str, Any]]:
    return plan.of_kind("RayService", RAY)


def _workers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj.get("spec") or {}
    return list((spec.get("rayClusterConfig") or spec).get("workerGroupSpecs") or [])


def _tpu_workers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        group
        for group in _workers(obj)
        if any("google.com/tpu" in str(c.get("resources")) for c in group["template"]["spec"]["containers"])
    ]


def _live_or_unknown(ctx: Context, this: Check, obj: dict[str, Any]):
    live = read_object(ctx.cluster, obj)
    return live, (None if live is not None else this.answer(Verdict.UNKNOWN, f"{ref(obj)} not found", "pulumi up"))


def _worker_pods(ctx: Context, obj: dict[str, Any]) -> list[dict[str, Any]]:
    labels = (_tpu_workers(obj)[0]["template"].get("metadata") or {}).get("labels") or {}
    return pods(ctx.cluster, namespace_of(obj), selector(labels))


@check(
    "kuberay-ready-condition",
    "the RayService gets the Ready condition `pulumi up` awaits (pulumi.com/waitFor)",
    lambda plan: any("condition=Ready" in str(s["metadata"].get("annotations")) for s in _services(plan)),
)
def ready_condition(ctx: Context, this: Check):
    service = _services(ctx.plan)[0]
    live, unknown = _live_or_unknown(ctx, this, service)
    if unknown:
        return unknown
    found = condition(live, "Ready")
    if found is None:
        return this.answer(
            Verdict.FAIL,
            f"{ref(service)} has no Ready condition: this KubeRay does not write it, so up waits its whole budget",
            "drop the pulumi.com/waitFor annotation on this add-on version (the smoke test still proves the endpoint)",
        )
    if found.get("status") != "True":
        why = f"Ready {found.get('status')} ({found.get('reason')})"
        return this.answer(Verdict.UNKNOWN, f"{ref(service)} has the condition, {why}", "verify again once it serves")
    return this.answer(Verdict.PASS, f"Ready True ({found.get('reason', '')})")


@check(
    "kuberay-upgrade-none",
    "the RayService keeps upgradeStrategy None; one RayCluster runs",
    lambda plan: any((s["spec"].get("upgradeStrategy") or {}).get("type") == "None" for s in _services(plan)),
)
def upgrade_none(ctx: Context, this: Check):
    service = _services(ctx.plan)[0]
    live, unknown = _live_or_unknown(ctx, this, service)
    if unknown:
        return unknown
    kept = ((live.get("spec") or {}).get("upgradeStrategy") or {}).get("type")
    clusters = list_objects(ctx.cluster, f"/apis/ray.io/v1/namespaces/{namespace_of(service)}/rayclusters")
    if kept != "None":
        return this.answer(
            Verdict.FAIL,
            f"upgradeStrategy is {kept or 'missing'} on the cluster: this KubeRay does not keep None",
            "avoid rayClusterConfig changes on this add-on: each starts a second RayCluster and slice",
        )
    if len(clusters) > 1:
        return this.answer(
            Verdict.FAIL, f"{len(clusters)} RayClusters in {namespace_of(service)}", "delete the extra one"
        )
    return this.answer(Verdict.PASS, "upgradeStrategy None kept, one RayCluster")


def _probe_path(obj: dict[str, Any]) -> str | None:
    for group in _tpu_workers(obj):
        probe = group["template"]["spec"]["containers"][0].get("readinessProbe") or {}
        if (probe.get("httpGet") or {}).get("path"):
            return str(probe["httpGet"]["path"])
    return None


@check(
    "kuberay-user-readiness-probe-kept",
    "the TPU workers keep the stack's readiness probe, not KubeRay's",
    lambda plan: any(_probe_path(s) for s in _services(plan)),
)
def probe_kept(ctx: Context, this: Check):
    service = _services(ctx.plan)[0]
    path = _probe_path(service)
    workers = _worker_pods(ctx, service)
    if not workers:
        return this.answer(Verdict.UNKNOWN, "no worker pod yet", "verify again once the TPU nodes have started")
    replaced = [
        name_of(p)
        for p in workers
        if ((p["spec"]["containers"][0].get("readinessProbe") or {}).get("httpGet") or {}).get("path") != path
    ]
    if replaced:
        return this.answer(
            Verdict.FAIL,
            f"KubeRay replaced the readiness probe on {', '.join(replaced[:3])}",
            "this add-on injects its own probe: the workers wait for Serve's proxy; report the version",
        )
    ready = sum(pod_ready(p) for p in workers)
    return this.answer(Verdict.PASS, f"{len(workers)} workers keep their probe on {path} ({ready} Ready)")


@check(
    "kuberay-crd-serves-authOptions",
    "the add-on's RayService CRD keeps spec.rayClusterConfig.authOptions (token authentication on)",
    lambda plan: any((s["spec"].get("rayClusterConfig") or {}).get("authOptions") for s in _services(plan)),
)
def crd_auth(ctx: Context, this: Check):
    crd = ctx.cluster.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayservices.ray.io")
    if crd is None:
        return this.answer(Verdict.FAIL, "no RayService CRD", "enable GKE's Ray Operator add-on")
    version = _services(ctx.plan)[0]["apiVersion"].split("/")[1]
    schemas = [v.get("schema") or {} for v in crd["spec"]["versions"] if v.get("name") == version]
    props = ((schemas or [{}])[0].get("openAPIV3Schema") or {}).get("properties") or {}
    cluster_config = (((props.get("spec") or {}).get("properties") or {}).get("rayClusterConfig") or {}).get(
        "properties"
    ) or {}
    if "authOptions" not in cluster_config:
        return this.answer(
            Verdict.FAIL,
            "the CRD prunes authOptions: Ray's token authentication is off",
            "nothing else breaks; keep the dashboard closed (its NetworkPolicy) until the add-on serves it",
        )
    return this.answer(Verdict.PASS, f"rayservices.ray.io {version} serves authOptions")


@check(
    "tpu-device-plugin-metrics",
    "the TPU webhook gave each Ray TPU pod TPU_DEVICE_PLUGIN_ADDR on the device plugin's port",
    lambda plan: any(_tpu_workers(o) for o in plan.of_kind("RayService", RAY) + plan.of_kind("RayCluster", RAY)),
)
def device_plugin(ctx: Context, this: Check):
    owner = (ctx.plan.of_kind("RayService", RAY) + ctx.plan.of_kind("RayCluster", RAY))[0]
    workers = _worker_pods(ctx, owner)
    if not workers:
        return this.answer(Verdict.UNKNOWN, "no TPU worker pod yet", "verify again once the TPU nodes have started")
    suffix = f":{TPU_DEVICE_PLUGIN_METRICS_PORT}"
    missing = []
    for pod in workers:
        env = {e.get("name"): str(e.get("value", "")) for c in pod["spec"]["containers"] for e in c.get("env") or []}
        if not env.get("TPU_DEVICE_PLUGIN_ADDR", "").endswith(suffix):
            missing.append(f"{name_of(pod)} ({env.get('TPU_DEVICE_PLUGIN_ADDR') or 'unset'})")
    if missing:
        return this.answer(
            Verdict.FAIL,
            f"TPU_DEVICE_PLUGIN_ADDR not <node>{suffix} on {', '.join(missing[:3])}",
            "the TPU webhook skipped these pods or uses another port (ledger kuberay-tpu-webhook.device-plugin-addr)",
        )
    return this.answer(Verdict.PASS, f"{len(workers)} TPU pods point at <node>{suffix}")


def _multihost(plan: StackPlan) -> list[dict[str, Any]]:
    return [s for s in _services(plan) if any(int(g.get("numOfHosts") or 1) > 1 for g in _tpu_workers(s))]


@check(
    "multihost-tpu-workers-start",
    "every host of the slice starts JAX's TPU backend (Ready, no PJRT or libtpu error)",
    lambda plan: bool(_multihost(plan)),
)
def multihost_start(ctx: Context, this: Check):
    service = _multihost(ctx.plan)[0]
    group = _tpu_workers(service)[0]
    expected = int(group.get("replicas") or 1) * int(group.get("numOfHosts") or 1)
    workers = _worker_pods(ctx, service)
    if not workers:
        return this.answer(Verdict.UNKNOWN, "no worker pod yet", "verify again once the TPU nodes have started")
    container = group["template"]["spec"]["containers"][0]["name"]
    for pod in workers:
        log = ctx.cluster.log(
            f"/api/v1/namespaces/{namespace_of(pod)}/pods/{name_of(pod)}/log", container=container, tailLines="200"
        )
        hit = _TPU_START_ERRORS.search(log or "")
        if hit:
            return this.answer(
                Verdict.FAIL,
                f"{name_of(pod)}: {hit.group(0)}",
                "the image's libtpu and jaxlib disagree: keep JAX_PLATFORMS=tpu,cpu and ENABLE_PJRT_COMPATIBILITY=true",
            )
    ready = [p for p in workers if pod_ready(p)]
    if len(ready) < expected:
        return this.answer(
            Verdict.UNKNOWN,
            f"{len(ready)} of {expected} hosts Ready, no TPU start error yet",
            "verify again once the slice has started; a host that never gets Ready: read its log",
        )
    return this.answer(Verdict.PASS, f"{expected} hosts Ready, no TPU start error")


def _minutes_old(live: dict[str, Any]) -> float:
    created = str((live.get("metadata") or {}).get("creationTimestamp", ""))
    try:
        since = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - since).total_seconds() / 60


@check(
    "kuberay-operator-path",
    "the KubeRay operator reaches the Ray head (the RayJob or RayService progresses)",
    lambda plan: bool(plan.of_kind("RayJob", RAY) or _services(plan)),
)
def operator_path(ctx: Context, this: Check):
    """The operator reads a RayJob's jobStatus and a RayService's application statuses from the head's dashboard
    (8265): any value there means it got through. None after STALLED_MINUTES means it did not."""
    fix = (
        f"read the deny log on {SERVE_HEAD_PORTS['dashboard']}: set cluster.kuberay.namespace to where your KubeRay "
        "runs (ray/flows.py)"
    )
    wait = "verify again in a few minutes"
    for obj in ctx.plan.of_kind("RayJob", RAY) + _services(ctx.plan):
        live, unknown = _live_or_unknown(ctx, this, obj)
        if unknown:
            return unknown
        status = live.get("status") or {}
        apps = (status.get("activeServiceStatus") or {}).get("applicationStatuses") or {}
        seen = status.get("jobStatus") or {name: app.get("status") for name, app in apps.items()}
        if seen:
            return this.answer(Verdict.PASS, f"the operator reads {ref(obj)} from the head: {seen}")
        if _minutes_old(live) > STALLED_MINUTES:
            return this.answer(
                Verdict.FAIL, f"{ref(obj)} has no status from the head after {STALLED_MINUTES} minutes", fix
            )
        return this.answer(Verdict.UNKNOWN, f"{ref(obj)} has no status from the head yet", wait)
    raise AssertionError("applies only to a plan with a RayJob or a RayService")
