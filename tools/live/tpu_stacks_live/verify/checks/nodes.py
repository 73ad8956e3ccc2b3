"""Node pools that scale from zero (ledger gke.autoscaler.scale-from-zero, scale-down-blockers) and the jobs pool's
room (gke.node-allocatable): what the cluster autoscaler and the kubelet really do with the pools the plan sizes.

The autoscaler explains a pod it did not scale up for with a `NotTriggerScaleUp` event on the pod
(https://github.com/kubernetes/autoscaler/blob/0024f2540ecebb95ac72ceb28da995f1f7bc0491/cluster-autoscaler/FAQ.md);
a node of a pool that should be back at 0 is kept by a pod that is not a DaemonSet's and still runs. Nodes carry
their pool's name in the label `cloud.google.com/gke-nodepool`.
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.catalog.cpu_machines import SYSTEM_PODS_CPU_MILLIS, SYSTEM_PODS_MEMORY, allocatable, machine_shape
from tpu_stacks.inputs.k8s_quantity import quantity_value
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import list_objects
from tpu_stacks_live.verify.plan import NODE_POOL, Resource, StackPlan, name_of
from tpu_stacks_live.verify.registry import Check, Context, check

POOL_LABEL = "cloud.google.com/gke-nodepool"


def _from_zero(plan: StackPlan) -> list[Resource]:
    found = []
    for pool in plan.of_type(NODE_POOL):
        scaling = pool.inputs.get("autoscaling") or {}
        low = scaling.get("minNodeCount", scaling.get("totalMinNodeCount"))
        if low == 0:
            found.append(pool)
    return found


def _nodes(ctx: Context, pool: Resource) -> list[dict[str, Any]]:
    return list_objects(ctx.cluster, "/api/v1/nodes", labelSelector=f"{POOL_LABEL}={pool.inputs.get('name')}")


def _pods_on(ctx: Context, node: dict[str, Any]) -> list[dict[str, Any]]:
    return list_objects(ctx.cluster, "/api/v1/pods", fieldSelector=f"spec.nodeName={name_of(node)}")


def _keeps_node(pod: dict[str, Any]) -> bool:
    owners = {o.get("kind") for o in (pod.get("metadata") or {}).get("ownerReferences") or []}
    return "DaemonSet" not in owners and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


@check(
    "pool-scales-from-zero",
    "pools from 0 nodes scale up for their pods and keep no idle node",
    lambda plan: bool(_from_zero(plan)),
)
def scales_from_zero(ctx: Context, this: Check):
    namespaces = sorted({name_of(ns) for ns in ctx.plan.of_kind("Namespace", "")})
    for namespace in namespaces:
        events = list_objects(
            ctx.cluster, f"/api/v1/namespaces/{namespace}/events", fieldSelector="reason=NotTriggerScaleUp"
        )
        if events:
            message = " ".join(str(events[-1].get("message", "")).split())
            return this.answer(
                Verdict.FAIL,
                f"the autoscaler did not scale up for {namespace}: {message}",
                "a selector, toleration or size the pool does not match: compare the pod's with the pool's",
            )
    idle = []
    for pool in _from_zero(ctx.plan):
        for node in _nodes(ctx, pool):
            if not any(
                _keeps_node(pod) for pod in _pods_on(ctx, node) if pod["metadata"].get("namespace") in namespaces
            ):
                blockers = [
                    f"{p['metadata'].get('namespace')}/{name_of(p)}" for p in _pods_on(ctx, node) if _keeps_node(p)
                ]
                if blockers:
                    idle.append(f"{name_of(node)} kept by {', '.join(blockers[:2])}")
    if idle:
        return this.answer(
            Verdict.FAIL,
            f"node(s) of a pool from 0 held by pods of no stack workload: {'; '.join(idle)}",
            "keep such pods off the pool (its taint) or give them a PodDisruptionBudget (ledger: scale-down-blockers)",
        )
    counts = ", ".join(f"{p.inputs.get('name')}: {len(_nodes(ctx, p))}" for p in _from_zero(ctx.plan))
    return this.answer(Verdict.PASS, f"no scale-up refused, no node held idle ({counts} nodes)")


def _jobs_pools(plan: StackPlan) -> list[Resource]:
    """Pools from 0 of a catalogued CPU machine with a taint: a pool only its Jobs tolerate."""
    return [
        pool
        for pool in _from_zero(plan)
        if machine_shape(str((pool.inputs.get("nodeConfig") or {}).get("machineType", ""))) is not None
        and (pool.inputs.get("nodeConfig") or {}).get("taints")
    ]


def _requests(pod: dict[str, Any]) -> tuple[int, int]:
    cpu = memory = 0
    for container in pod["spec"].get("containers") or []:
        asked = (container.get("resources") or {}).get("requests") or {}
        cpu += int(quantity_value(str(asked.get("cpu", "0"))) * 1000)
        memory += int(quantity_value(str(asked.get("memory", "0"))))
    return cpu, memory


@check(
    "jobs-pool-allocatable",
    "a jobs-pool node offers what catalog/cpu_machines.py models",
    lambda plan: bool(_jobs_pools(plan)),
)
def jobs_allocatable(ctx: Context, this: Check):
    pool = _jobs_pools(ctx.plan)[0]
    shape = machine_shape(str(pool.inputs["nodeConfig"]["machineType"]))
    assert shape is not None
    nodes = _nodes(ctx, pool)
    if not nodes:
        return this.answer(
            Verdict.UNKNOWN, f"pool {pool.inputs.get('name')} has no node now", "verify while its Job runs"
        )
    want_cpu, want_memory = allocatable(shape)
    want_memory = want_memory // 1024 * 1024  # the kubelet reports memory in Ki
    namespaces = {name_of(ns) for ns in ctx.plan.of_kind("Namespace", "")}
    for node in nodes:
        offered = (node.get("status") or {}).get("allocatable") or {}
        cpu = int(quantity_value(str(offered.get("cpu", "0"))) * 1000)
        memory = int(quantity_value(str(offered.get("memory", "0"))))
        if cpu < want_cpu or memory < want_memory:
            return this.answer(
                Verdict.FAIL,
                f"{name_of(node)} offers {cpu}m and {memory} bytes, the model {want_cpu}m and {want_memory}",
                "correct the reservations in catalog/cpu_machines.py (ledger gke.node-allocatable)",
            )
        own = [_requests(p) for p in _pods_on(ctx, node) if p["metadata"].get("namespace") not in namespaces]
        own_cpu, own_memory = sum(c for c, _ in own), sum(m for _, m in own)
        if own_cpu > SYSTEM_PODS_CPU_MILLIS or own_memory > SYSTEM_PODS_MEMORY:
            return this.answer(
                Verdict.FAIL,
                f"{name_of(node)}'s own pods request {own_cpu}m and {own_memory} bytes",
                "raise SYSTEM_PODS_CPU_MILLIS and SYSTEM_PODS_MEMORY in catalog/cpu_machines.py",
            )
    return this.answer(Verdict.PASS, f"{len(nodes)} node(s) offer at least {want_cpu}m and {want_memory} bytes")
