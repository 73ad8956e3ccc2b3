"""`TpuCluster`: its typed args, spec (what users write), plan (pure decisions), node pools and component.

Importing this package loads no provider SDK; `TpuCluster` itself is loaded on first use.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "TpuCluster":
        from tpu_stacks.cluster.component import TpuCluster

        return TpuCluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
