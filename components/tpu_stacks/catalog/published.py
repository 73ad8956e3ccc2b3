"""Who publishes a metric a chart, an alert or an HPA reads: one look-up over the metric catalogues.

A query that names a metric nobody publishes draws an empty chart and an alert that never fires (with
metric validation off, Cloud Monitoring accepts it). Every name therefore resolves here to the package or
engine version that publishes it and the source that says so, or to None, which the offline plan and the
tests refuse. Names come in the three spellings the stacks use:
- PromQL: a Managed Prometheus series (`kube_pod_status_phase`, `vllm:num_requests_waiting`, a histogram's
  `_bucket`/`_sum`/`_count`) or a GKE system metric's PromQL name (`kubernetes_io:container_restart_count`,
  https://cloud.google.com/monitoring/promql/promql-mapping);
- a Cloud Monitoring metric type (`kubernetes.io/container/restart_count`);
- an HPA's external/pods metric as the Custom Metrics Stackdriver Adapter serves it
  (`prometheus.googleapis.com|vllm:num_requests_waiting|gauge`).
Pure: no provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tpu_stacks.catalog.engines import ENGINES
from tpu_stacks.catalog.engines.record import MANAGED_PROMETHEUS_PREFIX, EngineVersion
from tpu_stacks.catalog.gke_metrics import (
    KUBE_STATE_METRICS,
    KUBE_STATE_SOURCE,
    SYSTEM_METRICS,
    SYSTEM_SOURCE,
    kube_state_metric,
    system_metric,
    system_metric_by_promql,
)

HISTOGRAM_PARTS = ("bucket", "sum", "count")
"""The series Prometheus writes for a histogram `name`: `name_bucket`, `name_sum`, `name_count`."""
_HISTOGRAM_PART = re.compile(rf"^(.+)_({'|'.join(HISTOGRAM_PARTS)})$")


@dataclass(frozen=True)
class Publisher:
    """What publishes one metric name, and where that is written down."""

    metric: str
    by: str
    source: str


def publisher(name: str, engines: Iterable[EngineVersion] = ENGINES) -> Publisher | None:
    """The publisher of `name` among GKE's packages and `engines` (default: every catalogued engine)."""
    engines = tuple(engines)
    if name.startswith(f"{MANAGED_PROMETHEUS_PREFIX}|"):
        _, metric, kind = (name.split("|") + ["", ""])[:3]
        found = _engine_metric(metric, engines)
        if found is None or _kind_of(metric, engines) != kind:
            return None
        return Publisher(name, found.by, found.source)
    system = system_metric(name) or system_metric_by_promql(name)
    if system is not None:
        return Publisher(name, f"GKE system metrics ({system.type}, SYSTEM_COMPONENTS)", SYSTEM_SOURCE)
    kube = kube_state_metric(name)
    if kube is not None:
        return Publisher(name, f"GKE kube state metrics, package {kube.package} (GKE {kube.since})", KUBE_STATE_SOURCE)
    return _engine_metric(name, engines)


def _engine_metric(name: str, engines: Iterable[EngineVersion]) -> Publisher | None:
    for engine in engines:
        metric = engine.metric(name)
        part = _HISTOGRAM_PART.match(name)
        if metric is None and part:
            base = engine.metric(part.group(1))
            metric = base if base is not None and base.kind == "histogram" else None
        if metric is not None and engine.metrics_source:
            return Publisher(name, f"{engine.engine} {engine.version}", engine.metrics_source)
    return None


def prometheus_names(engines: Iterable[EngineVersion] = ENGINES) -> frozenset[str]:
    """Every PromQL name `publisher` resolves for these engines (a histogram with its three series)."""
    names = set(KUBE_STATE_METRICS) | {m.promql for m in SYSTEM_METRICS}
    for engine in engines:
        if not engine.metrics_source:
            continue
        for metric in engine.metrics:
            names.add(metric.name)
            if metric.kind == "histogram":
                names |= {f"{metric.name}_{part}" for part in HISTOGRAM_PARTS}
    return frozenset(names)


def _kind_of(name: str, engines: Iterable[EngineVersion]) -> str | None:
    return next((m.kind for e in engines if (m := e.metric(name)) is not None), None)
