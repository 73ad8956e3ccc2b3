"""The offline plan's monitoring check: the dashboard JSON against the Monitoring API's Dashboard schema,
tiles inside the grid, and every queried metric in the catalogue of the versions the plan pins."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks_preview.capture import Capture, ResourceOptionsRecord, ResourceRecord
from tpu_stacks_preview.monitoring import (
    check_dashboard,
    check_monitoring,
    dashboard_validator,
    engines_in,
    known_prometheus_metrics,
)

GOOD = {
    "displayName": "d",
    "labels": {"tpu-stacks": ""},
    "mosaicLayout": {
        "columns": 48,
        "tiles": [
            {"xPos": 0, "yPos": 0, "width": 48, "height": 4, "widget": {"title": "h", "sectionHeader": {}}},
            {
                "xPos": 0,
                "yPos": 4,
                "width": 24,
                "height": 16,
                "widget": {
                    "title": "queue",
                    "xyChart": {
                        "dataSets": [
                            {"timeSeriesQuery": {"prometheusQuery": 'avg(vllm:num_requests_waiting{namespace="v"})'}}
                        ],
                        "thresholds": [{"value": 10, "label": "HPA target", "color": "YELLOW", "direction": "ABOVE"}],
                    },
                },
            },
        ],
    },
}
KNOWN = known_prometheus_metrics([VLLM])


def record(type_: str, inputs: dict, name: str = "r") -> ResourceRecord:
    return ResourceRecord(
        urn=f"urn:pulumi:s::p::{type_}::{name}",
        type=type_,
        name=name,
        parent=None,
        custom=True,
        remote=False,
        provider=None,
        version="",
        dependencies=[],
        property_dependencies={},
        inputs=inputs,
        secret_inputs=[],
        unknown_inputs=False,
        options=ResourceOptionsRecord(),
    )


def problems(document: dict, known=KNOWN, log_metrics=frozenset()) -> list[str]:
    board = record("gcp:monitoring/dashboard:Dashboard", {"dashboardJson": json.dumps(document)})
    return [f"{p.path}: {p.message}" for p in check_dashboard(board, set(known), set(log_metrics), "vllm")]


def broken(edit) -> dict:
    document = copy.deepcopy(GOOD)
    edit(document)
    return document


def chart(document):
    return document["mosaicLayout"]["tiles"][1]["widget"]["xyChart"]


def test_the_schema_is_a_valid_json_schema_and_a_good_dashboard_passes():
    jsonschema.Draft202012Validator.check_schema(dashboard_validator().schema)  # the plan trusts the file for this
    assert dashboard_validator().schema["$defs"]["Widget"]["additionalProperties"] is False
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.pop("displayName"), "'displayName' is a required property"),
        (lambda d: d.update(gridLayout={}), "is valid under each of"),  # two layouts: the API's oneof
        (lambda d: chart(d).update(colour="RED"), "Additional properties are not allowed ('colour'"),
        (lambda d: chart(d)["thresholds"][0].update(color="PINK"), "'PINK' is not one of"),
        (lambda d: chart(d)["dataSets"][0].update(plotType="PIE"), "'PIE' is not one of"),
        (lambda d: d["mosaicLayout"].update(columns=64), "64 is greater than the maximum of 48"),
        (lambda d: d["mosaicLayout"]["tiles"][1]["widget"].update(text={"content": "x"}), "is valid under each of"),
        (lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(prometheusQuery=""), "should be non-empty"),
        (lambda d: d.update(labels={"Bad Key": ""}), "does not match"),
    ],
)
def test_schema_violations_are_reported(edit, expected):
    found = problems(broken(edit))
    assert any(expected in p for p in found), found


def test_tiles_outside_the_grid_or_overlapping_are_reported():
    outside = broken(lambda d: d["mosaicLayout"]["tiles"][1].update(xPos=30))
    assert any("exceeds the 48 columns" in p for p in problems(outside))
    overlap = broken(lambda d: d["mosaicLayout"]["tiles"][1].update(yPos=2))
    assert any("overlaps tile 0" in p for p in problems(overlap))


def test_a_metric_the_pinned_engine_does_not_export_is_reported():
    gone = broken(
        lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(
            prometheusQuery='sum(vllm:avg_generation_throughput_toks_per_s{namespace="v"})'
        )
    )
    (problem,) = problems(gone)
    assert "vllm:avg_generation_throughput_toks_per_s is not exported" in problem
    later = broken(
        lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(
            prometheusQuery='jetstream_time_to_first_token{a="b"}'
        )
    )
    assert problems(later, known_prometheus_metrics([JETSTREAM[0]]))  # only in JetStream after the v0.2.3 pin
    assert problems(broken(lambda d: None), known_prometheus_metrics([JETSTREAM[0]]))  # vLLM's, not this plan's


def test_histogram_series_and_gke_metrics_are_known():
    ok = broken(
        lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(
            prometheusQuery='histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{a="b"}[5m])))'
            ' + kubernetes_io:container_accelerator_duty_cycle{a="b"} + kube_jobset_restarts{a="b"}'
        )
    )
    assert problems(ok) == []
    counter_as_histogram = broken(
        lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(
            prometheusQuery='vllm:prompt_tokens_total_bucket{a="b"}'
        )
    )
    assert problems(counter_as_histogram)


def test_a_query_without_a_selector_and_unknown_filter_types_are_reported():
    bare = broken(lambda d: chart(d)["dataSets"][0]["timeSeriesQuery"].update(prometheusQuery="vector(1)"))
    assert any("names no metric selector" in p for p in problems(bare))
    logs = "logging.googleapis.com/user/step"
    flt = broken(
        lambda d: chart(d)["dataSets"][0].update(
            timeSeriesQuery={"timeSeriesFilter": {"filter": f'metric.type="{logs}"'}}
        )
    )
    assert any("neither a GKE system metric" in p for p in problems(flt))
    assert problems(flt, log_metrics={logs}) == []


def test_alert_policy_queries_are_checked_and_engines_come_from_the_plans_images():
    deployment = record(
        "kubernetes:apps/v1:Deployment",
        {"spec": {"template": {"spec": {"containers": [{"image": "docker.io/vllm/vllm-tpu:" + VLLM.version}]}}}},
        "dep",
    )
    alert = record(
        "gcp:monitoring/alertPolicy:AlertPolicy",
        {"conditions": [{"conditionPrometheusQueryLanguage": {"query": 'vllm:num_requests_waiting{a="b"} > 1'}}]},
        "ok",
    )
    bad = record(
        "gcp:monitoring/alertPolicy:AlertPolicy",
        {"conditions": [{"conditionPrometheusQueryLanguage": {"query": 'vllm:gpu_cache_usage_perc{a="b"} > 0.9'}}]},
        "bad",
    )
    capture = Capture(config=None, preview=False, resources=[deployment, alert, bad])  # type: ignore[arg-type]
    assert engines_in(capture) == [VLLM]
    (problem,) = check_monitoring(capture)
    assert problem.object_id.endswith(" bad") and "vllm:gpu_cache_usage_perc is not exported" in problem.message
    assert "renamed vllm:kv_cache_usage_perc in vllm 0.9" in problem.message  # the catalogue's rename


def test_a_legend_naming_a_label_the_query_drops_is_reported():
    def legend(template, query):
        def edit(d):
            chart(d)["dataSets"][0].update(legendTemplate=template)
            chart(d)["dataSets"][0]["timeSeriesQuery"].update(prometheusQuery=query)

        return problems(broken(edit))

    assert legend("${pod}", 'sum by (pod) (vllm:num_requests_waiting{a="b"})') == []
    (problem,) = legend("${node}", 'sum by (pod) (vllm:num_requests_waiting{a="b"})')
    assert problem.endswith("${node} is not a label the query keeps")
    assert legend("${pod}", 'avg(vllm:num_requests_waiting{a="b"})')  # aggregated away
