"""hpa-metric-exists: an HPA scales on a metric its engine exports, named as Managed Prometheus names it."""

import pulumi_kubernetes as k8s
import pytest

from tests.policies.harness import capture, of, run
from tpu_stacks.vllm.spec import HPA_METRICS

POLICY = "hpa-metric-exists"
TUTORIAL = "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"  # [K-VLLM] vllm-hpa.yaml


def hpa(name, source="pods"):
    metric = {"metric": {"name": name}, "target": {"type": "AverageValue", "averageValue": "10"}}
    if source == "object":
        metric["describedObject"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm-tpu"}
    return lambda: k8s.autoscaling.v2.HorizontalPodAutoscaler(
        "vllm-hpa",
        metadata={"name": "vllm-hpa", "namespace": "serving"},
        spec={
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm-tpu"},
            "minReplicas": 1,
            "maxReplicas": 2,
            "metrics": [{"type": source.capitalize(), source: metric}],
        },
    )


def check(build, config=None):
    return of(run(capture(build), config), POLICY)


def test_a_misspelled_vllm_metric_is_refused_with_the_right_name():
    (problem,) = check(hpa("prometheus.googleapis.com|vllm:num_request_waiting|gauge"))
    assert problem.level == "mandatory"
    assert "HorizontalPodAutoscaler serving/vllm-hpa spec.metrics[0].pods.metric.name" in problem.message
    assert "vllm:num_request_waiting is not a metric vllm v0.29.0 exports" in problem.message
    assert f"did you mean {TUTORIAL}?" in problem.message


def test_the_tutorials_renamed_cache_metric_is_refused_with_its_new_name():
    """[K-VLLM] vllm-hpa.yaml scales on vllm:gpu_cache_usage_perc, which vLLM renamed in 0.9 (catalogue `renamed`)."""
    (problem,) = check(hpa("prometheus.googleapis.com|vllm:gpu_cache_usage_perc|gauge"))
    assert problem.level == "mandatory"
    assert "vllm:gpu_cache_usage_perc was renamed vllm:kv_cache_usage_perc in vllm 0.9" in problem.message
    assert "use prometheus.googleapis.com|vllm:kv_cache_usage_perc|gauge" in problem.message
    (dashboards,) = check(hpa("prometheus.googleapis.com|vllm:time_per_output_token_seconds|histogram"))
    assert "renamed vllm:inter_token_latency_seconds in vllm 0.11" in dashboards.message


def test_the_retired_throughput_metric_is_refused():
    (problem,) = check(hpa("prometheus.googleapis.com|vllm:avg_generation_throughput_toks_per_s|gauge", "external"))
    assert "spec.metrics[0].external.metric.name" in problem.message and "never scale" in problem.message


def test_a_wrong_kind_is_refused():
    (problem,) = check(hpa("prometheus.googleapis.com|vllm:num_requests_waiting|counter", "object"))
    assert f"vllm:num_requests_waiting is a gauge, so Managed Prometheus names it {TUTORIAL}" in problem.message


@pytest.mark.parametrize(
    "name", [TUTORIAL, *HPA_METRICS.values(), "prometheus.googleapis.com|vllm:prompt_tokens_total|counter"]
)
def test_the_tutorials_and_the_shipped_metrics_pass(name):
    assert check(hpa(name)) == []


def test_other_metrics_pass_and_a_teams_own_names_can_be_allowed():
    assert check(hpa("prometheus.googleapis.com|jetstream_slots_used_percentage|gauge")) == []
    assert check(hpa("custom.googleapis.com|queue_depth")) == []
    mine = "prometheus.googleapis.com|vllm:my_patched_metric|gauge"
    assert len(check(hpa(mine))) == 1
    assert check(hpa(mine), {POLICY: {"allowedMetrics": ["vllm:my_patched_metric"]}}) == []
