"""A TPU workload and the ComputeClass it selects agree on the slice, and the class exists.

GKE creates a ComputeClass's node pools from its priorities (docs/capacity.md): a priority whose TPU
type, topology or chips per node differ from what the pods select and request makes nodes the pods
cannot use (they stay Pending while GKE pays for the wrong slice, or it falls through to the next
priority); a pod selecting a class nobody declares never gets a node (`whenUnsatisfiable` never even
applies); a pod that also selects one kind's label (`cloud.google.com/gke-spot`) can never use the
other priorities' nodes, so the fallback is only on paper. All are visible in the plan. GKE's
built-in classes (About GKE ComputeClasses) are not declared by programs and are left alone.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from tpu_policies.classes import TpuRule, class_name, is_compute_class, tpu_rules
from tpu_policies.stack import read_stack
from tpu_policies.values import UNKNOWN
from tpu_policies.workloads import PodTemplate
from tpu_stacks.catalog.capacity import COMPUTE_CLASS_LABEL
from tpu_stacks.catalog.tpu import (
    ACCELERATOR_LABEL,
    FLEX_START_LABEL,
    QUEUED_LABEL,
    RESERVATION_LABEL,
    SPOT_LABEL,
    TOPOLOGY_LABEL,
)

CAPACITY_LABELS = {
    SPOT_LABEL: "spot",
    FLEX_START_LABEL: "flexStart",
    QUEUED_LABEL: "queued",
    RESERVATION_LABEL: "reservation",
}
"""Node labels of one capacity kind ([XPK], [CTK]), with the kind whose nodes carry them
(a ComputeClass never provisions queued nodes)."""

BUILT_IN_CLASSES = frozenset({"autopilot", "autopilot-spot", "Accelerator", "Balanced", "Performance", "Scale-Out"})
"""GKE's own ComputeClasses, which exist in clusters without a program declaring them (GKE "About GKE
ComputeClasses", cloud.google.com/kubernetes-engine/docs/concepts/about-compute-classes)."""


def _disagreements(template: PodTemplate, rule: TpuRule) -> list[str]:
    if rule.type is None:
        return ["has no tpu block, so GKE may create nodes without TPUs for it"]
    found = []
    accelerator, topology = template.accelerator, template.topology
    if isinstance(accelerator, str) and accelerator and accelerator != rule.type:
        found.append(f"creates {rule.type} nodes but the pods select {accelerator}")
    if isinstance(topology, str) and topology and topology != rule.topology:
        found.append(f"creates {rule.topology} slices but the pods select {topology}")
    if template.chips_known and rule.count is not None and template.chips != rule.count:
        found.append(f"gives {rule.count} chips per node but the pods request {template.chips} google.com/tpu")
    return found


def check_selection(template: PodTemplate, selected: str, classes: dict[str, list[TpuRule] | None]) -> list[str]:
    """Every problem of one TPU pod template with the ComputeClass it selects."""
    if selected not in classes:
        if selected in BUILT_IN_CLASSES:
            return []
        declared = ", ".join(sorted(classes)) or "none"
        return [
            f"{template.where} selects ComputeClass {selected}, which this program does not declare "
            f"(declared: {declared}); declare it or select one that exists"
        ]
    rules = classes[selected]
    if rules is None:
        return []  # priorities unknown at preview
    problems = []
    pinned = [label for label in CAPACITY_LABELS if template.selector(label) not in (None, UNKNOWN)]
    if any(rule.kind != CAPACITY_LABELS[label] for label in pinned for rule in rules):
        problems.append(
            f"{template.where} selects ComputeClass {selected} and {', '.join(pinned)}, which only one capacity kind's "
            "nodes carry: the other priorities' nodes can never take the pods; remove the capacity selector"
        )
    for rule in rules:
        for found in _disagreements(template, rule):
            problems.append(
                f"ComputeClass {selected} {rule.describe()} {found}; derive the class from the same slice as the "
                f"pods (tpu.type = their {ACCELERATOR_LABEL}, tpu.topology = their {TOPOLOGY_LABEL}, "
                "tpu.count = their google.com/tpu per pod)"
            )
    return problems


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = read_stack(args)
    classes: dict[str, Any] = {
        class_name(item.props, item.name): tpu_rules(item.props)
        for item in stack.items
        if is_compute_class(item.type, item.props)
    }
    for item, templates in stack.tpu_workloads():
        for template in templates:
            selected = template.selector(COMPUTE_CLASS_LABEL)
            if selected is UNKNOWN or not isinstance(selected, str) or not selected:
                continue
            for problem in check_selection(template, selected, classes):
                report_violation(f"{item.label}: {problem}", item.urn)


POLICY = StackValidationPolicy(
    name="tpu-compute-class-matches-workload",
    description="A TPU workload selects a ComputeClass the program declares, and every priority of that class "
    "creates the slice the pods select and request (TPU type, topology, chips per node).",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
