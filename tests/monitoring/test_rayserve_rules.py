"""gcp/monitoring/rayserve.py's numbers against docs/monitoring.md, on one planned multi-host target (planned once):
`serve-errors` fires above 5% of the Serve app's answers being 5xx for 10 minutes; the latency charts draw p50, p90
and p99; the Serve-replica card is red below `replicas.min`; a target with no Serve application has none of these
alerts and no Ray Serve section.

The PromQL: Ray Serve's proxy counters `ray_serve_num_http_requests_total` and `ray_serve_num_http_error_requests_total`
(ledger: ray.serve.metric.num-http-requests, ray.serve.metric.num-http-error-requests), `rate(...[5m])`, and
`or on() vector(0)` for an app with no error series yet (https://prometheus.io/docs/prometheus/latest/querying/operators/)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.monitoring.test_multihost import monitored
from tpu_stacks.gcp.monitoring import rayserve

SEL = 'application="llm",cluster="tpu-cluster",namespace="vllm"'


@pytest.fixture(scope="module")
def planned():
    return monitored(target_ongoing_requests=32, replicas={"min": 2, "max": 3}, startupMinutes=50)


def _widgets(planned) -> dict:
    return {w.title: w for w in planned.dashboard.widgets}


def test_serve_errors_above_five_percent_for_ten_minutes(planned) -> None:
    errors = next(a for a in planned.alerts if a.id == "serve-errors")
    requests = f"sum (rate(ray_serve_num_http_requests_total{{{SEL}}}[5m]))"
    five_xx = (
        'sum (rate(ray_serve_num_http_error_requests_total{application="llm",cluster="tpu-cluster",'
        'error_code=~"5..",namespace="vllm"}[5m]))'
    )
    assert errors.query == f"({five_xx} or on() vector(0)) / {requests} > 0.05"
    assert (errors.minutes, errors.severity) == (10, "ERROR")
    assert errors.title.endswith(": more than 5% of answers are 5xx")
    ratio = _widgets(planned)["Error ratio (5xx over all answers)"]
    assert [t.value for t in ratio.xy_chart.thresholds] == [0.05]


def test_latency_is_drawn_at_p50_p90_p99(planned) -> None:
    widgets = _widgets(planned)
    for title in ("Request latency, end to end (Serve proxy)", "Time to first token", "Time per output token"):
        data = widgets[title].xy_chart.data_sets
        assert [d.legend_template for d in data] == ["p50", "p90", "p99"]
        assert [d.time_series_query.prometheus_query.split(",")[0] for d in data] == [
            "histogram_quantile(0.5",
            "histogram_quantile(0.9",
            "histogram_quantile(0.99",
        ]


def test_the_not_ready_alert_waits_the_startup_budget_and_five_minutes(planned) -> None:
    """docs/monitoring.md: healthy Serve replicas below `replicas.min` for the startup budget + 5 min."""
    alert = next(a for a in planned.alerts if a.id == "serving-pods-not-ready")
    assert alert.minutes == 55 and alert.query.startswith("(2 - sum(")


def test_the_healthy_card_is_red_below_the_minimum(planned) -> None:
    card = _widgets(planned)["Serve replicas healthy"]
    assert [(t.value, t.color, t.direction) for t in card.scorecard.thresholds] == [(1, "RED", "BELOW")]


def test_without_a_serve_application_nothing_of_ray_serves(planned) -> None:
    plain = dataclasses.replace(planned.target, serve=None)
    assert rayserve.alerts(plain) == []
    with pytest.raises(ValueError, match="names no Serve application"):
        rayserve.sections(plain)
