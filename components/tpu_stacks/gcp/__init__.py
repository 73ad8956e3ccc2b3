"""Google Cloud pieces shared by the components: universes (pure), Workload Identity, hardened buckets.

Importing this package loads no provider SDK; `WorkloadIdentity` is loaded on first use.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "WorkloadIdentity":
        from tpu_stacks.gcp.identity import WorkloadIdentity

        return WorkloadIdentity
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
