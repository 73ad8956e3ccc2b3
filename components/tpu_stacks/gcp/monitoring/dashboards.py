"""The dashboard of each workload: what a user should see first, then why.

Top row: is it serving (or training) and is it keeping up; then latency and throughput; then the
TPUs (TensorCore and duty cycle, HBM used against total, per pod and per slice); then pod health
(restarts, pending). Every query names catalogued metrics only (queries.py), and the vLLM queue
chart draws the HPA's own target, read from the same spec field the HPA is built from.

Where the engines define the names read here: vLLM's (ledger: vllm.metric.num-requests-waiting,
vllm.metric.num-requests-running, vllm.metric.kv-cache-usage-perc, vllm.metric.time-to-first-token-seconds,
vllm.metric.inter-token-latency-seconds, vllm.metric.prompt-tokens, vllm.metric.generation-tokens,
vllm.metric.request-success), the endpoint picker's (ledger: epp.metric.subsystem.objective,
epp.metric.subsystem.pool, epp.metric.subsystem.extension, epp.metric.request-total,
epp.metric.pool-average-queue-size, epp.metric.pool-average-running-requests,
epp.metric.pool-average-kv-cache-utilization, epp.metric.pool-ready-pods, epp.metric.scheduler-e2e-duration-seconds)
and Ray Train's (ledger: ray-train.metric.controller-state, ray-train.metric.controller-state-tag,
ray-train.controller-state.running).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import EngineVersion
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring import rayserve
from tpu_stacks.gcp.monitoring.model import (
    Axis,
    Dashboard,
    DataSet,
    Section,
    Threshold,
    TimeSeriesFilter,
    TimeSeriesQuery,
    Widget,
    XyChart,
)
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.gcp.monitoring.widgets import chart as _chart
from tpu_stacks.gcp.monitoring.widgets import note as _note
from tpu_stacks.gcp.monitoring.widgets import scorecard as _scorecard

STEP_LOG_METRIC = "maxtext_step_seconds"
"""The log-based metric (per stack) that carries MaxText's `completed step: N, seconds: S` lines."""


def vllm_sections(t: Target) -> list[Section]:
    if t.serve is not None:  # multi-host: a RayService, watched through Ray
        return rayserve.sections(t)
    sel = t.scope.prometheus()
    v = t.engine
    hpa = t.hpa
    waiting = q.engine(v, "vllm:num_requests_waiting", sel)
    queue_threshold: tuple[Threshold, ...] = ()
    cache_threshold: tuple[Threshold, ...] = ()
    if hpa is not None:
        line = (Threshold(value=hpa.target, label=f"HPA target {hpa.target:g} (average per pod)", color="YELLOW"),)
        if hpa.metric == "vllm:num_requests_waiting":
            queue_threshold = line
        else:
            cache_threshold = line
    first = [
        _chart(
            "Requests waiting (the HPA's metric)",
            (f"avg({waiting})", "average per pod"),
            (f"sum by (pod) ({waiting})", "${pod}"),
            thresholds=queue_threshold,
            unit="requests",
        ),
        _chart(
            "Requests running",
            (f"sum by (pod) ({q.engine(v, 'vllm:num_requests_running', sel)})", "${pod}"),
            unit="requests",
        ),
        _chart(
            "KV cache usage",
            (f"max by (pod) ({q.engine(v, 'vllm:kv_cache_usage_perc', sel)})", "${pod}"),
            thresholds=cache_threshold,
            unit="fraction",
        ),
        _replicas(t),
    ]
    latency = [
        _chart(
            "Time to first token",
            *(
                (q.quantile(v, "vllm:time_to_first_token_seconds", sel, p), f"p{int(p * 100)}")
                for p in (0.5, 0.9, 0.99)
            ),
            unit="s",
        ),
        _chart(
            "Time per output token",
            *(
                (q.quantile(v, "vllm:inter_token_latency_seconds", sel, p), f"p{int(p * 100)}")
                for p in (0.5, 0.9, 0.99)
            ),
            unit="s",
        ),
        _chart(
            "Tokens per second",
            (q.rate(q.engine(v, "vllm:generation_tokens_total", sel)), "generated"),
            (q.rate(q.engine(v, "vllm:prompt_tokens_total", sel)), "prompt"),
            unit="tokens/s",
        ),
        _chart(
            "Requests finished per second",
            (q.rate(q.engine(v, "vllm:request_success_total", sel), "finished_reason"), "${finished_reason}"),
            unit="requests/s",
        ),
    ]
    return [
        Section(title="Serving", subtitle=t.title, widgets=tuple(first)),
        Section(title="Latency and throughput", widgets=tuple(latency)),
        *([picker_section(t, t.picker)] if t.picker is not None else []),
    ]


QUEUE_WAIT = "inference_extension_flow_control_request_queue_duration_seconds"


def picker_section(t: Target, epp: EngineVersion) -> Section:
    """What GKE Inference Gateway's endpoint picker sees of the pool (its averages of the servers' own metrics,
    the ready endpoints) and of its own work: requests per objective and how long a pick takes
    (pkg/epp/metrics/metrics.go at the pinned version: catalog/engines.py EPP); with its Flow Control layer on, the
    queue by priority and the time requests wait in it (metrics the picker fills only with that gate; ledger:
    epp.metric.flow-control-queue-size, epp.metric.flow-control-queue-duration)."""
    sel = t.scope.prometheus()
    flow_control = (
        (
            _chart(
                "Flow Control: queued requests, by priority",
                (
                    f"sum by (priority) ({q.engine(epp, 'inference_extension_flow_control_queue_size', sel)})",
                    "priority ${priority}",
                ),
                unit="requests",
            ),
            _chart(
                "Flow Control: time in queue (p99), by priority",
                (
                    f"histogram_quantile(0.99, sum by (le, priority) (rate({q.engine(epp, QUEUE_WAIT, sel, '_bucket')}"
                    f"[{q.RATE_WINDOW}])))",
                    "priority ${priority}",
                ),
                unit="s",
            ),
        )
        if t.picker_flow_control
        else ()
    )
    return Section(
        title="Inference Gateway",
        subtitle=f"endpoint picker {epp.version}",
        widgets=(
            _chart(
                "Pool: average queue and running requests",
                (f"max({q.engine(epp, 'inference_pool_average_queue_size', sel)})", "queued"),
                (f"max({q.engine(epp, 'inference_pool_average_running_requests', sel)})", "running"),
                unit="requests",
            ),
            _chart(
                "Pool: average KV cache utilization",
                (f"max({q.engine(epp, 'inference_pool_average_kv_cache_utilization', sel)})", "average"),
                unit="fraction",
            ),
            _chart(
                "Pool: ready endpoints",
                (f"max({q.engine(epp, 'inference_pool_ready_pods', sel)})", "ready"),
                unit="pods",
            ),
            _chart(
                "Requests routed per second, by objective",
                (q.rate(q.engine(epp, "inference_objective_request_total", sel), "model_name"), "${model_name}"),
                unit="requests/s",
            ),
            _chart(
                "Picking latency",
                *(
                    (q.quantile(epp, "inference_extension_scheduler_e2e_duration_seconds", sel, p), f"p{int(p * 100)}")
                    for p in (0.5, 0.99)
                ),
                unit="s",
            ),
            *flow_control,
        ),
    )


def _replicas(t: Target) -> Widget:
    if t.hpa is not None:
        hpa_sel = t.scope.prometheus(horizontalpodautoscaler=t.hpa.name)
        return _chart(
            f"Replicas (HPA {t.hpa.min_replicas}..{t.hpa.max_replicas})",
            (q.kube_state("kube_horizontalpodautoscaler_status_current_replicas", hpa_sel), "current"),
            (q.kube_state("kube_horizontalpodautoscaler_status_desired_replicas", hpa_sel), "desired"),
            thresholds=(Threshold(value=t.hpa.max_replicas, label="max replicas", color="RED"),),
            unit="replicas",
        )
    dep = t.scope.prometheus(deployment=t.deployment or "")
    return _chart(
        f"Replicas available (of {t.replicas})",
        (q.kube_state("kube_deployment_status_replicas_available", dep), "available"),
        (q.kube_state("kube_deployment_spec_replicas", dep), "wanted"),
        unit="replicas",
    )


def jetstream_sections(t: Target) -> list[Section]:
    widgets: list[Widget] = [_replicas(t)]
    if t.exports_metrics:
        sel = t.scope.prometheus()
        v = t.engine
        widgets += [
            _chart(
                "Prefill backlog (requests queued)",
                (f"sum by (pod) ({q.engine(v, 'jetstream_prefill_backlog_size', sel)})", "${pod}"),
                unit="requests",
            ),
            _chart(
                "Decode slots used",
                (f"avg by (pod) ({q.engine(v, 'jetstream_slots_used_percentage', sel)})", "${pod}"),
                unit="fraction",
            ),
        ]
    else:
        widgets.append(
            _note(
                "No engine metrics",
                f"JetStream-PyTorch {t.engine.version} (`jpt serve`) starts no Prometheus server, so queue and "
                "slot metrics exist only in the converter flow (v0.2.3, `--prometheus_port`). TPU and pod charts "
                "below.",
            )
        )
    return [Section(title="Serving", subtitle=t.title, widgets=tuple(widgets))]


def saxml_sections(t: Target) -> list[Section]:
    js = t.scope.prometheus(jobset_name=t.jobset or "")
    widgets = (
        _chart(
            f"Model-server slices ready (of {t.slices})",
            (q.kube_state("kube_jobset_ready_replicas", js), "ready"),
            (q.kube_state("kube_jobset_specified_replicas", js), "specified"),
            unit="slices",
        ),
        _chart(
            "JobSet restarts",
            (q.kube_state("kube_jobset_restarts", js), "restarts"),
            (q.kube_state("kube_jobset_failed_replicas", js), "failed slices"),
            unit="count",
        ),
        _note(
            "No engine metrics",
            f"Saxml {t.engine.version} exports no Prometheus metrics: serving health is the slices, TPUs and pods "
            "shown here; request traces are in the HTTP server's logs.",
        ),
    )
    return [Section(title="Serving", subtitle=t.title, widgets=widgets)]


def raytrain_sections(t: Target) -> list[Section]:
    sel = t.scope.prometheus()
    v = t.engine
    step_filter = f'metric.type="logging.googleapis.com/user/{step_metric_name(t)}"'
    workers = t.scope.prometheus(container=t.tpu_containers[0])
    widgets = (
        _chart(
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
        _chart(
            "Worker group start time",
            (f"max({q.engine(v, 'ray_train_worker_group_start_total_time_s', sel)})", "start"),
            unit="s",
        ),
        _chart(
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


def step_metric_name(t: Target) -> str:
    """One per stack: log-based metric names are project-wide."""
    return f"tpu-stacks/{t.cluster}/{t.namespace}/{STEP_LOG_METRIC}"


def tpu_section(t: Target) -> Section:
    containers = "|".join(t.tpu_containers)
    sel = t.scope.system(**{"container_name~": containers})
    used = q.system("kubernetes.io/container/accelerator/memory_used", sel)
    total = q.system("kubernetes.io/container/accelerator/memory_total", sel)
    tensorcore = q.system("kubernetes.io/container/accelerator/tensorcore_utilization", sel)
    duty = q.system("kubernetes.io/container/accelerator/duty_cycle", sel)
    by = _slice_label(t)
    widgets = [
        _chart("TensorCore utilization per pod", (f"avg by (pod_name) ({tensorcore})", "${pod_name}"), unit="%"),
        _chart("Duty cycle per pod", (f"avg by (pod_name) ({duty})", "${pod_name}"), unit="%"),
        _chart(
            "HBM used vs total per pod",
            (f"sum by (pod_name) ({used})", "used ${pod_name}"),
            (f"sum by (pod_name) ({total})", "total ${pod_name}"),
            unit="bytes",
        ),
        _chart(
            "HBM used / total per slice" if t.jobset else "HBM used / total, whole workload",
            (
                f"sum by ({by}) ({_per_slice(t, used)}) / sum by ({by}) ({_per_slice(t, total)})",
                _slice_legend(t),
            ),
            thresholds=(Threshold(value=t.monitoring.hbm_fraction, label="HBM alert", color="RED"),),
            unit="fraction",
        ),
    ]
    return Section(title="TPUs", subtitle=f"containers {', '.join(t.tpu_containers)}", widgets=tuple(widgets))


def _slice_label(t: Target) -> str:
    return "slice" if t.jobset else "namespace_name"


def _slice_legend(t: Target) -> str:
    return "slice ${slice}" if t.jobset else "all TPU pods"


def _per_slice(t: Target, series: str) -> str:
    """JobSet pods are named `<jobset>-<replicatedJob>-<slice>-<host>-<suffix>`: the slice index is read off
    the name."""
    if not t.jobset:
        return series
    return f'label_replace({series}, "slice", "$1", "pod_name", "{t.jobset}-[a-z0-9-]+?-([0-9]+)-[0-9]+-[a-z0-9]+")'


def health_section(t: Target) -> Section:
    sel = t.scope.prometheus()
    widgets = (
        _chart(
            "Container restarts (last hour)",
            (f"sum by (pod_name) (increase({q.restarts(t.scope)}[1h]))", "${pod_name}"),
            unit="restarts",
        ),
        _chart(
            "Pods pending / unschedulable",
            (f"sum({q.kube_state('kube_pod_status_phase', t.scope.prometheus(phase='Pending'))})", "pending"),
            (f"sum({q.kube_state('kube_pod_status_unschedulable', sel)})", "unschedulable"),
            unit="pods",
        ),
    )
    return Section(title="Pods", subtitle=f"namespace {t.namespace}", widgets=widgets)


SECTIONS = {
    "vllm": vllm_sections,
    "jetstream": jetstream_sections,
    "saxml": saxml_sections,
    "raytrain": raytrain_sections,
}


def status_section(t: Target) -> Section:
    """The first row, read at a glance: is it up, is it keeping up, are the TPUs busy (red/yellow when not).
    A scorecard's BELOW threshold turns at `value <= threshold` (Scorecard.thresholds), hence `wanted - 1`."""
    cards: list[Widget] = []
    if t.deployment is not None:
        wanted = t.hpa.min_replicas if t.hpa else (t.replicas or 1)
        available = q.kube_state(
            "kube_deployment_status_replicas_available", t.scope.prometheus(deployment=t.deployment)
        )
        cards.append(
            _scorecard(
                "Replicas ready",
                f"sum({available})",
                (Threshold(value=wanted - 1, label=f"fewer than {wanted}", color="RED", direction="BELOW"),),
            )
        )
    if t.jobset is not None:
        ready = q.kube_state("kube_jobset_ready_replicas", t.scope.prometheus(jobset_name=t.jobset))
        cards.append(
            _scorecard(
                "Slices ready",
                f"sum({ready})",
                (Threshold(value=t.slices - 1, label=f"fewer than {t.slices}", color="RED", direction="BELOW"),),
            )
        )
    if t.serve is not None:
        cards += rayserve.status_cards(t)
    elif t.kind == "vllm":
        waiting = q.engine(t.engine, "vllm:num_requests_waiting", t.scope.prometheus())
        line = ()
        if t.hpa is not None and t.hpa.metric == "vllm:num_requests_waiting":
            line = (Threshold(value=t.hpa.target, label="HPA target", color="YELLOW"),)
        cards.append(_scorecard("Requests waiting (average per pod)", f"avg({waiting})", line))
    if t.kind == "jetstream" and t.exports_metrics:
        backlog = q.engine(t.engine, "jetstream_prefill_backlog_size", t.scope.prometheus())
        cards.append(_scorecard("Prefill backlog", f"sum({backlog})"))
    if t.kind == "raytrain":
        running = q.engine(
            t.engine, "ray_train_controller_state", t.scope.prometheus(ray_train_controller_state="RUNNING")
        )
        cards.append(
            _scorecard(
                "Training running (1 = yes)",
                f"max({running})",
                (Threshold(value=0, label="not running", color="RED", direction="BELOW"),),
            )
        )
    sel = t.scope.system(**{"container_name~": "|".join(t.tpu_containers)})
    tensorcore = q.system("kubernetes.io/container/accelerator/tensorcore_utilization", sel)
    cards.append(_scorecard("TensorCore utilization (average)", f"avg({tensorcore})"))
    return Section(title="Now", subtitle=t.title, widgets=tuple(cards))


def dashboard(t: Target) -> Dashboard:
    sections = [status_section(t), *SECTIONS[t.kind](t), tpu_section(t), health_section(t)]
    return Dashboard(
        display_name=f"tpu-stacks {t.kind}: {t.cluster}/{t.namespace}",
        sections=tuple(sections),
        labels={"tpu-stacks": "", t.kind: ""},
    )
