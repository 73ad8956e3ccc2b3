"""`monitoring:` in a workload's section: whether the stack gets a dashboard and alerts, where alerts go,
and which alerts to turn on or off. Pure (pydantic), read by every workload's spec."""

from __future__ import annotations

import re

from pydantic import Field

from tpu_stacks.inputs.field_rules import SpecModel

CHANNEL = re.compile(r"^projects/[^/]+/notificationChannels/[0-9]+$")
"""A notification channel's resource name (projects.notificationChannels, Monitoring API v3)."""


class MonitoringSpec(SpecModel):
    # SpecModel (field_rules.py): unknown keys, `on` for a boolean, infinite numbers and secrets refused.

    enabled: bool = True
    """Declare the stack's Cloud Monitoring dashboard and alert policies."""
    notification_channels: list[str] = Field(default_factory=list, alias="notificationChannels")
    """Notification channels the alerts notify, as `projects/PROJECT/notificationChannels/ID` (none: alerts only
    show in the console)."""
    alerts: dict[str, bool] = Field(default_factory=dict)
    """Turn alerts on or off by id (e.g. `tpu-hbm-near-full: true`); ids are listed in docs/monitoring.md."""
    queue_minutes: int = Field(default=10, ge=1, le=1440, alias="queueMinutes")
    """vLLM: minutes the queue may stay above the HPA target at the maximum replica count before it alerts."""
    hbm_fraction: float = Field(default=0.95, gt=0, le=1, alias="hbmFraction")
    """TPU HBM used over total above which the HBM alert fires."""
