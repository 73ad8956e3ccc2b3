"""Everything monitoring decides for one stack, before any resource: the dashboard, the alerts with the
user's overrides applied, and the scrape endpoint. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from tpu_stacks.gcp.monitoring.alerts import Alert, plan_alerts
from tpu_stacks.gcp.monitoring.dashboards import dashboard, step_metric_name
from tpu_stacks.gcp.monitoring.model import Dashboard
from tpu_stacks.gcp.monitoring.targets import Target


@dataclass(frozen=True)
class MonitoringPlan:
    target: Target
    dashboard: Dashboard
    alerts: tuple[Alert, ...]

    @property
    def enabled(self) -> bool:
        return self.target.monitoring.enabled

    @property
    def step_log_metric(self) -> str | None:
        return step_metric_name(self.target) if self.target.kind == "raytrain" else None


def plan_monitoring(target: Target, section: str) -> MonitoringPlan:
    return MonitoringPlan(target=target, dashboard=dashboard(target), alerts=tuple(plan_alerts(target, section)))
