"""Everything monitoring decides for one stack, before any resource: the dashboard, the alerts with the
user's overrides applied, and the scrape endpoint. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.alerts import plan_alerts
from tpu_stacks.gcp.monitoring.dashboards import dashboard
from tpu_stacks.gcp.monitoring.model import Dashboard
from tpu_stacks.gcp.monitoring.spec import CHANNEL
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
        return self.target.step_log_metric


def plan_monitoring(target: Target, section: str) -> MonitoringPlan:
    """Refuses a malformed channel or an unknown alert id, in one line naming the key."""
    for index, channel in enumerate(target.monitoring.notification_channels):
        if not CHANNEL.match(channel):
            raise UserError(
                f"{section}.monitoring.notificationChannels[{index}]",
                channel,
                "is not a notification channel's name",
                "write projects/PROJECT/notificationChannels/ID (gcloud beta monitoring channels list)",
            )
    return MonitoringPlan(target=target, dashboard=dashboard(target), alerts=tuple(plan_alerts(target, section)))
