"""Ray Train's monitoring: the target its dashboard and alerts watch, handed to the shared monitoring layer, and
its own dashboard section, status card and alerts, which its descriptor names (gcp/monitoring/capabilities.py).

The RayCluster's name, its slices and hosts per slice come from the plan the RayCluster is built from;
the metrics port is the one the Ray pods export on (`raytrain.pods`). A training job, not a server
(`serving=False`), whose progress is MaxText's step line in the job's log (`STEP_LOG`).

Where Ray Train defines the names read here: ledger: ray-train.metric.controller-state,
ray-train.metric.controller-state-tag, ray-train.controller-state.running.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.model import (
    Axis,
    DataSet,
    Section,
    Threshold,
    TimeSeriesFilter,
    TimeSeriesQuery,
    Widget,
    XyChart,
)
from tpu_stacks.gcp.monitoring.targets import StepLog, Target, stack_fields
from tpu_stacks.gcp.monitoring.widgets import chart, scorecard
from tpu_stacks.raytrain.plan import RayTrainPlan
from tpu_stacks.raytrain.pods import RAY_METRICS_PORT

STEP_LOG = StepLog(
    metric="maxtext_step_seconds",
    contains="completed step: ",
    # MaxText's per-step log line (MaxText/metric_logger.py `log_metrics`: `completed step: {step}, seconds:
    # {t:.3f}, TFLOP/s/device: ...`); Ray streams the workers' output to the job's log, which the RayJob's
    # submitter prints.
    line=r"completed step: \d+, seconds: ([0-9.]+)",
    description="MaxText seconds per training step, from its `completed step` log line",
)


def raytrain_target(plan: RayTrainPlan, container: str) -> Target:
    spec = plan.spec
    return Target(
        kind="raytrain",
        title=f"Ray Train + MaxText {spec.model} on {plan.shape.generation} {plan.shape.topology} x{spec.slices}",
        engine=RAY,
        tpu_containers=(container,),
        ray_cluster=spec.ray_cluster_name,
        metrics_port=RAY_METRICS_PORT,
        slices=spec.slices,
        hosts_per_slice=plan.hosts,
        serving=False,
        step_log=STEP_LOG,
        **stack_fields(plan),
    )


def raytrain_sections(t: Target) -> list[Section]:
    sel = t.scope.prometheus()
    v = t.engine
    step_filter = f'metric.type="logging.googleapis.com/user/{t.step_log_metric}"'
    workers = t.scope.prometheus(container=t.tpu_containers[0])
    widgets = (
        chart(
            "Ray Train controller state",
            (
                f"max by (ray_train_controller_state) ({q.engine(v, 'ray_train_controller_state', sel)})",
                "${ray_train_controller_state}",
            ),
            unit="state (1 = current)",
        ),
        Widget(
            title="MaxText step time (from the trainer's log)",
            xy_chart=XyChart(
                data_sets=(
                    DataSet(
                        time_series_query=TimeSeriesQuery(
                            time_series_filter=TimeSeriesFilter(filter=step_filter), unit_override="s"
                        ),
                    ),
                ),
                y_axis=Axis(label="seconds per step"),
            ),
        ),
        chart(
            "Worker group start time",
            (f"max({q.engine(v, 'ray_train_worker_group_start_total_time_s', sel)})", "start"),
            unit="s",
        ),
        chart(
            "Ray worker pods ready",
            (
                f"sum({q.kube_state('kube_pod_container_status_ready', workers)})",
                "ready",
            ),
            thresholds=(
                Threshold(value=t.slices * t.hosts_per_slice, label="all workers", color="YELLOW", direction="BELOW"),
            ),
            unit="pods",
        ),
    )
    return [Section(title="Training", subtitle=t.title, widgets=widgets)]


def raytrain_status_cards(t: Target) -> list[Widget]:
    """Whether the run is running (red when not)."""
    running = q.engine(t.engine, "ray_train_controller_state", t.scope.prometheus(ray_train_controller_state="RUNNING"))
    return [
        scorecard(
            "Training running (1 = yes)",
            f"max({running})",
            (Threshold(value=0, label="not running", color="RED", direction="BELOW"),),
        )
    ]


def raytrain_alerts(t: Target) -> list[Alert]:
    # Ray Train v2's controller state, one series per state name (ledger: ray-train.metric.controller-state,
    # ray-train.metric.controller-state-tag, ray-train.controller-state.errored, ray-train.controller-state.restarting,
    # ray-train.controller-state.rescheduling).
    state = q.engine(
        t.engine, "ray_train_controller_state", t.scope.prometheus(**{"ray_train_controller_state~": "ERRORED"})
    )
    restarting = q.engine(
        t.engine,
        "ray_train_controller_state",
        t.scope.prometheus(**{"ray_train_controller_state~": "RESTARTING|RESCHEDULING"}),
    )
    return [
        Alert(
            id="training-failed",
            title=f"Ray Train run on {t.ray_cluster} failed",
            query=f"max({state}) > 0",
            minutes=1,
            severity="CRITICAL",
            why="The Ray Train controller reached ERRORED: the run stopped. `kubectl describe rayjob` and the Ray "
            "dashboard's job log say why.",
        ),
        Alert(
            id="slice-restarted",
            title=f"Ray Train on {t.ray_cluster} restarting its workers",
            query=f"max({restarting}) > 0",
            minutes=1,
            severity="ERROR",
            why="A worker (a TPU slice host) failed and Ray Train is restarting the worker group from the last "
            "checkpoint. Repeated restarts mean a bad host or preemptions.",
        ),
    ]
