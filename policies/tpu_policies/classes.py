"""What TPU slices a GKE ComputeClass provides, read from its raw object with the catalogue.

A ComputeClass (`cloud.google.com/v1`) creates node pools from its `priorities`; a priority with a
`tpu: {type, count, topology}` block is a TPU slice as much as a declared node pool is: the matching
rule counts it as a provider, and the ComputeClass rule checks the pods that select it. Read the same
way for our programs and for raw `CustomResource`/YAML ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpu_policies.slices import PoolSlice
from tpu_policies.values import UNKNOWN, as_dict, as_int, as_list, as_str, dig
from tpu_stacks.catalog.capacity import COMPUTE_CLASS_API_VERSION, COMPUTE_CLASS_KIND
from tpu_stacks.catalog.tpu import generation_of_accelerator, slice_shape
from tpu_stacks.errors import UserError


@dataclass(frozen=True)
class TpuRule:
    """One priority of a ComputeClass, as far as TPUs go (all None: a priority with no `tpu`)."""

    index: int
    type: str | None
    count: int | None
    topology: str | None
    machine_type: str | None
    kind: str = "onDemand"
    """The capacity kind of the priority's nodes (spot, flexStart, reservation, onDemand; cluster/compute_class.py)."""

    def describe(self) -> str:
        if self.type is None:
            return f"priorities[{self.index}] (no tpu)"
        return f"priorities[{self.index}] ({self.type} {self.topology}, {self.count} chips per node)"


def is_compute_class(resource_type: str, props: dict[str, Any]) -> bool:
    """A ComputeClass object, declared by pulumi-kubernetes's typed or generic custom resource."""
    if resource_type == f"kubernetes:{COMPUTE_CLASS_API_VERSION}:{COMPUTE_CLASS_KIND}":
        return True
    return props.get("apiVersion") == COMPUTE_CLASS_API_VERSION and props.get("kind") == COMPUTE_CLASS_KIND


def class_name(props: dict[str, Any], fallback: str) -> str:
    return as_str(dig(props, "metadata", "name")) or fallback


def _kind(rule: Any) -> str:
    if dig(rule, "spot") is True:
        return "spot"
    if dig(rule, "flexStart", "enabled") is True:
        return "flexStart"
    return "reservation" if dig(rule, "reservations") not in (None, UNKNOWN) else "onDemand"


def tpu_rules(props: dict[str, Any]) -> list[TpuRule] | None:
    """Every priority with its TPU block; None when the priorities are unknown at preview."""
    priorities = dig(props, "spec", "priorities")
    if priorities is UNKNOWN:
        return None
    rules = []
    for index, rule in enumerate(as_list(priorities)):
        tpu = as_dict(dig(rule, "tpu"))
        rules.append(
            TpuRule(
                index,
                as_str(tpu.get("type")),
                as_int(tpu.get("count")),
                as_str(tpu.get("topology")),
                as_str(dig(rule, "machineType")),
                _kind(rule),
            )
        )
    return rules


def class_slices(props: dict[str, Any], fallback: str) -> list[PoolSlice]:
    """The TPU slices a ComputeClass's priorities describe, as pool slices the matching rule reads."""
    name = f"ComputeClass {class_name(props, fallback)}"
    slices = []
    for rule in tpu_rules(props) or []:
        gen = generation_of_accelerator(rule.type) if rule.type else None
        if gen is None or rule.topology is None:
            continue
        try:
            shape = slice_shape(gen, rule.topology, rule.machine_type)
        except UserError:
            continue  # a rule GKE could not build; the ComputeClass rule reports disagreements
        machine = gen.machine_type(rule.machine_type or shape.machine_type)
        slices.append(PoolSlice(f"{name} {rule.describe()}", gen, machine, shape.topology, shape))
    return slices
