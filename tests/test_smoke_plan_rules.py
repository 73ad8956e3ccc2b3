"""serving/smoke_plan.py's decisions on pure plans (no stack, no mocks): which metric samples the script looks for,
its time limit, which variables it gets, and `flag_value` on a value holding `=` (smoke_plan.py's mutation
survivors)."""

from __future__ import annotations

import json

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.saxml.monitoring import saxml_target
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import SaxmlSpec
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.serving.smoke_plan import REQUEST_TIMEOUT_SECONDS, SmokeTest, read_metrics
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

CLUSTER = ClusterSpec(project="p", location="us-central1-b")


def test_a_histogram_the_dashboard_reads_is_looked_for_as_its_bucket_sample():
    """A Prometheus histogram `x` is exposed as the samples `x_bucket`, `x_sum` and `x_count`
    (prometheus.io/docs/concepts/metric_types/#histogram); the catalogue names the family, the dashboard's
    latency panels read `histogram_quantile` over `_bucket`, and /metrics shows the sample."""
    plan = plan_vllm(VllmSpec(model="meta-llama/Llama-3.1-8B", exposure="cluster"), CLUSTER, True, False)
    metrics = read_metrics(plan_monitoring(vllm_target(plan, "vllm-hpa", "vllm-tpu", "vllm-tpu"), "vllm"))
    assert "vllm:time_to_first_token_seconds_bucket" in metrics
    assert "vllm:inter_token_latency_seconds_bucket" in metrics
    assert "vllm:num_requests_waiting" in metrics


def test_an_engine_without_metrics_gives_an_empty_tuple():
    """Saxml exports no Prometheus metrics; the empty tuple is part of the smoke Job's name (its hash)."""
    spec = SaxmlSpec(source_ranges=["10.0.0.0/8"], model="meta-llama/Meta-Llama-3-8B", models=[])
    plan = plan_saxml(spec, ClusterSpec(project="p", location="us-central1-a"))
    metrics = read_metrics(plan_monitoring(saxml_target(plan, "sax-model-server-set", "sax-model-server"), "saxml"))
    assert metrics == () and isinstance(metrics, tuple)


def _smoke(**fields) -> SmokeTest:
    base = {"answer": "completion", "namespace": "ns", "url": "http://s/v1", "body": "{}", "image": "i", "server": "x"}
    return SmokeTest(ports=(8000,), **{**base, **fields})


def test_the_scripts_limit_counts_one_request_timeout_per_request_after_the_window():
    """The last request begun in the window, then the metrics read, then (behind a Gateway) the picker's count: each
    at most one request timeout (smoke_check.py)."""
    assert _smoke().limit_seconds == 10 * 60 + 2 * REQUEST_TIMEOUT_SECONDS
    counter = json.dumps({"name": "picks", "labels": {}})
    assert _smoke(picker_metrics_url="http://p/metrics", picker_counter=counter).limit_seconds == 600 + 3 * 120


def test_the_metrics_and_picker_variables_come_in_pairs():
    """The script reads /metrics only with both its URL and the names, the picker only with both URL and counter."""
    env = _smoke(metrics_url="http://s/metrics", picker_metrics_url="http://p/metrics").environment()
    assert not {"SMOKE_METRICS_URL", "SMOKE_METRICS", "SMOKE_PICKER_METRICS_URL", "SMOKE_PICKER_COUNTER"} & set(env)
    env = _smoke(metrics=("m",), picker_counter="{}").environment()
    assert not {"SMOKE_METRICS_URL", "SMOKE_METRICS", "SMOKE_PICKER_METRICS_URL", "SMOKE_PICKER_COUNTER"} & set(env)
    env = _smoke(metrics_url="http://s/metrics", metrics=("m",)).environment()
    assert (env["SMOKE_METRICS_URL"], env["SMOKE_METRICS"]) == ("http://s/metrics", '["m"]')


def test_a_flags_value_may_hold_an_equals_sign():
    """argparse splits `--flag=value` at the first `=` only (docs.python.org/3/library/argparse.html, "Option value
    syntax"), so a JSON or `key=value` value keeps its own."""
    assert flag_value(["--override-generation-config=a=b"], "--override-generation-config") == "a=b"
