"""gcp/monitoring/queries.py: the PromQL each chart and alert runs, written out in full and compared with what the
sources say a query is.

Sources: PromQL's selectors (`name{label="v"}`, `=~` for a regular expression), `rate(x[5m])`, `sum by (l)` and
`histogram_quantile(q, sum by (le) (rate(x_bucket[w])))`
(https://prometheus.io/docs/prometheus/latest/querying/basics/, .../querying/functions/#histogram_quantile);
Cloud Monitoring's PromQL names of GKE system metrics, `kubernetes.io/container/restart_count` as
`kubernetes_io:container_restart_count` with the monitored resource's labels `cluster_name`, `namespace_name`
(https://cloud.google.com/monitoring/promql/promql-mapping); Managed Prometheus's labels `cluster`, `namespace`
(https://cloud.google.com/stackdriver/docs/managed-prometheus/query); vLLM v0.29.0's metric names and kinds
(ledger: vllm.metric.num-requests-waiting, a Gauge; vllm.metric.time-to-first-token-seconds, a Histogram)."""

from __future__ import annotations

import pytest

from tpu_stacks.catalog.engines import VLLM
from tpu_stacks.gcp.monitoring import queries
from tpu_stacks.gcp.monitoring.queries import Scope

SCOPE = Scope(cluster="c1", namespace="ns")


def test_managed_prometheus_selectors_name_the_cluster_and_namespace() -> None:
    assert SCOPE.prometheus() == '{cluster="c1",namespace="ns"}'
    assert SCOPE.prometheus(container="vllm") == '{cluster="c1",container="vllm",namespace="ns"}'


def test_a_key_ending_in_a_tilde_is_a_regular_expression_matcher() -> None:
    assert SCOPE.prometheus(**{"pod~": "vllm-.*"}) == '{cluster="c1",namespace="ns",pod=~"vllm-.*"}'


def test_system_metric_selectors_use_the_monitored_resources_labels() -> None:
    assert SCOPE.system() == '{cluster_name="c1",namespace_name="ns"}'
    assert SCOPE.system(container_name="x") == '{cluster_name="c1",container_name="x",namespace_name="ns"}'
    assert SCOPE.nodes() == '{cluster_name="c1"}'  # k8s_node has no namespace label
    assert SCOPE.nodes(node_name="n") == '{cluster_name="c1",node_name="n"}'


def test_an_engine_metric_is_its_name_and_selector() -> None:
    selector = SCOPE.prometheus()
    assert queries.engine(VLLM, "vllm:num_requests_waiting", selector) == (
        'vllm:num_requests_waiting{cluster="c1",namespace="ns"}'
    )
    assert queries.engine(VLLM, "vllm:time_to_first_token_seconds", selector, "_bucket") == (
        'vllm:time_to_first_token_seconds_bucket{cluster="c1",namespace="ns"}'
    )


def test_a_name_the_engine_does_not_export_or_a_gauges_bucket_fails_the_build() -> None:
    with pytest.raises(KeyError, match="exports no metric vllm:gpu_cache_usage_perc"):
        queries.engine(VLLM, "vllm:gpu_cache_usage_perc", "{}")  # renamed in vLLM 0.9
    with pytest.raises(KeyError, match="vllm:num_requests_waiting is a gauge, not a histogram"):
        queries.engine(VLLM, "vllm:num_requests_waiting", "{}", "_bucket")


def test_kube_state_metrics_are_checked_against_gkes_packages() -> None:
    """GKE's kube state metrics (Deployment package: kube_deployment_status_replicas_available;
    https://cloud.google.com/kubernetes-engine/docs/how-to/configure-metrics#ksm)."""
    assert queries.kube_state("kube_deployment_status_replicas_available", '{a="b"}') == (
        'kube_deployment_status_replicas_available{a="b"}'
    )
    with pytest.raises(KeyError, match="no kube_pod_container_status_restarts_total"):
        queries.kube_state("kube_pod_container_status_restarts_total", "{}")  # not in GKE's Pod package


def test_system_metrics_by_their_promql_names() -> None:
    assert queries.system("kubernetes.io/container/accelerator/duty_cycle", "{}") == (
        "kubernetes_io:container_accelerator_duty_cycle{}"
    )
    with pytest.raises(KeyError, match="no GKE system metric kubernetes.io/container/no_such"):
        queries.system("kubernetes.io/container/no_such", "{}")


def test_restarts_are_gkes_restart_count_in_the_namespace() -> None:
    assert queries.restarts(SCOPE) == 'kubernetes_io:container_restart_count{cluster_name="c1",namespace_name="ns"}'


def test_a_quantile_of_a_histogram_over_five_minutes() -> None:
    assert queries.quantile(VLLM, "vllm:time_to_first_token_seconds", "{}", 0.9) == (
        "histogram_quantile(0.9, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{}[5m])))"
    )


def test_a_summed_rate_with_and_without_grouping() -> None:
    assert queries.rate("x{}") == "sum (rate(x{}[5m]))"
    assert queries.rate("x{}", "pod") == "sum by (pod) (rate(x{}[5m]))"
