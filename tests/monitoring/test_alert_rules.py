"""gcp/monitoring/alerts.py on pure targets (no stack planned): each alert's condition, duration, severity and default,
per kind of target, and the user's overrides. Its one test file before (test_idle_tpu.py) checked the idle alert
through every planned stack; a run of the mutation runner over it took over a minute a mutant.

The metrics are kube-state-metrics' (`kube_deployment_spec_replicas`, `..._status_replicas_available`, the JobSet
and HPA families) and GKE's system metrics (catalog/gke_metrics.py); the PromQL is Cloud Monitoring's
(`conditionPrometheusQueryLanguage`)."""

from __future__ import annotations

import dataclasses

import pytest

from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring.alerts import IDLE_MINUTES, all_alerts, plan_alerts
from tpu_stacks.gcp.monitoring.targets import Serve, Target
from tpu_stacks.saxml.monitoring import saxml_target
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import SaxmlSpec
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

VLLM_SEL = 'cluster="tpu-cluster",deployment="vllm-tpu",namespace="vllm"'


def vllm(**fields) -> Target:
    spec = VllmSpec.model_validate({"model": "meta-llama/Llama-3.1-8B", "exposure": "cluster", **fields})
    plan = plan_vllm(spec, ClusterSpec(project="p", location="us-central1-b"), True, False)
    return vllm_target(plan, "vllm-hpa", "vllm-tpu", "vllm-tpu")


def saxml() -> Target:
    spec = SaxmlSpec(source_ranges=["10.0.0.0/8"], model="meta-llama/Meta-Llama-3-8B", models=[])
    return saxml_target(plan_saxml(spec, ClusterSpec(project="p", location="us-central1-a")), "sax-model-server-set", "sax-model-server")  # fmt: skip


def by_id(target: Target) -> dict:
    return {alert.id: alert for alert in all_alerts(target)}


def test_a_deployments_alerts():
    target = vllm()
    assert target.startup_minutes == 40
    alerts = by_id(target)
    assert list(alerts) == [
        "serving-pods-not-ready",
        "queue-above-target-at-max",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    ]
    ready = alerts["serving-pods-not-ready"]
    assert ready.query == (
        f"(kube_deployment_spec_replicas{{{VLLM_SEL}}} - kube_deployment_status_replicas_available{{{VLLM_SEL}}}) > 0"
    )
    assert (ready.minutes, ready.severity, ready.title) == (45, "ERROR", "vllm-tpu: serving pods not ready")
    queue = alerts["queue-above-target-at-max"]
    assert queue.query == (
        '(avg(vllm:num_requests_waiting{cluster="tpu-cluster",namespace="vllm"}) > 10) and on() '
        '(max(kube_horizontalpodautoscaler_status_current_replicas{cluster="tpu-cluster",'
        'horizontalpodautoscaler="vllm-hpa",namespace="vllm"}) >= 2)'
    )
    assert (queue.minutes, queue.severity) == (10, "WARNING")
    hbm = alerts["tpu-hbm-near-full"]
    assert hbm.query.endswith(") > 0.95") and hbm.query.startswith("max by (pod_name) (")
    assert (hbm.minutes, hbm.default_on, hbm.title) == (10, False, "TPU HBM above 95% of total")
    assert "KV cache" in hbm.noisy_because
    idle = alerts["tpu-nodes-idle"]
    assert idle.minutes == 40 and idle.severity == "WARNING" and " unless on() " in idle.query
    restarts = alerts["pods-restarting"]
    assert restarts.query.endswith("[1h])) >= 3") and (restarts.minutes, restarts.severity) == (5, "WARNING")


def test_a_jobsets_alerts():
    target = saxml()
    alerts = by_id(target)
    assert list(alerts) == [
        "serving-pods-not-ready",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
        "jobset-restarting",
    ]
    sel = 'cluster="tpu-cluster",jobset_name="sax-model-server-set",namespace="saxml"'
    ready = alerts["serving-pods-not-ready"]
    assert ready.query == f"(kube_jobset_specified_replicas{{{sel}}} - kube_jobset_ready_replicas{{{sel}}}) > 0"
    assert (ready.minutes, ready.severity) == (target.startup_minutes + 5, "ERROR")
    assert ready.title == "sax-model-server-set: model-server slices not ready"
    assert f"Fewer of the {target.slices} model-server slices" in ready.why
    restarts = alerts["jobset-restarting"]
    assert restarts.query == f"increase(kube_jobset_restarts{{{sel}}}[1h]) >= 2"
    assert (restarts.minutes, restarts.severity) == (1, "ERROR")
    assert alerts["tpu-nodes-idle"].minutes == target.startup_minutes == 60


def test_the_idle_alert_waits_at_least_thirty_minutes_and_not_for_training():
    quick = dataclasses.replace(vllm(), startup_minutes=20)
    assert by_id(quick)["tpu-nodes-idle"].minutes == IDLE_MINUTES == 30
    training = dataclasses.replace(vllm(), serving=False)
    alerts = by_id(training)
    assert "tpu-nodes-idle" not in alerts
    assert alerts["tpu-hbm-near-full"].default_on is True and alerts["tpu-hbm-near-full"].noisy_because == ""


def test_no_deployment_and_no_jobset_means_no_readiness_alert():
    assert "serving-pods-not-ready" not in by_id(dataclasses.replace(vllm(), deployment=None))


def test_the_queue_alert_follows_only_the_queue_metric():
    target = vllm(autoscaling={"metric": "kv_cache_usage_perc"})
    assert "queue-above-target-at-max" not in by_id(target)
    assert "queue-above-target-at-max" not in by_id(dataclasses.replace(vllm(), hpa=None))


def test_overrides_turn_alerts_on_and_off_and_an_unknown_id_is_refused():
    target = vllm()
    monitoring = target.monitoring.model_copy(update={"alerts": {"tpu-hbm-near-full": True, "pods-restarting": False}})
    planned = {a.id: a.enabled for a in plan_alerts(dataclasses.replace(target, monitoring=monitoring), "vllm")}
    assert planned["tpu-hbm-near-full"] is True and planned["pods-restarting"] is False
    assert planned["tpu-nodes-idle"] is True  # its default
    assert {a.id: a.enabled for a in plan_alerts(target, "vllm")}["tpu-hbm-near-full"] is False
    typo = target.monitoring.model_copy(update={"alerts": {"tpu-hbm-near-ful": True}})
    with pytest.raises(
        UserError, match=r"^vllm\.monitoring\.alerts\.tpu-hbm-near-ful: .* did you mean 'tpu-hbm-near-full'\?"
    ):
        plan_alerts(dataclasses.replace(target, monitoring=typo), "vllm")
    far = target.monitoring.model_copy(update={"alerts": {"zzz": True}})
    with pytest.raises(UserError, match=r"this stack's alerts: serving-pods-not-ready, queue-above-target-at-max, "):
        plan_alerts(dataclasses.replace(target, monitoring=far), "vllm")


def test_a_multi_host_slice_is_idle_also_when_serve_gave_its_deployment_up():
    """Ray Serve's DEPLOY_FAILED is terminal (ledger: ray.serve.metric.deployment-status-failed): the workers stay
    Ready on their raylet, so the alert also reads Serve's status, and its text says where to look."""
    serve = Serve(application="llm", min_replicas=1, max_replicas=1)
    served = dataclasses.replace(vllm(), serve=serve, engine=RAY_SERVE, hpa=None)  # as vllm/monitoring_multihost.py
    idle = by_id(served)["tpu-nodes-idle"]
    assert idle.minutes == IDLE_MINUTES and 'application="llm"' in idle.query
    assert "DEPLOY_FAILED: `kubectl get rayservice`" in idle.why
    assert "DEPLOY_FAILED" not in by_id(vllm())["tpu-nodes-idle"].why
