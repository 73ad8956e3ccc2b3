"""Who publishes a metric name, in each of its three spellings, and GKE's own metric names: the look-ups
(catalog/published.py, catalog/gke_metrics.py) checked name by name against the pages that define the spellings.

Sources:
- PromQL names of Cloud Monitoring metrics: `/` and `.` become `_`, a `:` follows the domain
  (https://cloud.google.com/monitoring/promql/promql-mapping), so `kubernetes.io/container/restart_count` is
  `kubernetes_io:container_restart_count`.
- A histogram `name` is written as `name_bucket`, `name_sum` and `name_count`
  (https://prometheus.io/docs/concepts/metric_types/#histogram); a gauge has no such series.
- The Custom Metrics Stackdriver Adapter names a Managed Prometheus metric `prometheus.googleapis.com|NAME|KIND`
  (https://cloud.google.com/kubernetes-engine/docs/tutorials/autoscaling-metrics, "Prometheus metrics").
- vLLM's `vllm:num_requests_waiting` is a gauge, `vllm:time_to_first_token_seconds` a histogram (vLLM's "Production
  Metrics" page, its `Metrics` class: `Gauge(name="vllm:num_requests_waiting", ...)`, and the histograms of request
  timing; https://docs.vllm.ai/en/v0.5.0/serving/metrics.html).
- The kube state metrics packages and the GKE version of each (KUBE_STATE_SOURCE); JOBSET is accepted from
  1.32.1-gke.1357001 (pulumi-gcp `ClusterMonitoringConfig.enableComponents`).
"""

import pytest

from tpu_stacks.catalog.engines import ENGINES
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.gke_metrics import (
    KUBE_STATE_SOURCE,
    SYSTEM_SOURCE,
    kube_state_metric,
    kube_state_packages,
    system_metric,
    system_metric_by_promql,
)
from tpu_stacks.catalog.published import Publisher, prometheus_names, publisher

ADAPTER = "prometheus.googleapis.com"

# -- GKE's own names --------------------------------------------------------------------------------


def test_a_system_metric_is_found_by_its_type_and_by_its_promql_name():
    by_type = system_metric("kubernetes.io/container/restart_count")
    assert by_type is not None and by_type.promql == "kubernetes_io:container_restart_count"
    assert system_metric_by_promql("kubernetes_io:container_restart_count") is by_type
    assert system_metric_by_promql("kubernetes_io:node_accelerator_duty_cycle").type == (
        "kubernetes.io/node/accelerator/duty_cycle"
    )
    assert system_metric("kubernetes.io/container/made_up") is None
    assert system_metric_by_promql("kubernetes.io/container/restart_count") is None  # a type is not a PromQL name


def test_a_kube_state_metric_is_found_with_its_package():
    found = kube_state_metric("kube_pod_status_phase")
    assert (found.name, found.package, found.since) == ("kube_pod_status_phase", "POD", "1.27.2-gke.1200")
    assert kube_state_metric("kube_jobset_restarts").since == "1.32.4-gke.1767000"
    assert kube_state_metric("kube_pod_container_status_restarts_total") is None  # not in the POD package


@pytest.mark.parametrize(
    "min_version,jobset",
    [
        (None, True),  # no pinned minimum: the cluster runs a current version
        ("1.27.3-gke.100", False),
        ("1.31.5-gke.1000", False),
        ("1.31", False),
        ("1.32.1-gke.1357001", True),
        ("1.32", True),
        ("1.33.0-gke.1868000", True),
        ("latest", True),  # an alias, not a number: nothing to compare
    ],
)
def test_the_jobset_package_from_gke_1_32(min_version, jobset):
    packages = kube_state_packages(min_version)
    expected = ("POD", "DEPLOYMENT", "HPA", "JOBSET") if jobset else ("POD", "DEPLOYMENT", "HPA")
    assert packages == expected


# -- publishers -------------------------------------------------------------------------------------


def test_system_metrics_are_published_in_both_spellings():
    for name in ("kubernetes.io/container/restart_count", "kubernetes_io:container_restart_count"):
        assert publisher(name) == Publisher(
            name, "GKE system metrics (kubernetes.io/container/restart_count, SYSTEM_COMPONENTS)", SYSTEM_SOURCE
        )


def test_a_kube_state_metric_is_published_by_its_package():
    assert publisher("kube_deployment_spec_replicas") == Publisher(
        "kube_deployment_spec_replicas",
        "GKE kube state metrics, package DEPLOYMENT (GKE 1.27.2-gke.1200)",
        KUBE_STATE_SOURCE,
    )


def test_a_histograms_three_series_are_published_and_a_gauges_are_not():
    for part in ("bucket", "sum", "count"):
        name = f"vllm:time_to_first_token_seconds_{part}"
        assert publisher(name, [VLLM]) == Publisher(name, f"vllm {VLLM.version}", VLLM.metrics_source)
    assert publisher("vllm:num_requests_waiting_count", [VLLM]) is None
    assert publisher("vllm:time_to_first_token_seconds_total", [VLLM]) is None


def test_the_adapters_name_needs_the_kind_vllm_publishes():
    name = f"{ADAPTER}|vllm:num_requests_waiting|gauge"
    assert publisher(name, [VLLM]) == Publisher(name, f"vllm {VLLM.version}", VLLM.metrics_source)
    assert publisher(f"{ADAPTER}|vllm:num_requests_waiting|counter", [VLLM]) is None
    assert publisher(f"{ADAPTER}|vllm:num_requests_waiting", [VLLM]) is None  # no kind
    assert publisher(f"{ADAPTER}|vllm:made_up|gauge", [VLLM]) is None


def test_an_engine_metric_without_a_source_has_no_publisher():
    unsourced = VLLM.model_copy(update={"metrics_source": ""})
    assert publisher("vllm:num_requests_waiting", [unsourced]) is None
    assert "vllm:num_requests_waiting" not in prometheus_names([unsourced])


def test_prometheus_names_are_gkes_and_each_sourced_engines_with_histogram_series():
    names = prometheus_names(ENGINES)
    assert {"kube_pod_status_phase", "kubernetes_io:container_restart_count", "vllm:num_requests_waiting"} <= names
    assert {f"vllm:time_to_first_token_seconds_{part}" for part in ("bucket", "sum", "count")} <= names
    assert "vllm:num_requests_waiting_count" not in names
    assert all(publisher(name) is not None for name in names)
