"""A ComputeClass for a TPU slice that falls back across capacity kinds, derived from the decided pool.

Every field comes from the `PoolPlan` (the sized slice) and the catalogue (`catalog.capacity`): the
TPU type is the accelerator label, the topology the slice's, `count` the chips of one node (Google's own
TPU classes count per node, [ACP]) and `machineType` the one the slice was sized on; nothing is typed
by hand. GKE creates the node pools (`nodePoolAutoCreation`), tries the priorities in order, waits
rather than leaving them (`whenUnsatisfiable: DoNotScaleUp`) and moves pods back to a preferred kind
when it returns (`activeMigration`), except on a multi-host slice. Active migration moves running pods onto
nodes of a preferred kind once GKE can create them, evicting them from the nodes they run on ([D-CCC],
"Active migration"); the pods of a multi-host slice are one gang on a node pool GKE provisions and repairs
as a unit ([D-GKE-TPU]), and one evicted host stops the whole Ray Serve replica or JobSet. The page does not
say it moves a multi-host slice as a unit [I: not found there], so on such a slice it is off: a slice stays
on the kind it started on until it ends. Field names: GKE's ComputeClass CRD reference ([D-CCC]); the
offline planner validates the object against tools/preview/tpu_stacks_preview/crds/
cloud.google.com_computeclasses.yaml, written from that reference.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.capacity import (
    COMPUTE_CLASS_API_VERSION,
    COMPUTE_CLASS_KIND,
    RESERVATION_AFFINITY,
    WHEN_UNSATISFIABLE,
)
from tpu_stacks.cluster.capacity import Capacity
from tpu_stacks.cluster.plan import PoolPlan


def _rule(pool: PoolPlan, kind: Capacity) -> dict[str, Any]:
    """One priority: the sized slice on one capacity kind."""
    shape = pool.shape
    rule: dict[str, Any] = {
        "machineType": shape.machine_type,
        "tpu": {"type": shape.accelerator_label, "count": shape.chips_per_vm, "topology": shape.topology},
    }
    if kind.kind == "spot":
        rule["spot"] = True
    elif kind.kind == "onDemand":
        rule["spot"] = False
    elif kind.kind == "flexStart":
        rule["flexStart"] = {"enabled": True}
    else:
        rule["reservations"] = {"affinity": RESERVATION_AFFINITY, "specific": [{"name": kind.reservation}]}
    if pool.max_run_duration:
        rule["maxRunDurationSeconds"] = int(pool.max_run_duration.removesuffix("s"))
    if pool.max_pods_per_node:
        rule["maxPodsPerNode"] = pool.max_pods_per_node
    if pool.zone:
        rule["location"] = {"zones": [pool.zone]}
    return rule


def compute_class_spec(pool: PoolPlan, autopilot: bool) -> dict[str, Any]:
    """The ComputeClass `spec` of a fallback pool, without the node service account (an output)."""
    if not pool.compute_class:
        raise ValueError(f"pool {pool.name} is not provided by a ComputeClass")
    spec: dict[str, Any] = {
        "priorities": [_rule(pool, kind) for kind in pool.capacity],
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
        "activeMigration": {"optimizeRulePriority": not pool.shape.multi_host},
        "nodePoolConfig": {"nodeLabels": pool.node_labels()},
    }
    if not autopilot:
        spec["nodePoolAutoCreation"] = {"enabled": True}
    return spec


def declare_compute_class(
    pool: PoolPlan,
    autopilot: bool,
    service_account: pulumi.Input[str] | None,
    prefix: str,
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """The cluster-scoped ComputeClass object; its auto-created nodes run as the cluster's node account."""
    spec = compute_class_spec(pool, autopilot)
    if service_account is not None and not autopilot:
        config = spec["nodePoolConfig"]
        spec["nodePoolConfig"] = pulumi.Output.from_input(service_account).apply(
            lambda email: {**config, "serviceAccount": email} if email else config
        )
    return k8s.apiextensions.CustomResource(
        f"{prefix}-{pool.compute_class}-class",
        api_version=COMPUTE_CLASS_API_VERSION,
        kind=COMPUTE_CLASS_KIND,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=pool.compute_class),
        spec=spec,
        opts=opts,
    )
