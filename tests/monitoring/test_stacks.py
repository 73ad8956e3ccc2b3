"""Every serving and training stack plans with its dashboard and alerts; each widget's metric is one the
stack's pinned engine (or GKE) exports; the queue chart draws the HPA's own target."""

from __future__ import annotations

import json
import re

import pytest

from tpu_stacks.catalog.engines.ray import RAY, RAY_SERVE
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.gke_metrics import KUBE_STATE_METRICS, SYSTEM_METRICS
from tpu_stacks.jetstream.engine import JETSTREAM

from .conftest import STACKS

DASHBOARD, ALERT = "gcp:monitoring/dashboard:Dashboard", "gcp:monitoring/alertPolicy:AlertPolicy"
# Written from the list, per workload: which alerts each stack must carry, and which start off.
EXPECTED_ALERTS = {
    "dev": {
        "serving-pods-not-ready",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    },  # fixed replicas: no HPA alert
    "vllm": {
        "serving-pods-not-ready",
        "queue-above-target-at-max",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    },
    "vllm-fallback": {
        "serving-pods-not-ready",
        "queue-above-target-at-max",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    },
    "vllm-gateway": {
        "serving-pods-not-ready",
        "queue-above-target-at-max",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    },
    # one slice, so no queue alert at max replicas; Serve's own 5xx ratio instead (gcp/monitoring/rayserve.py)
    "vllm-405b": {"serving-pods-not-ready", "serve-errors", "tpu-hbm-near-full", "tpu-nodes-idle", "pods-restarting"},
    "jetstream-gemma": {"serving-pods-not-ready", "tpu-hbm-near-full", "tpu-nodes-idle", "pods-restarting"},
    "jetstream-llama3": {"serving-pods-not-ready", "tpu-hbm-near-full", "tpu-nodes-idle", "pods-restarting"},
    "saxml": {"serving-pods-not-ready", "jobset-restarting", "tpu-hbm-near-full", "tpu-nodes-idle", "pods-restarting"},
    "saxml-s3ns": {
        "serving-pods-not-ready",
        "jobset-restarting",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
    },
    # no engine metrics (ledger: sglang.metrics.none), a fixed replica count: the alerts every server gets
    "sglang": {"serving-pods-not-ready", "tpu-hbm-near-full", "tpu-nodes-idle", "pods-restarting"},
    "raytrain": {"training-failed", "slice-restarted", "tpu-hbm-near-full", "pods-restarting"},
    "raytrain-multislice": {"training-failed", "slice-restarted", "tpu-hbm-near-full", "pods-restarting"},
    "cluster": set(),  # no workload, nothing to watch
}
PINNED = {  # the engine each workload stack's images pin, found independently of the dashboards' code
    "dev": [VLLM],
    "vllm": [VLLM],
    "vllm-fallback": [VLLM],
    "vllm-gateway": [ROUTER, VLLM],  # the gateway's endpoint picker (llm-d's router) pins its own image
    "vllm-405b": [VLLM, RAY_SERVE],  # vLLM TPU with Ray Serve on top (vllm/ray_serve_image)
    "jetstream-gemma": [JETSTREAM[0]],
    "jetstream-llama3": [JETSTREAM[0]],
    "saxml": [],
    "saxml-s3ns": [],
    "sglang": [],  # its image is built into the stack's registry, and SGLang-JAX exports no metrics
    "raytrain": [RAY],
    "raytrain-multislice": [RAY],
}


def of_type(capture, type_token):
    return [r for r in capture.sorted_resources() if r.type == type_token]


def dashboard_of(capture) -> dict:
    (board,) = of_type(capture, DASHBOARD)
    return json.loads(board.inputs["dashboardJson"])


def widgets(document: dict) -> list[dict]:
    return [tile["widget"] for tile in document["mosaicLayout"]["tiles"]]


def queries(widget: dict) -> list[str]:
    body = widget.get("xyChart") or widget.get("scorecard") or {}
    sets = body.get("dataSets") or ([{"timeSeriesQuery": body["timeSeriesQuery"]}] if "timeSeriesQuery" in body else [])
    return [d["timeSeriesQuery"]["prometheusQuery"] for d in sets if "prometheusQuery" in d["timeSeriesQuery"]]


def exported(name: str, pinned: list[EngineVersion]) -> bool:
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    for engine in pinned:
        metric = engine.metric(name) or engine.metric(base)
        if metric is not None and (metric.name == name or metric.kind == "histogram"):
            return True
    return name in KUBE_STATE_METRICS or name in {m.promql for m in SYSTEM_METRICS}


def test_the_shipped_stacks_are_the_ones_listed_here():
    assert set(STACKS) == set(EXPECTED_ALERTS)


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_has_its_dashboard_and_alerts(planned, stack):
    capture = planned[stack]
    alerts = {r.inputs["userLabels"]["alert"]: r.inputs for r in of_type(capture, ALERT)}
    assert set(alerts) == EXPECTED_ALERTS[stack]
    assert len(of_type(capture, DASHBOARD)) == (1 if EXPECTED_ALERTS[stack] else 0)
    for alert_id, inputs in alerts.items():
        # off by default only where noisy: serving engines reserve HBM for the KV cache
        noisy = alert_id == "tpu-hbm-near-full" and not stack.startswith("raytrain")
        assert inputs["enabled"] is (not noisy), alert_id
        assert inputs["documentation"]["content"]


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "cluster"])
def test_every_widget_metric_is_exported_by_the_pinned_engine_or_gke(planned, stack):
    names = []
    for widget in widgets(dashboard_of(planned[stack])):
        for query in queries(widget):
            found = re.findall(r"([A-Za-z_:][A-Za-z0-9_:]*)\{", query)
            assert found, (widget["title"], query)
            names += found
    missing = [n for n in names if not exported(n, PINNED[stack])]
    assert not missing
    assert "vllm:avg_generation_throughput_toks_per_s" not in names  # the tutorial's query: gone in V1
    # names the pinned vLLM renamed (catalogue `renamed`): the dashboards read only the new ones
    assert not {r.old for r in VLLM.renamed} & set(names)


def test_vllm_dashboard_shows_queue_running_cache_latency_tokens_and_replicas(planned):
    titles = [w["title"] for w in widgets(dashboard_of(planned["vllm"]))]
    text = json.dumps(dashboard_of(planned["vllm"]))
    for metric in (
        "vllm:num_requests_waiting",
        "vllm:num_requests_running",
        "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:generation_tokens_total",
        "kube_horizontalpodautoscaler_status_current_replicas",
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "kubernetes_io:container_accelerator_duty_cycle",
        "kubernetes_io:container_accelerator_tensorcore_utilization",
        "kubernetes_io:container_accelerator_memory_used",
        "kubernetes_io:container_accelerator_memory_total",
        "kubernetes_io:container_restart_count",
        "kube_pod_status_phase",
    ):
        assert metric in text, metric
    # What a user sees first: the "Now" row of scorecards, then the serving charts led by the HPA's metric
    assert titles[:5] == [
        "Now",
        "Replicas ready",
        "Requests waiting (average per pod)",
        "TensorCore utilization (average)",
        "Serving",
    ]
    assert titles[5] == "Requests waiting (the HPA's metric)"


def test_the_queue_threshold_is_the_hpas_own_target(planned):
    capture = planned["vllm"]
    (hpa,) = [r for r in capture.sorted_resources() if r.type.endswith(":HorizontalPodAutoscaler")]
    metric = hpa.inputs["spec"]["metrics"][0]["pods"]
    assert metric["metric"]["name"] == "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    queue = next(w for w in widgets(dashboard_of(capture)) if w["title"] == "Requests waiting (the HPA's metric)")
    (threshold,) = queue["xyChart"]["thresholds"]
    assert threshold["value"] == float(metric["target"]["averageValue"])
    card = next(w for w in widgets(dashboard_of(capture)) if w["title"] == "Requests waiting (average per pod)")
    (card_line,) = card["scorecard"]["thresholds"]
    assert card_line["value"] == float(metric["target"]["averageValue"])
    ready = next(w for w in widgets(dashboard_of(capture)) if w["title"] == "Replicas ready")
    # red at `value <= threshold`: fewer ready than the HPA's minimum
    assert ready["scorecard"]["thresholds"][0].get("value", 0) == hpa.inputs["spec"]["minReplicas"] - 1
    replicas = next(w for w in widgets(dashboard_of(capture)) if w["title"].startswith("Replicas (HPA"))
    assert replicas["xyChart"]["thresholds"][0].get("value", 0) == hpa.inputs["spec"]["maxReplicas"]
    (alert,) = [r for r in of_type(capture, ALERT) if r.inputs["userLabels"]["alert"] == "queue-above-target-at-max"]
    query = alert.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
    assert f"> {metric['target']['averageValue']})" in query and f">= {hpa.inputs['spec']['maxReplicas']})" in query


def test_jetstream_is_scraped_where_its_pinned_server_exports(planned):
    capture = planned["jetstream-gemma"]
    (monitor,) = [r for r in capture.sorted_resources() if r.type.endswith(":PodMonitoring")]
    assert monitor.inputs["spec"]["endpoints"] == [{"port": 9090, "path": "/metrics", "interval": "30s"}]
    (deployment,) = [r for r in capture.sorted_resources() if r.type == "kubernetes:apps/v1:Deployment"]
    server = deployment.inputs["spec"]["template"]["spec"]["containers"][0]
    assert "--prometheus_port=9090" in server["args"]
    assert {"name": "metrics", "containerPort": 9090} in server["ports"]
    assert monitor.inputs["spec"]["selector"]["matchLabels"] == deployment.inputs["spec"]["selector"]["matchLabels"]


def test_saxml_has_no_scrape_and_says_why(planned):
    capture = planned["saxml"]
    assert not [r for r in capture.sorted_resources() if r.type.endswith(":PodMonitoring")]
    text = json.dumps(dashboard_of(capture))
    assert "exports no Prometheus metrics" in text and "kube_jobset_restarts" in text
    assert "label_replace(" in text  # HBM per slice, from the JobSet pod names


def test_raytrain_charts_step_time_from_a_log_metric_it_declares(planned):
    capture = planned["raytrain"]
    (log_metric,) = of_type(capture, "gcp:logging/metric:Metric")
    assert "completed step" in log_metric.inputs["valueExtractor"]
    filters = [
        d["timeSeriesQuery"]["timeSeriesFilter"]["filter"]
        for w in widgets(dashboard_of(capture))
        for d in (w.get("xyChart") or {}).get("dataSets", [])
        if "timeSeriesFilter" in d["timeSeriesQuery"]
    ]
    assert filters == [f'metric.type="logging.googleapis.com/user/{log_metric.inputs["name"]}"']
    (monitor,) = [r for r in capture.sorted_resources() if r.type.endswith(":PodMonitoring")]
    assert monitor.inputs["spec"]["selector"]["matchLabels"] == {"ray.io/cluster": "maxtext-tpu-cluster"}


def test_the_cluster_turns_on_the_kube_state_packages_the_dashboards_read(planned):
    (cluster,) = of_type(planned["vllm"], "gcp:container/cluster:Cluster")
    assert cluster.inputs["monitoringConfig"]["enableComponents"] == [
        "SYSTEM_COMPONENTS",
        "POD",
        "DEPLOYMENT",
        "HPA",
        "JOBSET",
    ]


def test_outputs_link_the_dashboard_in_the_stacks_universe(planned):
    google = planned["saxml"].stack_outputs["monitoring"]
    s3ns = planned["saxml-s3ns"].stack_outputs["monitoring"]
    assert google["dashboard"].startswith("https://console.cloud.google.com/monitoring/dashboards/builder/")
    assert s3ns["dashboard"].startswith("https://console.cloud.s3nscloud.fr/monitoring/dashboards/builder/")
    assert set(google) == {"dashboard", "workloads", "cluster", "alerts", "logs"}


def test_the_per_slice_hbm_chart_reads_the_slice_off_jobset_pod_names(planned):
    text = json.dumps(dashboard_of(planned["saxml"]))
    (pattern,) = set(re.findall(r'label_replace\(.*?\\"pod_name\\", \\"(.*?)\\"\)', text))
    # JobSet names a pod <jobset>-<replicatedJob>-<job index>-<pod index>-<suffix>; the job index is the slice
    for slice_index in (0, 1):
        name = f"sax-model-server-set-sax-model-server-{slice_index}-3-x7k2p"
        assert re.fullmatch(pattern, name).group(1) == str(slice_index)
    assert re.fullmatch(pattern, "sax-http-5d9c7-abcde") is None
