"""The workload lifecycle, written once: `component.WorkloadComponent`, whose hooks a workload component implements.

A new workload starts here: docs/architecture.md ("Adding a workload") lists the hooks. Importing the package
loads no provider SDK (the registry looks into every package of `tpu_stacks` for a descriptor): import the names
from `tpu_stacks.lifecycle.component`.
"""
