"""The dashboard of each workload: what a user should see first, then why.

Top row: is it up and keeping up (the replica or slice cards every workload gets, then the workload's own
cards: a queue, a run's state), and are the TPUs busy; then the workload's own sections (latency and
throughput, the engine's queue, training progress); then the TPUs (TensorCore and duty cycle, HBM used
against total, per pod and per slice); then pod health (restarts, pending). Every query names catalogued
metrics only (queries.py).

The workload's own cards and sections live in its package (`<workload>/monitoring.py`) and its descriptor
names them (capabilities.py): this module draws what every workload shares and the endpoint picker's section
(the v1.5.0 picker's names: ledger: epp.metric.subsystem.objective, epp.metric.subsystem.pool,
epp.metric.subsystem.extension, epp.metric.request-total, epp.metric.pool-average-queue-size,
epp.metric.pool-average-running-requests, epp.metric.pool-average-kv-cache-utilization, epp.metric.pool-ready-pods,
epp.metric.scheduler-e2e-duration-seconds).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.inference_gateway import SCHEDULED_STATUS
from tpu_stacks.catalog.pickers import PICKERS
from tpu_stacks.gcp.monitoring import capabilities
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.model import Dashboard, Section, Threshold, Widget
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.gcp.monitoring.widgets import chart as _chart
from tpu_stacks.gcp.monitoring.widgets import scorecard as _scorecard


def picker_section(t: Target, epp: EngineVersion) -> Section:
    """What the gateway's endpoint picker sees of the pool (its averages of the servers' own metrics, the ready
    endpoints) and of its own work: requests per objective, how long a pick takes, which server each pick chose
    and, for llm-d's router, how much of each prompt its prefix index matched; each server's own queue beside them.
    Names by release (catalog/pickers.py): the router's `llm_d_epp_*` (ledger: router.metric.subsystem,
    router.metric.scheduler-attempts, router.metric.prefix-hit-ratio) or v1.5.0's. With its Flow Control layer on,
    the queue by priority and the time requests wait in it (metrics the picker fills only with that gate; ledger:
    epp.metric.flow-control-queue-size, epp.metric.flow-control-queue-duration)."""
    sel = t.scope.prometheus()
    m = next(p for p in PICKERS.values() if p.record == epp).metrics
    flow_control = (
        (
            _chart(
                "Flow Control: queued requests, by priority",
                (f"sum by (priority) ({q.engine(epp, m.flow_control_queue, sel)})", "priority ${priority}"),
                unit="requests",
            ),
            _chart(
                "Flow Control: time in queue (p99), by priority",
                (
                    "histogram_quantile(0.99, sum by (le, priority) "
                    f"(rate({q.engine(epp, m.flow_control_wait, sel, '_bucket')}[{q.RATE_WINDOW}])))",
                    "priority ${priority}",
                ),
                unit="s",
            ),
        )
        if t.picker_flow_control
        else ()
    )
    picks_sel = t.scope.prometheus(status=SCHEDULED_STATUS)
    cache_hits = (
        (
            _chart(
                "Prefix cache: matched fraction of each prompt",
                *((q.quantile(epp, m.prefix_hit_ratio, sel, p), f"p{int(p * 100)}") for p in (0.5, 0.9)),
                unit="fraction",
            ),
        )
        if m.prefix_hit_ratio
        else ()
    )
    precise = _kv_index_charts(t, epp, sel) if t.picker_precise and m.kv_index else ()
    return Section(
        title="Inference Gateway",
        subtitle=f"endpoint picker {epp.images[0].rsplit('/', 1)[-1]} {epp.version}",
        widgets=(
            _chart(
                "Pool: average queue and running requests",
                (f"max({q.engine(epp, m.pool_queue, sel)})", "queued"),
                (f"max({q.engine(epp, m.pool_running, sel)})", "running"),
                unit="requests",
            ),
            _chart(
                "Queue per server (what the queue scorer weighs)",
                (f"sum by (pod) ({q.engine(t.engine, 'vllm:num_requests_waiting', sel)})", "${pod}"),
                unit="requests",
            ),
            _chart(
                "Pool: average KV cache utilization",
                (f"max({q.engine(epp, m.pool_kv_cache, sel)})", "average"),
                unit="fraction",
            ),
            _chart(
                "Pool: ready endpoints",
                (f"max({q.engine(epp, m.ready, sel)})", "ready"),
                unit="pods",
            ),
            _chart(
                "Picks per second, by chosen server (the scorers' decisions)",
                (q.rate(q.engine(epp, m.picks, picks_sel), m.endpoint_label), f"${{{m.endpoint_label}}}"),
                unit="picks/s",
            ),
            *cache_hits,
            _chart(
                "Requests routed per second, by objective",
                (q.rate(q.engine(epp, m.requests, sel), "model_name"), "${model_name}"),
                unit="requests/s",
            ),
            _chart(
                "Picking latency",
                *((q.quantile(epp, m.pick_latency, sel, p), f"p{int(p * 100)}") for p in (0.5, 0.99)),
                unit="s",
            ),
            *flow_control,
            *precise,
        ),
    )


def _kv_index_charts(t: Target, epp: EngineVersion, sel: str) -> tuple[Widget, ...]:
    """The precise prefix producer's view (ledger: router.metric.kv-index-lookups, router.metric.kv-index-hits,
    router.metric.kv-index-admissions, router.metric.kv-index-evictions, router.metric.kv-events-subscribers,
    router.metric.kv-events-messages, router.metric.kv-events-zmq-errors): how many cached blocks a request's prompt
    finds (0 while the events do not arrive or the block sizes disagree), the blocks the servers' events add and
    remove, and whether the router hears every server."""
    m = next(p for p in PICKERS.values() if p.record == epp).metrics.kv_index
    assert m is not None
    return (
        _chart(
            "Precise prefix cache: cached blocks found per request",
            (f"{q.rate(q.engine(epp, m.hits, sel))} / {q.rate(q.engine(epp, m.lookups, sel))}", "blocks per lookup"),
            unit="blocks",
        ),
        _chart(
            "KV-block index: blocks stored and evicted per second (the servers' events)",
            (q.rate(q.engine(epp, m.admissions, sel)), "stored"),
            (q.rate(q.engine(epp, m.evictions, sel)), "evicted"),
            unit="blocks/s",
        ),
        _chart(
            "KV events: batches received per second, by server",
            (q.rate(q.engine(epp, m.messages, sel), "pod_identifier"), "${pod_identifier}"),
            unit="batches/s",
        ),
        _chart(
            "KV events: subscribers and errors",
            (f"max({q.engine(epp, m.subscribers, sel)})", "subscribers (one per server)"),
            (q.rate(q.engine(epp, m.errors, sel), "operation"), "errors/s ${operation}"),
            unit="count",
        ),
    )


def replicas_chart(t: Target) -> Widget:
    """The replicas of a Deployment: against its HPA's bounds when one scales it, else against the fixed count."""
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


def status_section(t: Target) -> Section:
    """The first row, read at a glance: is it up, is it keeping up (the workload's own cards), are the TPUs busy
    (red/yellow when not).
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
    cards += capabilities.status_cards(t)
    sel = t.scope.system(**{"container_name~": "|".join(t.tpu_containers)})
    tensorcore = q.system("kubernetes.io/container/accelerator/tensorcore_utilization", sel)
    cards.append(_scorecard("TensorCore utilization (average)", f"avg({tensorcore})"))
    return Section(title="Now", subtitle=t.title, widgets=tuple(cards))


def dashboard(t: Target) -> Dashboard:
    sections = [status_section(t), *capabilities.sections(t), tpu_section(t), health_section(t)]
    return Dashboard(
        display_name=f"tpu-stacks {t.kind}: {t.cluster}/{t.namespace}",
        sections=tuple(sections),
        labels={"tpu-stacks": "", t.kind: ""},
    )
