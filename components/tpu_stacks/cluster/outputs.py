"""The typed outputs of `TpuCluster`, as Pulumi's schema inference reads them.

Written by hand: outputs are what the component returns, not inputs a spec declares (those are in the
generated `args.py`).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import TypedDict


class SliceInfo(TypedDict):
    """One node pool of the cluster as workloads see it."""

    pool_name: str
    machine_type: str
    topology: str
    chips: int
    nodes: int
    chips_per_vm: int
    accelerator_label: str
    generation: str
    node_selector: dict[str, str]
