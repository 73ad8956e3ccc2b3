"""TPU scheduling for a pod: node selector and the `google.com/tpu` request, from a pool plan."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from tpu_stacks.catalog.tpu import TPU_RESOURCE
from tpu_stacks.cluster.plan import PoolPlan


def tpu_node_selector(pool: PoolPlan) -> dict[str, str]:
    """Accelerator and topology labels (plus the capacity label Autopilot needs to pick spot etc., or the
    ComputeClass that falls back across capacity kinds: its nodes carry the TPU labels too)."""
    return pool.node_selector() if pool.autopilot or pool.compute_class else pool.shape.node_selector()


def tpu_resources(pool: PoolPlan, cpu: str, memory: str) -> k8s.core.v1.ResourceRequirementsArgs:
    """Every chip of the node ([D-GKE-TPU]), plus CPU and memory so the scheduler can plan."""
    chips = str(pool.shape.chips_per_vm)
    return k8s.core.v1.ResourceRequirementsArgs(
        requests={TPU_RESOURCE: chips, "cpu": cpu, "memory": memory},
        limits={TPU_RESOURCE: chips, "memory": memory},
    )
