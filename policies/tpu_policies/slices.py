"""What TPU slice a GKE node pool provides, read from its raw inputs with the catalogue.

Shared by the node-pool shape rule and the stack rules (matching, versions), so a pool is read
the same way everywhere. A pool built by any program (ours, raw pulumi-gcp) is understood: the
machine type names the generation, `placementPolicy.tpuTopology` the slice, and a machine type
without a topology forms its own single-host slice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpu_policies.values import UNKNOWN, as_str, dig
from tpu_stacks.catalog.tpu import Generation, MachineType, SliceShape, generation_of_machine_type, slice_shape
from tpu_stacks.errors import UserError

POOL_TYPE = "gcp:container/nodePool:NodePool"
CLUSTER_TYPE = "gcp:container/cluster:Cluster"


@dataclass(frozen=True)
class PoolSlice:
    """A TPU node pool: generation, machine type and, when known, the slice it forms."""

    name: str
    generation: Generation
    machine: MachineType
    topology: str | None
    """None when the topology is not in the pool's inputs (a tpu7x workload policy) or unknown."""
    shape: SliceShape | None
    error: UserError | None = None

    @property
    def accelerator(self) -> str:
        return self.generation.accelerator_label

    @property
    def chips_per_vm(self) -> int:
        return self.machine.chips_per_vm

    def provides(self, accelerator: str, topology: str) -> bool:
        """Whether pods selecting these labels can land on this pool's nodes."""
        return self.error is None and accelerator == self.accelerator and self.topology in (None, topology)

    def describe(self) -> str:
        shown = self.topology or "topology from its workload policy"
        return f"{self.name} ({self.machine.name}, {self.accelerator} {shown})"


def pool_slice(props: dict[str, Any], fallback_name: str) -> PoolSlice | None:
    """The TPU slice of a node pool's inputs, or None for a CPU/GPU pool or an unknown machine type."""
    machine_type = as_str(dig(props, "nodeConfig", "machineType"))
    gen = generation_of_machine_type(machine_type) if machine_type else None
    if gen is None or machine_type is None:
        return None
    machine = gen.machine_type(machine_type)
    name = as_str(props.get("name")) or fallback_name
    topology = dig(props, "placementPolicy", "tpuTopology")
    policy_name = dig(props, "placementPolicy", "policyName")
    if topology is UNKNOWN:
        return PoolSlice(name, gen, machine, None, None)
    if not isinstance(topology, str) or not topology:
        if machine.joins_multi_host and (policy_name is UNKNOWN or as_str(policy_name)):
            return PoolSlice(name, gen, machine, None, None)
        topology = machine.host_topology
    try:
        shape = slice_shape(gen, topology, machine_type)
    except UserError as error:
        return PoolSlice(name, gen, machine, topology, None, error)
    return PoolSlice(name, gen, machine, shape.topology, shape)


def pools_of(resource_type: str, props: dict[str, Any], name: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, inputs) of the node pools a resource declares: a NodePool, or a Cluster's inline pools."""
    if resource_type == POOL_TYPE:
        return [(as_str(props.get("name")) or name, props)]
    if resource_type == CLUSTER_TYPE:
        inline = props.get("nodePools")
        if isinstance(inline, list):
            return [
                (as_str(dig(p, "name")) or f"{name}.nodePools[{i}]", p)
                for i, p in enumerate(inline)
                if isinstance(p, dict)
            ]
    return []
