"""The typed outputs of every workload component (its `monitoring` output), as Pulumi's schema inference reads them.

Written by hand: outputs are what the component returns, not inputs a spec declares (those are in the
generated `args.py`).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import TypedDict


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
