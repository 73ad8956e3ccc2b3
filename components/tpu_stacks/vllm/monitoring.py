"""vLLM's monitoring: the target its dashboard and alerts watch, handed to the shared monitoring layer, and its
own dashboard sections and status card, which its descriptor names (gcp/monitoring/capabilities.py).

The HPA's metric, target and bounds, the startup budget and the metrics port come from the plan the
Deployment and the HPA are built from (`vllm.spec`), so the charts and the alerts read the same numbers: the
queue chart draws the HPA's own target. A multi-host stack (a RayService, `serve` on its target,
vllm/monitoring_multihost.py) is watched through Ray instead (gcp/monitoring/rayserve.py).

Where vLLM defines the names read here: ledger: vllm.metric.num-requests-waiting,
vllm.metric.num-requests-running, vllm.metric.kv-cache-usage-perc, vllm.metric.time-to-first-token-seconds,
vllm.metric.inter-token-latency-seconds, vllm.metric.prompt-tokens, vllm.metric.generation-tokens,
vllm.metric.request-success.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring import rayserve
from tpu_stacks.gcp.monitoring.dashboards import picker_section, replicas_chart
from tpu_stacks.gcp.monitoring.model import Section, Threshold, Widget
from tpu_stacks.gcp.monitoring.targets import Hpa, Target, stack_fields
from tpu_stacks.gcp.monitoring.widgets import chart, scorecard
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.spec import PORT


def vllm_target(plan: VllmPlan, hpa_name: str, deployment: str, container: str) -> Target:
    spec = plan.spec
    hpa = None
    if plan.autoscales:
        hpa = Hpa(
            name=hpa_name,
            metric=f"vllm:{spec.autoscaling.metric}",
            target=spec.autoscaling.target,
            min_replicas=spec.replicas.min,
            max_replicas=spec.replicas.max,
        )
    return Target(
        kind="vllm",
        title=f"vLLM {plan.model.id} on {plan.shape.generation} {plan.shape.topology}",
        engine=VLLM,
        tpu_containers=(container,),
        deployment=deployment,
        replicas=None if hpa else spec.replicas.min,
        hpa=hpa,
        startup_minutes=spec.startup_minutes,
        metrics_port=PORT,  # the API server serves /metrics on its own port
        picker=plan.gateway.picker.record if plan.gateway is not None else None,
        picker_flow_control=plan.gateway is not None and plan.gateway.flow_control,
        picker_precise=plan.gateway is not None and plan.gateway.precise,
        **stack_fields(plan),
    )


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
        chart(
            "Requests waiting (the HPA's metric)",
            (f"avg({waiting})", "average per pod"),
            (f"sum by (pod) ({waiting})", "${pod}"),
            thresholds=queue_threshold,
            unit="requests",
        ),
        chart(
            "Requests running",
            (f"sum by (pod) ({q.engine(v, 'vllm:num_requests_running', sel)})", "${pod}"),
            unit="requests",
        ),
        chart(
            "KV cache usage",
            (f"max by (pod) ({q.engine(v, 'vllm:kv_cache_usage_perc', sel)})", "${pod}"),
            thresholds=cache_threshold,
            unit="fraction",
        ),
        replicas_chart(t),
    ]
    latency = [
        chart(
            "Time to first token",
            *(
                (q.quantile(v, "vllm:time_to_first_token_seconds", sel, p), f"p{int(p * 100)}")
                for p in (0.5, 0.9, 0.99)
            ),
            unit="s",
        ),
        chart(
            "Time per output token",
            *(
                (q.quantile(v, "vllm:inter_token_latency_seconds", sel, p), f"p{int(p * 100)}")
                for p in (0.5, 0.9, 0.99)
            ),
            unit="s",
        ),
        chart(
            "Tokens per second",
            (q.rate(q.engine(v, "vllm:generation_tokens_total", sel)), "generated"),
            (q.rate(q.engine(v, "vllm:prompt_tokens_total", sel)), "prompt"),
            unit="tokens/s",
        ),
        chart(
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


def vllm_status_cards(t: Target) -> list[Widget]:
    """The queue at a glance, against the HPA's target when the HPA scales on it (Ray Serve's cards when
    multi-host)."""
    if t.serve is not None:
        return rayserve.status_cards(t)
    waiting = q.engine(t.engine, "vllm:num_requests_waiting", t.scope.prometheus())
    line = ()
    if t.hpa is not None and t.hpa.metric == "vllm:num_requests_waiting":
        line = (Threshold(value=t.hpa.target, label="HPA target", color="YELLOW"),)
    return [scorecard("Requests waiting (average per pod)", f"avg({waiting})", line)]
