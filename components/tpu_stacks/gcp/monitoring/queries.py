"""PromQL for the dashboards and alerts, every metric name taken from a catalogue.

A selector is always written `name{labels}`, so the offline plan can read each query's metric names
back (tools/preview dashboards check) and find them in the same catalogues. Engine metrics and kube
state metrics are Managed Prometheus series (labels `cluster`, `namespace`, `pod`, `container`); GKE
system metrics are queried by their PromQL names (`kubernetes_io:container_accelerator_duty_cycle`,
https://cloud.google.com/monitoring/promql/promql-mapping) with the monitored resource's labels
(`cluster_name`, `namespace_name`, `pod_name`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.gke_metrics import KUBE_STATE_METRICS, system_metric

RATE_WINDOW = "5m"


@dataclass(frozen=True)
class Scope:
    """Where a workload's series live: its cluster and namespace."""

    cluster: str
    namespace: str

    def prometheus(self, **extra: str) -> str:
        labels = {"cluster": self.cluster, "namespace": self.namespace, **extra}
        return _matchers(labels)

    def system(self, **extra: str) -> str:
        labels = {"cluster_name": self.cluster, "namespace_name": self.namespace, **extra}
        return _matchers(labels)

    def nodes(self, **extra: str) -> str:
        """A node metric's selector (the k8s_node resource has no namespace): the cluster's nodes."""
        return _matchers({"cluster_name": self.cluster, **extra})


def _matchers(labels: dict[str, str]) -> str:
    parts = []
    for key, value in sorted(labels.items()):
        op = "=~" if key.endswith("~") else "="
        parts.append(f'{key.rstrip("~")}{op}"{value}"')
    return "{" + ",".join(parts) + "}"


def engine(version: EngineVersion, name: str, selector: str, suffix: str = "") -> str:
    """`name{...}` for a metric the pinned engine exports; KeyError otherwise (a typo fails the build)."""
    metric = version.metric(name)
    if metric is None:
        raise KeyError(f"{version.engine} {version.version} exports no metric {name}")
    if suffix and metric.kind != "histogram":
        raise KeyError(f"{name} is a {metric.kind}, not a histogram")
    return f"{name}{suffix}{selector}"


def kube_state(name: str, selector: str) -> str:
    if name not in KUBE_STATE_METRICS:
        raise KeyError(f"GKE's kube state metrics packages have no {name}")
    return f"{name}{selector}"


def system(metric_type: str, selector: str) -> str:
    metric = system_metric(metric_type)
    if metric is None:
        raise KeyError(f"no GKE system metric {metric_type}")
    return f"{metric.promql}{selector}"


RESTART_COUNT = "kubernetes.io/container/restart_count"
"""Container restarts: GKE's system metric (CUMULATIVE), what GKE's kube state page points to for crash-looping
containers. Its Pod package publishes no `kube_pod_container_status_restarts_total`, so a query on that name
would chart nothing and its alert would never fire (catalog/gke_metrics.py)."""


def restarts(scope: Scope) -> str:
    """Restart counts of the workload's containers, by the k8s_container resource's labels (`pod_name`)."""
    return system(RESTART_COUNT, scope.system())


def quantile(version: EngineVersion, name: str, selector: str, q: float) -> str:
    bucket = engine(version, name, selector, "_bucket")
    return f"histogram_quantile({q}, sum by (le) (rate({bucket}[{RATE_WINDOW}])))"


def rate(series: str, by: str = "") -> str:
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({series}[{RATE_WINDOW}]))"
