"""GKE's own metrics a TPU stack's dashboard and alerts read: system metrics (`kubernetes.io/...`, Cloud
Monitoring filters) and the managed kube state metrics packages (Prometheus names, PromQL).

Why here: the dashboards and alert policies (gcp/monitoring) and the offline plan's metric check read the
same list, so a widget naming a metric GKE does not export fails the plan, not the first look at the
console. Engine metrics (vLLM, JetStream, Ray) are in catalog/engines/.

Sources:
- SYSTEM: "Kubernetes metrics" (Cloud Monitoring metrics list), https://cloud.google.com/monitoring/api/metrics_kubernetes
  (list generated 2026-01-23; the S3NS edition documentation.s3ns.fr/monitoring/api/metrics_kubernetes lists
  the same `kubernetes.io/` family). TPU metrics carry the `accelerator_id`, `model`, `make` and
  `tpu_topology` labels; GKE sends them as system metrics (the `SYSTEM_COMPONENTS` package).
- KUBE_STATE: "Collect and view kube state metrics",
  https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics (packages POD, DEPLOYMENT, HPA,
  JOBSET; the JobSet package is on by default from 1.32.1-gke.1357001, `kube_jobset_restarts` from
  1.32.4-gke.1767000 / 1.33.0-gke.1868000; the same tables in its Cloud Observability edition,
  https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics). They are written through
  Managed Service for Prometheus, so a query names them as Prometheus metrics; the cluster enables the
  packages (cluster/component.py).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

SYSTEM_SOURCE = "https://cloud.google.com/monitoring/api/metrics_kubernetes"
KUBE_STATE_SOURCE = "https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics"
KUBE_STATE_PACKAGES = ("POD", "DEPLOYMENT", "HPA", "JOBSET")
"""`monitoringConfig.enableComponents` values that turn on the kube state metrics below (Managed Prometheus on)."""


class SystemMetric(BaseModel):
    """A GKE system metric (Cloud Monitoring metric type)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str
    """Full metric type, `kubernetes.io/...`."""
    resource: Literal["k8s_container", "k8s_node", "k8s_pod"]
    kind: Literal["GAUGE", "CUMULATIVE", "DELTA"]
    unit: str
    note: str = ""

    @property
    def promql(self) -> str:
        """The PromQL name Cloud Monitoring gives a system metric: `/` and `.` become `_`, a `:` separates the
        domain (https://cloud.google.com/monitoring/promql/promql-mapping)."""
        domain, _, path = self.type.partition("/")
        return f"{domain.replace('.', '_')}:{path.replace('/', '_')}"


SYSTEM_METRICS: tuple[SystemMetric, ...] = (
    SystemMetric(
        type="kubernetes.io/container/accelerator/duty_cycle",
        resource="k8s_container",
        kind="GAUGE",
        unit="%",
        note="percent of the sample period the accelerator was processing",
    ),
    SystemMetric(
        type="kubernetes.io/container/accelerator/memory_used", resource="k8s_container", kind="GAUGE", unit="By"
    ),
    SystemMetric(
        type="kubernetes.io/container/accelerator/memory_total", resource="k8s_container", kind="GAUGE", unit="By"
    ),
    SystemMetric(
        type="kubernetes.io/container/accelerator/tensorcore_utilization",
        resource="k8s_container",
        kind="GAUGE",
        unit="%",
    ),
    SystemMetric(
        type="kubernetes.io/node/accelerator/tensorcore_utilization",
        resource="k8s_node",
        kind="GAUGE",
        unit="%",
        note="includes chips no pod holds (the container metric has no series for them)",
    ),
    SystemMetric(type="kubernetes.io/node/accelerator/duty_cycle", resource="k8s_node", kind="GAUGE", unit="%"),
    SystemMetric(
        type="kubernetes.io/node/accelerator/memory_bandwidth_utilization", resource="k8s_node", kind="GAUGE", unit="%"
    ),
    SystemMetric(type="kubernetes.io/container/restart_count", resource="k8s_container", kind="CUMULATIVE", unit="1"),
)


class KubeStateMetric(BaseModel):
    """A kube state metric GKE's managed package publishes (a Managed Prometheus series, queried by this name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    package: Literal["POD", "DEPLOYMENT", "HPA", "JOBSET"]
    """The `monitoringConfig.enableComponents` value that turns it on."""
    since: str
    """The GKE version the page's "Required GKE version" column gives."""


def _package(package: Literal["POD", "DEPLOYMENT", "HPA", "JOBSET"], since: str, *names: str) -> tuple:
    return tuple(KubeStateMetric(name=name, package=package, since=since) for name in names)


KUBE_STATE: tuple[KubeStateMetric, ...] = (
    # The Pod package publishes these four only: no `kube_pod_container_status_restarts_total` (the page points to
    # the system metric kubernetes.io/container/restart_count for crash-looping containers instead).
    *_package(
        "POD",
        "1.27.2-gke.1200",
        "kube_pod_container_status_ready",
        "kube_pod_container_status_waiting_reason",
        "kube_pod_status_phase",
        "kube_pod_status_unschedulable",
    ),
    *_package(
        "DEPLOYMENT",
        "1.27.2-gke.1200",
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas_available",
        "kube_deployment_status_replicas_updated",
    ),
    *_package(
        "HPA",
        "1.27.2-gke.1200",
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "kube_horizontalpodautoscaler_spec_min_replicas",
        "kube_horizontalpodautoscaler_spec_target_metric",
        "kube_horizontalpodautoscaler_status_condition",
        "kube_horizontalpodautoscaler_status_current_replicas",
        "kube_horizontalpodautoscaler_status_desired_replicas",
    ),
    *_package(
        "JOBSET",
        "1.32.1-gke.1357001",
        "kube_jobset_specified_replicas",
        "kube_jobset_ready_replicas",
        "kube_jobset_succeeded_replicas",
        "kube_jobset_failed_replicas",
        "kube_jobset_active_replicas",
        "kube_jobset_suspended_replicas",
        "kube_jobset_status_condition",
    ),
    KubeStateMetric(name="kube_jobset_restarts", package="JOBSET", since="1.32.4-gke.1767000"),  # 1.33.0-gke.1868000
)
"""Every metric of the packages this project turns on, as the page's tables list them (KUBE_STATE_SOURCE)."""
KUBE_STATE_METRICS: tuple[str, ...] = tuple(m.name for m in KUBE_STATE)


def kube_state_metric(name: str) -> KubeStateMetric | None:
    return next((m for m in KUBE_STATE if m.name == name), None)


JOBSET_PACKAGE_SINCE = (1, 32)
"""`JOBSET` is accepted from GKE 1.32.1-gke.1357001 (pulumi-gcp ClusterMonitoringConfig.enableComponents docs)."""


def kube_state_packages(min_version: str | None) -> tuple[str, ...]:
    """The packages a cluster can take: without JOBSET when its pinned minimum version is older than 1.32."""
    if min_version:
        parts = re.findall(r"\d+", min_version)[:2]
        if len(parts) == 2 and (int(parts[0]), int(parts[1])) < JOBSET_PACKAGE_SINCE:
            return tuple(p for p in KUBE_STATE_PACKAGES if p != "JOBSET")
    return KUBE_STATE_PACKAGES


def system_metric(metric_type: str) -> SystemMetric | None:
    return next((m for m in SYSTEM_METRICS if m.type == metric_type), None)


def system_metric_by_promql(name: str) -> SystemMetric | None:
    return next((m for m in SYSTEM_METRICS if m.promql == name), None)
