"""Dashboards, alert policies and log-based metrics wait for the API they call: a fresh project has Cloud
Monitoring and Cloud Logging off, and the first `up` would fail at the first of them. Read off the plan's
recorded dependencies (the planner records each resource's dependsOn)."""

from __future__ import annotations

from collections import Counter

import pytest

from .conftest import STACKS
from .test_stacks import ALERT, DASHBOARD, of_type

SERVICE = "gcp:projects/service:Service"
LOG_METRIC = "gcp:logging/metric:Metric"


def services(capture) -> dict[str, str]:
    """urn -> service name of every API the plan enables."""
    return {r.urn: r.inputs["service"] for r in of_type(capture, SERVICE)}


def waits_for(capture, record, service: str) -> bool:
    enabled = services(capture)
    return any(enabled.get(urn) == service for urn in record.dependencies)


@pytest.mark.parametrize("stack", [s for s in STACKS if s not in ("cluster", "saxml-s3ns")])
def test_dashboards_and_alerts_wait_for_the_monitoring_api(planned, stack):
    capture = planned[stack]
    watched = [*of_type(capture, DASHBOARD), *of_type(capture, ALERT)]
    assert watched
    late = [r.name for r in watched if not waits_for(capture, r, "monitoring.googleapis.com")]
    assert not late, f"{stack}: {late} do not depend on monitoring.googleapis.com"


@pytest.mark.parametrize("stack", STACKS)
def test_each_api_is_enabled_once_per_stack(planned, stack):
    """The cluster's Monitoring API is reused, not declared a second time by the workload."""
    counts = Counter(services(planned[stack]).values())
    assert all(n == 1 for n in counts.values()), counts


@pytest.mark.parametrize("stack", ["raytrain", "raytrain-multislice"])
def test_log_based_metrics_wait_for_the_logging_api(planned, stack):
    capture = planned[stack]
    (metric,) = of_type(capture, LOG_METRIC)
    assert "logging.googleapis.com" in services(capture).values()
    assert waits_for(capture, metric, "logging.googleapis.com")
    (board,) = of_type(capture, DASHBOARD)
    assert metric.urn in board.dependencies  # the step-time chart reads it


@pytest.mark.parametrize("stack", [s for s in STACKS if not s.startswith("raytrain")])
def test_logging_is_enabled_only_where_a_log_metric_is_declared(planned, stack):
    assert "logging.googleapis.com" not in services(planned[stack]).values()


def test_another_universe_enables_nothing_it_cannot_name(planned):
    """S3NS service names are not verified here (gcp/apis.py): its dashboards wait on no Service."""
    assert of_type(planned["saxml-s3ns"], SERVICE) == []
    assert of_type(planned["saxml-s3ns"], DASHBOARD)
