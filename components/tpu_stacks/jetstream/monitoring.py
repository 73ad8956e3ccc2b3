"""JetStream's monitoring: the target its dashboard and alerts watch, handed to the shared monitoring layer, and
its own dashboard section and status card, which its descriptor names (gcp/monitoring/capabilities.py).

The engine version is the one the server image pins (a user's own image: the newest catalogued entry);
the metrics port is charted only when that version exports metrics.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import engine_of_image
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.dashboards import replicas_chart
from tpu_stacks.gcp.monitoring.model import Section, Widget
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.gcp.monitoring.widgets import chart, note, scorecard
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.jetstream.plan import JetStreamPlan


def jetstream_target(plan: JetStreamPlan, deployment: str, container: str, metrics_port: int | None) -> Target:
    spec = plan.spec
    version = engine_of_image(plan.server_image) or JETSTREAM[-1]  # a user's image: the newest entry
    return Target(
        kind="jetstream",
        title=f"JetStream {plan.model.id} on {plan.shape.generation} {plan.shape.topology}",
        engine=version,
        tpu_containers=(container,),
        deployment=deployment,
        replicas=spec.replicas,
        startup_minutes=60,
        metrics_port=metrics_port if version.metrics else None,
        **stack_fields(plan),
    )


def jetstream_sections(t: Target) -> list[Section]:
    widgets: list[Widget] = [replicas_chart(t)]
    if t.exports_metrics:
        sel = t.scope.prometheus()
        v = t.engine
        widgets += [
            chart(
                "Prefill backlog (requests queued)",
                (f"sum by (pod) ({q.engine(v, 'jetstream_prefill_backlog_size', sel)})", "${pod}"),
                unit="requests",
            ),
            chart(
                "Decode slots used",
                (f"avg by (pod) ({q.engine(v, 'jetstream_slots_used_percentage', sel)})", "${pod}"),
                unit="fraction",
            ),
        ]
    else:
        widgets.append(
            note(
                "No engine metrics",
                f"JetStream-PyTorch {t.engine.version} (`jpt serve`) starts no Prometheus server, so queue and "
                "slot metrics exist only in the converter flow (v0.2.3, `--prometheus_port`). TPU and pod charts "
                "below.",
            )
        )
    return [Section(title="Serving", subtitle=t.title, widgets=tuple(widgets))]


def jetstream_status_cards(t: Target) -> list[Widget]:
    """The prefill backlog, where the pinned version exports it."""
    if not t.exports_metrics:
        return []
    backlog = q.engine(t.engine, "jetstream_prefill_backlog_size", t.scope.prometheus())
    return [scorecard("Prefill backlog", f"sum({backlog})")]
