"""The monitoring layer's small parts on pure targets (no stack planned): a target's derived fields
(gcp/monitoring/targets.py), the capabilities a workload's descriptor names (capabilities.py), the three widget
shapes (widgets.py) and an alert's duration (alert.py).

Sources: Cloud Monitoring's dashboard API (an XyChart's `dataSets[].legendTemplate` optional, `yAxis.label`; a
Scorecard's `timeSeriesQuery`; a Text widget's `content`:
https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards#Widget) and alert policy API (a
condition's `duration` a Duration, seconds with an `s` suffix:
https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies#PrometheusQueryLanguageCondition);
Cloud Logging's log-based metrics, project resources (https://cloud.google.com/logging/docs/logs-based-metrics), so
the stack's cluster and namespace prefix a step metric's name."""

from __future__ import annotations

import dataclasses

import pytest

from tests.monitoring.test_alert_rules import saxml, vllm
from tpu_stacks.catalog.engines import VLLM
from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.gcp.monitoring import capabilities
from tpu_stacks.gcp.monitoring.alert import Alert
from tpu_stacks.gcp.monitoring.model import Threshold
from tpu_stacks.gcp.monitoring.targets import Serve, StepLog, Target
from tpu_stacks.gcp.monitoring.widgets import chart, note, scorecard


@pytest.fixture(scope="module")
def target() -> Target:
    return vllm()


@pytest.mark.parametrize(("low", "high", "autoscales"), [(1, 2, True), (2, 2, False), (1, 1, False)])
def test_serve_autoscales_only_with_room_above_its_minimum(low: int, high: int, autoscales: bool) -> None:
    assert Serve(application="llm", min_replicas=low, max_replicas=high).autoscales is autoscales


def test_a_targets_cluster_and_namespace_are_its_scopes(target: Target) -> None:
    """The alert rules' selector (tests/monitoring/test_alert_rules.py): cluster tpu-cluster, namespace vllm."""
    assert (target.cluster, target.namespace) == ("tpu-cluster", "vllm")
    assert (target.project, target.location) == ("p", "us-central1-b")  # stack_fields: the cluster's
    assert target.monitoring.queue_minutes == 10  # and the section's monitoring settings


def test_metrics_need_both_an_engine_that_exports_them_and_a_port(target: Target) -> None:
    assert VLLM.metrics and target.metrics_port == 8000  # `vllm serve --port 8000`: the API and /metrics
    assert target.exports_metrics is True
    assert dataclasses.replace(target, metrics_port=None).exports_metrics is False
    silent = VLLM.model_copy(update={"metrics": ()})
    assert dataclasses.replace(target, engine=silent).exports_metrics is False


def test_a_step_log_metric_is_named_per_stack(target: Target) -> None:
    assert target.step_log_metric is None  # a server logs no steps
    step = StepLog(metric="step_seconds", contains="step", line=r"(\d+)", description="d")
    trained = dataclasses.replace(target, step_log=step)
    assert trained.step_log_metric == "tpu-stacks/tpu-cluster/vllm/step_seconds"
    from tpu_stacks.gcp.monitoring.plan import plan_monitoring

    assert plan_monitoring(trained, "vllm").step_log_metric == "tpu-stacks/tpu-cluster/vllm/step_seconds"


def test_an_unregistered_kind_is_refused_with_the_registered_ones(target: Target) -> None:
    with pytest.raises(ValueError) as caught:
        capabilities.descriptor(dataclasses.replace(target, kind="nope"))
    assert str(caught.value) == (
        f"the monitoring target {target.title!r} names workload 'nope', which is not registered: "
        "jetstream, raytrain, saxml, sglang, vllm are (a target's kind is its workload's name)"
    )
    assert capabilities.descriptor(target).name == "vllm"


def test_a_capability_the_descriptor_leaves_out_contributes_nothing(target: Target) -> None:
    """vLLM's descriptor names status cards and no alerts of its own; Saxml's neither; Ray Train's both
    (registry.py descriptors)."""
    assert capabilities.status_cards(target) and capabilities.alerts(target) == []
    sax = saxml()
    assert capabilities.status_cards(sax) == [] and capabilities.alerts(sax) == []
    assert capabilities.sections(sax) and isinstance(capabilities.sections(sax), list)
    trained = dataclasses.replace(target, kind="raytrain", engine=RAY, ray_cluster="rc")
    assert [alert.id for alert in capabilities.alerts(trained)] == ["training-failed", "slice-restarted"]


def test_a_chart_sends_a_legend_only_when_given_and_labels_its_axis() -> None:
    widget = chart("Queue", ("a{}", "${pod}"), ("b{}", ""), unit="requests")
    data = widget.xy_chart.data_sets
    assert [(d.time_series_query.prometheus_query, d.legend_template) for d in data] == [
        ("a{}", "${pod}"),
        ("b{}", None),
    ]
    assert widget.xy_chart.y_axis.label == "requests"
    assert chart("Queue", ("a{}", "")).xy_chart.y_axis.label == "Queue"  # no unit: the title


def test_a_scorecard_and_a_note() -> None:
    line = (Threshold(value=1, label="one"),)
    card = scorecard("Ready", "sum(x{})", line)
    assert (card.title, card.scorecard.time_series_query.prometheus_query, card.scorecard.thresholds) == (
        "Ready",
        "sum(x{})",
        line,
    )
    text = note("Why", "because")
    assert (text.title, text.text.content) == ("Why", "because")


@pytest.mark.parametrize(("minutes", "duration"), [(1, "60s"), (45, "2700s")])
def test_an_alerts_duration_is_seconds(minutes: int, duration: str) -> None:
    alert = Alert(id="a", title="t", query="q", minutes=minutes, severity="ERROR", why="w")
    assert alert.duration == duration
