"""Declare a stack's monitoring: the PodMonitoring that scrapes its engine, the dashboard, a training job's
step-time log metric (`Target.step_log`), and the alert policies.

Called by the workload lifecycle (lifecycle/component.py), with the plan made before its first resource
(`plan_monitoring`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks.gcp.apis import LOGGING_APIS, MONITORING_APIS, enable_apis_by_name
from tpu_stacks.gcp.monitoring.links import dashboard_url, first_links
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.gcp.universe import universe
from tpu_stacks.k8s.pod_monitoring import pod_monitoring


def declare_pod_monitoring(
    name: str,
    plan: MonitoringPlan,
    match_labels: dict[str, str],
    opts: pulumi.ResourceOptions,
    *,
    interval: str = "30s",
    always: bool = False,
) -> k8s.apiextensions.CustomResource | None:
    """Managed Prometheus scrapes the engine's endpoint on the target's metrics port: only where the pinned engine
    exports metrics and the stack's monitoring is on, unless `always` (an autoscaler reads them: vLLM's HPA)."""
    t = plan.target
    if not (always or (plan.enabled and t.exports_metrics)) or t.metrics_port is None:
        return None
    return pod_monitoring(
        f"{name}-pod-monitoring", f"{t.kind}-pod-monitoring", t.namespace, match_labels, t.metrics_port, opts, interval
    )


def monitoring_apis(
    parent: pulumi.Resource, name: str, plan: MonitoringPlan, enabled: Mapping[str, pulumi.Resource]
) -> dict[str, pulumi.Resource]:
    """The APIs the dashboard, alerts and log metric call, by name: the ones the cluster already enabled
    (`enabled`, the same project's), the others enabled here. In Google Cloud's own universe only, as the
    cluster's (gcp/apis.py): another universe's service names are not verified here."""
    t = plan.target
    needed = (*MONITORING_APIS, *(LOGGING_APIS if plan.step_log_metric else ()))
    if not universe(t.universe).is_default:
        return {}
    missing = [api for api in needed if api not in enabled]
    return {
        **{api: enabled[api] for api in needed if api in enabled},
        **enable_apis_by_name(name, t.project, missing, parent),
    }


def declare_monitoring(
    parent: pulumi.Resource, name: str, plan: MonitoringPlan, enabled_apis: Mapping[str, pulumi.Resource] | None = None
) -> pulumi.Output[dict[str, Any]]:
    """The dashboard, the log metric and the alerts, each after the API it calls (a fresh project has
    Monitoring and Logging off: the first `up` would fail at the first of them); returns the outputs a
    user opens first. `enabled_apis`: what the cluster already enabled in the same project."""
    t = plan.target
    links = first_links(t.universe, t.project, t.location, t.cluster, t.namespace)
    if not plan.enabled:
        return pulumi.Output.from_input({"dashboard": "", **links})
    apis = monitoring_apis(parent, name, plan, enabled_apis or {})
    monitoring_api = [apis[api] for api in MONITORING_APIS if api in apis]
    child = pulumi.ResourceOptions(parent=parent, depends_on=monitoring_api)
    after: list[pulumi.Resource] = []
    if plan.step_log_metric and t.step_log is not None:
        step = t.step_log
        after.append(
            gcp.logging.Metric(
                f"{name}-step-time",
                gcp.logging.MetricArgs(
                    name=plan.step_log_metric,
                    project=t.project,
                    description=step.description,
                    filter=(
                        f'resource.type="k8s_container" AND resource.labels.cluster_name="{t.cluster}" AND '
                        f'resource.labels.namespace_name="{t.namespace}" AND textPayload:"{step.contains}"'
                    ),
                    value_extractor=f'REGEXP_EXTRACT(textPayload, "{step.line}")',
                    metric_descriptor=gcp.logging.MetricMetricDescriptorArgs(
                        metric_kind="DELTA", value_type="DISTRIBUTION", unit="s"
                    ),
                    bucket_options=gcp.logging.MetricBucketOptionsArgs(
                        exponential_buckets=gcp.logging.MetricBucketOptionsExponentialBucketsArgs(
                            num_finite_buckets=40, growth_factor=1.3, scale=0.01
                        )
                    ),
                ),
                opts=pulumi.ResourceOptions(
                    parent=parent, depends_on=[apis[api] for api in LOGGING_APIS if api in apis]
                ),
            )
        )
    board = gcp.monitoring.Dashboard(
        f"{name}-dashboard",
        dashboard_json=plan.dashboard.to_json(),
        project=t.project,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*monitoring_api, *after]),
    )
    channels = list(t.monitoring.notification_channels)
    for alert in plan.alerts:
        gcp.monitoring.AlertPolicy(
            f"{name}-alert-{alert.id}",
            gcp.monitoring.AlertPolicyArgs(
                display_name=f"[{t.cluster}/{t.namespace}] {alert.title}",
                project=t.project,
                combiner="OR",
                enabled=alert.enabled,
                severity=alert.severity,
                notification_channels=channels or None,
                user_labels={"tpu-stacks": t.kind, "alert": alert.id},
                documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                    content=alert.why + (f"\n\nOff by default: {alert.noisy_because}." if alert.noisy_because else ""),
                    mime_type="text/markdown",
                ),
                conditions=[
                    gcp.monitoring.AlertPolicyConditionArgs(
                        display_name=alert.title,
                        condition_prometheus_query_language=gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
                            query=alert.query,
                            duration=alert.duration,
                            evaluation_interval="60s",
                            # The engine's series exist only after the first scrape, after `pulumi up` made the
                            # pods: Monitoring would refuse the policy for a metric that "does not exist yet"
                            # (pulumi-gcp AlertPolicy conditionPrometheusQueryLanguage.disableMetricValidation).
                            # The offline plan checks every name against the catalogue instead.
                            disable_metric_validation=True,
                        ),
                    )
                ],
            ),
            opts=child,
        )
    return board.id.apply(
        lambda dashboard_id: {"dashboard": dashboard_url(t.universe, t.project, dashboard_id or ""), **links}
    )
