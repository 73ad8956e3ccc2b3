"""The stack as the stack-level rules see it: clusters, TPU node pools and TPU workloads.

Stack rules answer questions that span resources (does some pool provide the slice a pod selects?
is the cluster's version new enough for its pools?). Reading every resource once into plain data
here keeps each rule short and the reading identical across rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs

from tpu_policies.classes import class_slices, is_compute_class
from tpu_policies.slices import CLUSTER_TYPE, PoolSlice, pool_slice, pools_of
from tpu_policies.values import UNKNOWN, is_true, plain
from tpu_policies.workloads import PodTemplate, kind_of, name_of, pod_templates


@dataclass
class Item:
    """One resource of the stack with its inputs as plain data."""

    type: str
    name: str
    urn: str
    props: dict[str, Any]
    resource: PolicyResource

    @property
    def label(self) -> str:
        return f"{kind_of(self.type, self.props)} {name_of(self.props, self.name)}"


@dataclass
class Pool:
    item: Item
    name: str
    slice: PoolSlice | None
    """None for a CPU/GPU pool."""
    props: dict[str, Any]


@dataclass
class Stack:
    items: list[Item]
    clusters: list[Item] = field(default_factory=list)
    pools: list[Pool] = field(default_factory=list)
    workloads: list[tuple[Item, list[PodTemplate]]] = field(default_factory=list)

    class_slices: list[PoolSlice] = field(default_factory=list)
    """TPU slices of the stack's ComputeClasses, whose pools GKE creates (tpu_policies.classes)."""

    @property
    def tpu_pools(self) -> list[PoolSlice]:
        return [pool.slice for pool in self.pools if pool.slice is not None] + self.class_slices

    @staticmethod
    def autopilot(cluster: Item) -> bool:
        return is_true(cluster.props.get("enableAutopilot"))

    @property
    def has_autopilot(self) -> bool:
        return any(self.autopilot(c) or c.props.get("enableAutopilot") is UNKNOWN for c in self.clusters)

    @property
    def has_standard(self) -> bool:
        return any(not self.autopilot(c) for c in self.clusters)

    def tpu_workloads(self) -> list[tuple[Item, list[PodTemplate]]]:
        return [
            (item, [t for t in templates if t.chips > 0])
            for item, templates in self.workloads
            if any(t.chips > 0 for t in templates)
        ]

    def cluster_of(self, pool: Pool) -> Item | None:
        """The cluster a pool belongs to: its own Cluster, the one its `cluster` input depends on, or
        the one with that name, or the only cluster of the stack."""
        if pool.item.type == CLUSTER_TYPE:
            return pool.item
        for dependency in pool.item.resource.property_dependencies.get("cluster", []):
            for cluster in self.clusters:
                if cluster.urn == dependency.urn:
                    return cluster
        wanted = pool.item.props.get("cluster")
        for cluster in self.clusters:
            if isinstance(wanted, str) and wanted in (cluster.props.get("name"), cluster.name):
                return cluster
        return self.clusters[0] if len(self.clusters) == 1 else None


def read_stack(args: StackValidationArgs) -> Stack:
    """Every resource of the stack, sorted into clusters, pools and workloads."""
    stack = Stack(items=[])
    for resource in args.resources:
        props = plain(resource.props)
        item = Item(
            resource.resource_type, resource.name, resource.urn, props if isinstance(props, dict) else {}, resource
        )
        stack.items.append(item)
        if item.type == CLUSTER_TYPE:
            stack.clusters.append(item)
        for name, pool_props in pools_of(item.type, item.props, item.name):
            stack.pools.append(Pool(item, name, pool_slice(pool_props, name), pool_props))
        if is_compute_class(item.type, item.props):
            stack.class_slices += class_slices(item.props, item.name)
        templates = pod_templates(item.type, item.props)
        if templates:
            stack.workloads.append((item, templates))
    return stack
