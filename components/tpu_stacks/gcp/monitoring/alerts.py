"""The alert policies of each workload, as data: id, PromQL condition, how long it must hold, and whether
it is on by default (off only where it would fire in normal operation). Every stack gets the ones here, as its
target's capabilities say (a server's idle TPU nodes, a JobSet's restarts); a workload's own come from its
descriptor (capabilities.py).

`plan_alerts` applies the user's `monitoring.alerts` overrides and refuses an unknown id with a
did-you-mean, before any resource is declared. The condition is a PromQL alert
(`conditionPrometheusQueryLanguage`, https://cloud.google.com/monitoring/alerts/promql-alerts-in-console).
"""

from __future__ import annotations

import difflib

from tpu_stacks.catalog.upstream import number
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring import capabilities, rayserve
from tpu_stacks.gcp.monitoring import queries as q
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.targets import Target


def _not_ready(t: Target) -> Alert | None:
    if t.jobset is not None:
        return _slices_not_ready(t)
    if t.deployment is None:
        return None
    dep = t.scope.prometheus(deployment=t.deployment)
    wanted = q.kube_state("kube_deployment_spec_replicas", dep)
    ready = q.kube_state("kube_deployment_status_replicas_available", dep)
    return Alert(
        id="serving-pods-not-ready",
        title=f"{t.deployment}: serving pods not ready",
        query=f"({wanted} - {ready}) > 0",
        # A new replica may take its whole startup budget (TPU node, image, model load, XLA compile).
        minutes=t.startup_minutes + 5,
        severity="ERROR",
        why=f"Fewer {t.deployment} replicas are available than wanted for longer than a server may take to start "
        f"({t.startup_minutes} min). Check pending pods (TPU capacity, quota) and the server's log.",
    )


def _slices_not_ready(t: Target) -> Alert:
    js = t.scope.prometheus(jobset_name=t.jobset or "")
    wanted = q.kube_state("kube_jobset_specified_replicas", js)
    ready = q.kube_state("kube_jobset_ready_replicas", js)
    return Alert(
        id="serving-pods-not-ready",
        title=f"{t.jobset}: model-server slices not ready",
        query=f"({wanted} - {ready}) > 0",
        minutes=t.startup_minutes + 5,
        severity="ERROR",
        why=f"Fewer of the {t.slices} model-server slices are ready than specified for longer than a slice may take "
        f"to start ({t.startup_minutes} min). Check pending pods (TPU capacity) and the model servers' logs.",
    )


def _queue_at_max(t: Target) -> Alert | None:
    # ledger: vllm.metric.num-requests-waiting
    if t.hpa is None or t.hpa.metric != "vllm:num_requests_waiting":
        return None
    waiting = q.engine(t.engine, t.hpa.metric, t.scope.prometheus())
    current = q.kube_state(
        "kube_horizontalpodautoscaler_status_current_replicas", t.scope.prometheus(horizontalpodautoscaler=t.hpa.name)
    )
    return Alert(
        id="queue-above-target-at-max",
        title=f"vLLM queue above the HPA target ({t.hpa.target:g}) at max replicas ({t.hpa.max_replicas})",
        query=f"(avg({waiting}) > {t.hpa.target:g}) and on() (max({current}) >= {t.hpa.max_replicas})",
        minutes=t.monitoring.queue_minutes,
        severity="WARNING",
        why="The autoscaler has no replica left to add and requests keep queueing: raise replicas.max (and TPU "
        "quota), or shorten requests.",
    )


def _hbm(t: Target) -> Alert:
    sel = t.scope.system(**{"container_name~": "|".join(t.tpu_containers)})
    used = q.system("kubernetes.io/container/accelerator/memory_used", sel)
    total = q.system("kubernetes.io/container/accelerator/memory_total", sel)
    serving = t.serving
    return Alert(
        id="tpu-hbm-near-full",
        title=f"TPU HBM above {t.monitoring.hbm_fraction:.0%} of total",
        query=f"max by (pod_name) ({used} / {total}) > {t.monitoring.hbm_fraction:g}",
        minutes=10,
        severity="WARNING",
        why="A TPU's high-bandwidth memory is nearly full: the next larger batch or sequence may fail to allocate.",
        default_on=not serving,
        noisy_because="serving engines reserve most of HBM for the KV cache at start, so it reads near full "
        "whenever they run"
        if serving
        else "",
    )


IDLE_MINUTES = 30
"""How long TPU nodes may run with no serving pod Ready before `tpu-nodes-idle` fires."""
TPU_NODE_METRIC = "kubernetes.io/node/accelerator/tensorcore_utilization"
"""A series per TPU chip of every node of the cluster, held by a pod or not (catalog/gke_metrics.py: the node
metric includes chips no pod holds): its presence is a TPU node running, billed."""


def _idle_tpu(t: Target) -> Alert | None:
    """TPU nodes up, no serving pod Ready: a slice billed for nothing (a pool that scaled up for a server that never
    became ready, a replica stuck in a crash loop, a node left after its pods went). Serving stacks only
    (`Target.serving`): a training slice is busy without a Ready pod. Ready means what the serving pod's readiness
    probe says: on a multi-host slice the TPU workers' node check (the raylet, vllm/rayservice.py), so 30 minutes;
    elsewhere the server's own health, which a cold start reaches only after its startup budget, so not before that
    has passed."""
    if not t.serving:
        return None
    nodes = q.system(TPU_NODE_METRIC, t.scope.nodes())
    containers = "|".join(t.tpu_containers)
    ready = q.kube_state("kube_pod_container_status_ready", t.scope.prometheus(**{"container~": containers}))
    minutes = IDLE_MINUTES if t.serve is not None else max(IDLE_MINUTES, t.startup_minutes)
    query = f"(count({nodes}) > 0) unless on() (sum({ready}) > 0)"
    if t.serve is not None:
        # A multi-host slice's workers are Ready with their raylet, whatever Serve does: the slice also idles when
        # Serve has given the deployment up (DEPLOY_FAILED, which nothing retries; ledger:
        # ray.serve.metric.deployment-status-failed).
        status = q.engine(t.engine, "ray_serve_deployment_status", t.scope.prometheus(application=t.serve.application))
        failed = number("ray.serve.metric.deployment-status-failed")
        query = f"({query}) or ((count({nodes}) > 0) and on() (max({status}) == {failed}))"
    return Alert(
        id="tpu-nodes-idle",
        title=f"{t.title}: TPU nodes running with no serving pod ready",
        # `unless`: no ready series at all (no pod yet, or none ready) leaves the node count standing
        query=query,
        minutes=minutes,
        severity="WARNING",
        why=f"The cluster's TPU nodes have run for {minutes} minutes while no {containers} container in "
        f"{t.namespace} was ready"
        + (" or Serve had given the deployment up (DEPLOY_FAILED: `kubectl get rayservice`)" if t.serve else "")
        + ": they are billed and serve nothing. Check the server pods (pending, image pull, crash loop) and "
        "`kubectl get nodes -l cloud.google.com/gke-tpu-accelerator`; scale the workload or its pool down if nothing "
        "should run.",
    )


def _restarts(t: Target) -> Alert:
    return Alert(
        id="pods-restarting",
        title=f"Pods in {t.namespace} restarting",
        query=f"sum by (pod_name) (increase({q.restarts(t.scope)}[1h])) >= 3",
        minutes=5,
        severity="WARNING",
        why="A container restarted three times within an hour: read its previous log (kubectl logs --previous).",
    )


def _jobset(t: Target) -> list[Alert]:
    if t.jobset is None:
        return []
    restarts = q.kube_state("kube_jobset_restarts", t.scope.prometheus(jobset_name=t.jobset))
    return [
        Alert(
            id="jobset-restarting",
            title=f"JobSet {t.jobset} restarting repeatedly",
            query=f"increase({restarts}[1h]) >= 2",
            minutes=1,
            severity="ERROR",
            why="The model-server JobSet recreated its slices twice within an hour (a host or slice failure "
            "restarts every slice). Check node health and the model servers' logs.",
        )
    ]


def all_alerts(t: Target) -> list[Alert]:
    found = [
        _not_ready(t),
        _queue_at_max(t),
        *rayserve.alerts(t),
        _hbm(t),
        _idle_tpu(t),
        _restarts(t),
        *capabilities.alerts(t),  # the workload's own (a training run's state)
        *_jobset(t),
    ]
    return [a for a in found if a is not None]


def plan_alerts(t: Target, section: str) -> list[Alert]:
    """The stack's alerts with the user's on/off overrides; an id this stack has not is refused."""
    alerts = all_alerts(t)
    ids = [a.id for a in alerts]
    for key in t.monitoring.alerts:
        if key not in ids:
            close = difflib.get_close_matches(key, ids, n=1)
            fix = f"did you mean '{close[0]}'?" if close else f"this stack's alerts: {', '.join(ids)}"
            raise UserError(f"{section}.monitoring.alerts.{key}", key, "is not an alert of this stack", fix)
    out = []
    for alert in alerts:
        on = t.monitoring.alerts.get(alert.id, alert.default_on)
        out.append(Alert(**{**alert.__dict__, "enabled": on}))
    return out
