"""Saxml's monitoring target: what its dashboard and alerts watch, handed to the shared monitoring layer.

A Saxml stack is a JobSet of multi-host slices: the target names the JobSet and its shape (slices and
hosts per slice) as planned; Saxml exports no Prometheus metrics at its pinned version (no port).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import SAXML
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.saxml.plan import SaxmlPlan


def saxml_target(plan: SaxmlPlan, jobset: str, container: str) -> Target:
    return Target(
        kind="saxml",
        title=f"Saxml {', '.join(m.model for m in plan.models)} on {plan.shape.generation} {plan.shape.topology}",
        engine=SAXML,
        tpu_containers=(container,),
        jobset=jobset,
        startup_minutes=60,  # a multi-host slice loads its share of a 175B model before it serves
        slices=plan.slices,
        hosts_per_slice=plan.hosts,
        **stack_fields(plan),
    )
