"""The typed `monitoring` input and output of every workload component, as Pulumi's schema inference reads
them (`gcp.monitoring.spec.MonitoringSpec` validates the same fields; scripts/args_docs.py keeps the docs).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import NotRequired, TypedDict


class MonitoringArgs(TypedDict):
    enabled: NotRequired[bool]
    """Declare the stack's Cloud Monitoring dashboard and alert policies. Default: true."""
    notification_channels: NotRequired[list[str]]
    """Notification channels the alerts notify, as `projects/PROJECT/notificationChannels/ID` (none: alerts only show
    in the console)."""
    alerts: NotRequired[dict[str, bool]]
    """Turn alerts on or off by id (e.g. `tpu-hbm-near-full: true`); ids are listed in docs/monitoring.md."""
    queue_minutes: NotRequired[int]
    """vLLM: minutes the queue may stay above the HPA target at the maximum replica count before it alerts. Default:
    10."""
    hbm_fraction: NotRequired[float]
    """TPU HBM used over total above which the HBM alert fires. Default: 0.95."""


class MonitoringLinks(TypedDict):
    dashboard: str
    """The stack's Cloud Monitoring dashboard (empty when monitoring is off)."""
    workloads: str
    """GKE Workloads: pods, their state and events."""
    cluster: str
    """The cluster's details page (node pools, TPU nodes)."""
    alerts: str
    """Alert policies and open incidents."""
    logs: str
    """Logs Explorer, filtered to the stack's namespace."""
