"""What the shared monitoring layer asks a workload for, by its target's `kind`: its descriptor's capabilities.

A workload's dashboard sections, its cards in the status row and its own alerts live in its package
(`<workload>/monitoring.py`) and its descriptor names them by dotted path (registry.py `Workload`). The shared
layer looks the descriptor up by the target's `kind` and calls what it names, so it neither imports a workload
nor branches on a workload's name (kueue's optional job interfaces, such as `JobWithCustomStop`, are the model:
https://github.com/kubernetes-sigs/kueue/blob/main/pkg/controller/jobframework/interface.go). A capability a
descriptor leaves out (None) contributes nothing.
"""

from __future__ import annotations

from tpu_stacks import registry
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.model import Section, Widget
from tpu_stacks.gcp.monitoring.targets import Target


def descriptor(t: Target) -> registry.Workload:
    """The workload the target belongs to (ValueError when no workload of that name is registered)."""
    found = {w.name: w for w in registry.workloads()}
    if t.kind not in found:
        raise ValueError(
            f"the monitoring target {t.title!r} names workload {t.kind!r}, which is not registered: "
            f"{', '.join(found)} are (a target's kind is its workload's name)"
        )
    return found[t.kind]


def sections(t: Target) -> list[Section]:
    return list(descriptor(t).dashboard_sections.load()(t))


def status_cards(t: Target) -> list[Widget]:
    ref = descriptor(t).status_cards
    return [] if ref is None else list(ref.load()(t))


def alerts(t: Target) -> list[Alert]:
    ref = descriptor(t).alerts
    return [] if ref is None else list(ref.load()(t))
