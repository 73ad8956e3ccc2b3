"""SGLang-JAX's monitoring: the target its dashboard and alerts watch, handed to the shared monitoring layer, and its
own dashboard section, which its descriptor names (gcp/monitoring/capabilities.py).

The pinned SGLang-JAX exports no Prometheus metrics (ledger: sglang.metrics.none): the target has no metrics port,
so there is no PodMonitoring, no HPA (the replica count is fixed) and no engine chart. The dashboard is what GKE
gives every stack (the replica and slice cards, the TPU and container sections the shared layer draws) and this
section, which says so.
"""

from __future__ import annotations

from tpu_stacks.gcp.monitoring.model import Section
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.gcp.monitoring.widgets import note
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.sglang.plan import SglangPlan


def sglang_target(plan: SglangPlan, deployment: str, container: str) -> Target:
    return Target(
        kind="sglang",
        title=f"SGLang-JAX {plan.model.id} on {plan.shape.generation} {plan.shape.topology}",
        engine=SGLANG,
        tpu_containers=(container,),
        deployment=deployment,
        replicas=plan.spec.replicas,
        startup_minutes=plan.spec.startup_minutes,
        **stack_fields(plan),
    )


def sglang_sections(t: Target) -> list[Section]:
    widgets = (
        note(
            "No engine metrics",
            f"SGLang-JAX {t.engine.version} exports no Prometheus metrics (its --enable-metrics is read nowhere and "
            "no route serves /metrics): serving health is the replicas, TPUs and containers shown here; request "
            "lines are in the server's logs.",
        ),
    )
    return [Section(title="Serving", subtitle=t.title, widgets=widgets)]
