"""The workload lifecycle, written once (`component.WorkloadComponent`): a workload component implements its hooks.

A new workload starts here: docs/architecture.md ("Adding a workload") lists the hooks and the files.
"""

from tpu_stacks.lifecycle.component import Declared, FoundationSettings, Scrape, WorkloadComponent, WorkloadPlan

__all__ = ["Declared", "FoundationSettings", "Scrape", "WorkloadComponent", "WorkloadPlan"]
