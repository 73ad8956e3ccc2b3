"""Rule 13: an HPA scales on a metric its engine exports.

An HPA on a misspelled or retired metric is accepted by Kubernetes and never scales: the Custom
Metrics Stackdriver Adapter answers "no metrics returned" and the HPA sits at its minimum
(the GKE vLLM tutorial's older `vllm:avg_generation_throughput_toks_per_s` is not exported by the
V1 engine the pinned image runs, and its `vllm:gpu_cache_usage_perc` is `vllm:kv_cache_usage_perc` since
vLLM 0.9: the catalogue's `renamed` list names the new name). The metric names each catalogued
engine exports, as Managed Prometheus names them (`prometheus.googleapis.com|<metric>|<kind>`), are in
`tpu_stacks.catalog.engines`; a `pods`, `object` or `external` metric that carries an engine's
prefix (`vllm:`) must be one of them, with its kind. Metrics of engines the catalogue has no list
for pass; names a team exports itself go in `allowedMetrics`.
"""

from __future__ import annotations

import difflib
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import as_list, as_str, dig, plain
from tpu_policies.workloads import name_of
from tpu_stacks.catalog.engines import ENGINES, metric_owner
from tpu_stacks.catalog.engines.record import MANAGED_PROMETHEUS_PREFIX, Metric

HPA_TYPES = (
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
    "kubernetes:autoscaling/v2beta2:HorizontalPodAutoscaler",
)


ALLOWED_METRICS = Setting(
    "allowedMetrics",
    [],
    "Metric names (bare or prometheus.googleapis.com|name|kind) accepted without a check.",
)


def _split(name: str) -> tuple[str, str | None]:
    """(metric, kind) of `prometheus.googleapis.com|metric|kind` (or `/`-separated); a bare name has no kind."""
    for separator in ("|", "/"):
        parts = name.split(separator)
        if len(parts) == 3 and parts[0] == MANAGED_PROMETHEUS_PREFIX:
            return parts[1], parts[2]
    return name, None


def metric_problem(name: str, allowed: list[str]) -> str | None:
    """Why an HPA metric name is not one its engine exports, or None."""
    if name in allowed:
        return None
    metric, kind = _split(name)
    if metric in allowed:
        return None
    owner = metric_owner(metric)
    if owner is None:
        return None
    versions = [e for e in ENGINES if e.engine == owner.engine and e.metrics]
    exported: dict[str, Metric] = {m.name: m for e in versions for m in e.metrics}
    pinned = ", ".join(e.version[:12] for e in versions)
    found = exported.get(metric)
    renamed = next((r for e in versions if (r := e.renamed_to(metric)) is not None and r.new in exported), None)
    if found is None and renamed is not None:
        new = exported[renamed.new].managed_prometheus
        return (
            f"{metric} was renamed {renamed.new} in {owner.engine} {renamed.since}; {owner.engine} {pinned} exports "
            f"only the new name, so the HPA would never scale; use {new}"
        )
    if found is None:
        close = difflib.get_close_matches(metric, list(exported), n=1)
        hint = f"did you mean {exported[close[0]].managed_prometheus}?" if close else "use one it exports"
        return (
            f"{metric} is not a metric {owner.engine} {pinned} exports, so the HPA would never scale; {hint} "
            f"(catalogued: {', '.join(m.name for m in exported.values() if m.kind == 'gauge')} and others)"
        )
    if kind is not None and kind != found.kind:
        return f"{metric} is a {found.kind}, so Managed Prometheus names it {found.managed_prometheus}, not {name}"
    return None


def _names(spec: dict[str, Any]) -> list[tuple[str, str]]:
    names: list[tuple[str, str]] = []
    for index, metric in enumerate(as_list(spec.get("metrics"))):
        for source in ("pods", "object", "external"):
            name = as_str(dig(metric, source, "metric", "name"))
            if name:
                names.append((f"spec.metrics[{index}].{source}.metric.name", name))
    return names


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in HPA_TYPES:
        return
    props = plain(args.props)
    allowed = [str(m) for m in ALLOWED_METRICS.read(args)]
    for where, name in _names(props.get("spec") or {}):
        problem = metric_problem(name, allowed)
        if problem:
            report_violation(f"HorizontalPodAutoscaler {name_of(props, args.name)} {where}: {problem}", None)


POLICY = ResourceValidationPolicy(
    name="hpa-metric-exists",
    description="An HPA's pods/object/external metric that names a catalogued engine's metric (vllm:...) is one the "
    "pinned engine exports, under its Managed Prometheus name and kind.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=config_schema(ALLOWED_METRICS),
)
