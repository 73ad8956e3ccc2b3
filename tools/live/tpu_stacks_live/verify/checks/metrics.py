"""The metrics the dashboards, alert policies and HPAs query, present in Cloud Monitoring, and the HPA reading
them through the custom-metrics adapter.

Cloud Monitoring accepts a query on a metric nobody publishes and charts nothing; an alert on it never fires. Each
name is asked of Managed Prometheus with `count({__name__="NAME"})` (the Prometheus HTTP API GKE serves:
https://cloud.google.com/stackdriver/docs/managed-prometheus/query-api-ui). An HPA metric spelled
`prometheus.googleapis.com|NAME|gauge` (the adapter's form) is the PromQL NAME. The adapter's APIServices report
`Available` (apiregistration.k8s.io/v1 APIServiceStatus); an HPA that reads its metric reports `ScalingActive`.
"""

from __future__ import annotations

from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import condition, is_true, read_object, ref
from tpu_stacks_live.verify.plan import StackPlan
from tpu_stacks_live.verify.registry import Check, Context, check


def hpa_metrics(plan: StackPlan) -> dict[str, str]:
    """PromQL name -> the HPA that scales on it."""
    found: dict[str, str] = {}
    for hpa in plan.of_kind("HorizontalPodAutoscaler"):
        for entry in (hpa.get("spec") or {}).get("metrics") or []:
            source = entry.get("pods") or entry.get("object") or entry.get("external") or {}
            name = str((source.get("metric") or {}).get("name", ""))
            if name:
                promql = name.split("|")[1] if name.count("|") == 2 else name
                found.setdefault(promql, f"HPA {ref(hpa)}")
    return found


def queried(plan: StackPlan) -> dict[str, str]:
    return {**plan.queried_metrics(), **hpa_metrics(plan)}


@check(
    "monitoring-metrics-present",
    "every metric the dashboards, alerts and HPAs query has series in Cloud Monitoring",
    lambda plan: bool(queried(plan)),
)
def metrics_present(ctx: Context, this: Check):
    wanted = queried(ctx.plan)
    missing = [name for name in sorted(wanted) if not ctx.google.promql(f'count({{__name__="{name}"}})')]
    if not missing:
        return this.answer(Verdict.PASS, f"all {len(wanted)} metrics have series")
    shown = ", ".join(f"{name} ({wanted[name]})" for name in missing[:4])
    more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
    return this.answer(
        Verdict.FAIL,
        f"{len(missing)} of {len(wanted)} metrics have no series: {shown}{more}",
        "after the server has answered requests, a name still empty is not exported under it: fix it in "
        "catalog/engines/ (GKE system metrics: monitoringConfig.enableComponents)",
    )


@check(
    "metrics-adapter-available",
    "the custom-metrics adapter's APIServices are Available (the API server reaches the adapter)",
    lambda plan: bool(plan.of_kind("APIService")),
)
def adapter_available(ctx: Context, this: Check):
    bad = []
    for service in ctx.plan.of_kind("APIService"):
        live = read_object(ctx.cluster, service)
        if live is None:
            return this.answer(Verdict.UNKNOWN, f"{ref(service)} not found", "pulumi up, then verify again")
        if not is_true(live, "Available"):
            reason = (condition(live, "Available") or {}).get("reason", "no condition")
            bad.append(f"{(live.get('metadata') or {}).get('name')} ({reason})")
    if bad:
        return this.answer(
            Verdict.FAIL,
            f"not Available: {', '.join(bad)}",
            "FailedDiscoveryCheck: the adapter's policy must admit 6443 from the API server (api_server_calls)",
        )
    return this.answer(Verdict.PASS, f"{len(ctx.plan.of_kind('APIService'))} APIServices Available")


@check(
    "hpa-metrics-read",
    "each HPA reads its metric (ScalingActive, a current value)",
    lambda plan: bool(plan.of_kind("HorizontalPodAutoscaler")),
)
def hpa_read(ctx: Context, this: Check):
    for hpa in ctx.plan.of_kind("HorizontalPodAutoscaler"):
        live = read_object(ctx.cluster, hpa)
        if live is None:
            return this.answer(Verdict.UNKNOWN, f"{ref(hpa)} not found", "pulumi up, then verify again")
        if not is_true(live, "ScalingActive") or not (live.get("status") or {}).get("currentMetrics"):
            message = (condition(live, "ScalingActive") or {}).get("message", "no ScalingActive condition")
            return this.answer(
                Verdict.FAIL,
                f"{ref(hpa)} does not read its metric: {message}",
                "check metrics-adapter-available, then that the engine exports the metric (catalog/engines/)",
            )
    return this.answer(Verdict.PASS, f"{len(ctx.plan.of_kind('HorizontalPodAutoscaler'))} HPA(s) read their metric")
