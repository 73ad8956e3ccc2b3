"""What every Ray pod of this project carries, whichever workload runs it."""

from __future__ import annotations

CLUSTER_LABEL = "tpu-stacks.dev/ray-cluster"
"""The Ray cluster a pod belongs to (KubeRay adds its own `ray.io/cluster`; ours is the one our policies select)."""
ROLE_LABEL = "tpu-stacks.dev/ray-node"
"""`head` or `worker`: the NetworkPolicies and the serving Service select by it."""
RAY_TMP_GIB = 10
"""/tmp holds Ray's session directory (logs, and objects spilled from the object store)."""
