"""Saxml's monitoring: the target its dashboard and alerts watch, handed to the shared monitoring layer, and its
own dashboard section, which its descriptor names (gcp/monitoring/capabilities.py).

A Saxml stack is a JobSet of multi-host slices: the target names the JobSet and its shape (slices and
hosts per slice) as planned; Saxml exports no Prometheus metrics at its pinned version (no port).
"""

from __future__ import annotations

from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.model import Section
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.gcp.monitoring.widgets import chart, note
from tpu_stacks.saxml.engine import SAXML
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


def saxml_sections(t: Target) -> list[Section]:
    js = t.scope.prometheus(jobset_name=t.jobset or "")
    widgets = (
        chart(
            f"Model-server slices ready (of {t.slices})",
            (q.kube_state("kube_jobset_ready_replicas", js), "ready"),
            (q.kube_state("kube_jobset_specified_replicas", js), "specified"),
            unit="slices",
        ),
        chart(
            "JobSet restarts",
            (q.kube_state("kube_jobset_restarts", js), "restarts"),
            (q.kube_state("kube_jobset_failed_replicas", js), "failed slices"),
            unit="count",
        ),
        note(
            "No engine metrics",
            f"Saxml {t.engine.version} exports no Prometheus metrics: serving health is the slices, TPUs and pods "
            "shown here; request traces are in the HTTP server's logs.",
        ),
    )
    return [Section(title="Serving", subtitle=t.title, widgets=widgets)]
