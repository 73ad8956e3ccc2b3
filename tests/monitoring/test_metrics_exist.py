"""Metrics that exist: every metric a shipped stack's charts, alerts and HPAs read has a publisher in the
catalogue (a GKE package or an engine version, with its source URL); a made-up name has none.

The names are read off the plan here (selectors `name{`, `metric.type="..."`, the HPA's metric names), not
taken from the code that wrote the queries.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.published import Publisher, publisher
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.monitoring import check_monitoring, engines_in

from .conftest import STACKS
from .test_stacks import ALERT, DASHBOARD, of_type

SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{")
METRIC_TYPE = re.compile(r'metric\.type\s*=\s*"([^"]+)"')
LOG_METRIC = "gcp:logging/metric:Metric"


def _strings(node, key=""):
    """(key, value) of every string in a JSON document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item, key)
    elif isinstance(node, str):
        yield key, node


def read_metrics(capture: Capture) -> list[tuple[str, str]]:
    """(where, metric name) of every dashboard query, alert condition and HPA metric in the plan."""
    found = []
    for board in of_type(capture, DASHBOARD):
        for key, text in _strings(json.loads(board.inputs["dashboardJson"])):
            if key == "prometheusQuery":
                found += [("dashboard", name) for name in SELECTOR.findall(text)]
            elif key == "filter":
                found += [("dashboard", name) for name in METRIC_TYPE.findall(text)]
    for alert in of_type(capture, ALERT):
        for condition in alert.inputs["conditions"]:
            found += [("alert", n) for n in SELECTOR.findall(condition["conditionPrometheusQueryLanguage"]["query"])]
    for hpa in (r for r in capture.sorted_resources() if r.type.endswith(":HorizontalPodAutoscaler")):
        for entry in hpa.inputs["spec"]["metrics"]:
            body = entry.get("pods") or entry.get("external") or entry.get("object")
            if body:
                found.append(("hpa", body["metric"]["name"]))
    return found


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "cluster"])
def test_every_metric_a_stack_reads_has_a_publisher(planned, stack):
    capture = planned[stack]
    engines = engines_in(capture)
    logs = {f"logging.googleapis.com/user/{r.inputs['name']}" for r in of_type(capture, LOG_METRIC)}
    read = read_metrics(capture)
    assert read and {where for where, _ in read} >= {"dashboard", "alert"}
    missing = [(where, name) for where, name in read if name not in logs and publisher(name, engines) is None]
    assert not missing, f"{stack}: no catalogue entry for {missing}"
    for _, name in read:
        found = publisher(name, engines)
        if found is not None:
            assert found.by and found.source.startswith("https://"), found


def test_vllm_stacks_scale_on_a_catalogued_metric(planned):
    (hpa,) = [name for where, name in read_metrics(planned["vllm"]) if where == "hpa"]
    assert publisher(hpa, [VLLM]) == Publisher(hpa, f"vllm {VLLM.version}", VLLM.metrics_source)


@pytest.mark.parametrize(
    "name",
    [
        "kube_pod_container_status_restarts_total",  # not in GKE's managed Pod package
        "vllm:avg_generation_throughput_toks_per_s",  # vLLM V0's, gone from the pinned V1
        "vllm:num_requests_waitin",
        "kubernetes_io:container_restarts",
        "kubernetes.io/container/restarts",
        "prometheus.googleapis.com|vllm:num_requests_waiting|counter",  # a gauge, not a counter
        "prometheus.googleapis.com|made_up_metric|gauge",
        "jetstream_prefill_backlog_size_bucket",  # a gauge has no buckets
    ],
)
def test_a_made_up_or_unpublished_name_has_no_publisher(name):
    assert publisher(name) is None


def test_publishers_name_the_package_or_engine_and_a_source():
    assert publisher("kubernetes_io:container_restart_count").by.startswith("GKE system metrics")
    assert publisher("kubernetes.io/container/restart_count") is not None
    assert "package POD" in publisher("kube_pod_status_phase").by
    assert "package JOBSET (GKE 1.32.4-gke.1767000)" in publisher("kube_jobset_restarts").by
    assert publisher("vllm:time_to_first_token_seconds_bucket").by == f"vllm {VLLM.version}"
    assert publisher("jetstream_prefill_backlog_size", [JETSTREAM[0]]).source.startswith("https://github.com/")
    assert publisher("vllm:num_requests_waiting", [JETSTREAM[0]]) is None  # not the plan's engine


def test_the_plans_check_refuses_an_hpa_on_a_made_up_metric(planned):
    capture = planned["vllm"]
    assert check_monitoring(capture) == []
    (hpa,) = [r for r in capture.resources if r.type.endswith(":HorizontalPodAutoscaler")]
    spec = json.loads(json.dumps(hpa.inputs["spec"]))
    spec["metrics"][0]["pods"]["metric"]["name"] = "prometheus.googleapis.com|vllm:queue_depth|gauge"
    changed = dataclasses.replace(hpa, inputs={**hpa.inputs, "spec": spec})
    broken = dataclasses.replace(capture, resources=[changed if r is hpa else r for r in capture.resources])
    (problem,) = check_monitoring(broken)
    assert "vllm:queue_depth" in problem.message and problem.path == "spec.metrics[0].metric.name"
