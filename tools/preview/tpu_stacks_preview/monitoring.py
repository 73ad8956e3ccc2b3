"""Check a plan's Cloud Monitoring resources strictly, offline: each dashboard's JSON against the
Monitoring API's Dashboard schema (dashboard_schema.json, written from the API reference), its mosaic
tiles inside the grid and not overlapping, and every metric a dashboard or alert policy queries
against the catalogues for the versions the plan pins.

Why: Cloud Monitoring accepts a PromQL query naming a metric that does not exist and draws an empty
chart (vLLM's `avg_generation_throughput_toks_per_s`, gone in V1, is the tutorial's own example). The
known metrics are those of the engines whose pinned images the plan runs (catalog/engines/ray.py), Ray's
when it declares a RayCluster, GKE's system and kube state metrics (catalog/gke_metrics.py), and the
log-based metrics the plan itself declares.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from tpu_stacks.catalog.engines import engine_of_image, metric_owner
from tpu_stacks.catalog.engines.ray import RAY, RAY_SERVE
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.gke_metrics import SYSTEM_METRICS
from tpu_stacks.catalog.published import prometheus_names, publisher
from tpu_stacks_preview.capture import Capture, ResourceRecord
from tpu_stacks_preview.schema import SchemaProblem

DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
LOG_METRIC = "gcp:logging/metric:Metric"
SCHEMA_PATH = Path(__file__).with_name("dashboard_schema.json")
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{")
_METRIC_TYPE = re.compile(r'metric\.type\s*=\s*"([^"]+)"')
_BY = re.compile(r"\bby\s*\(([^)]*)\)")
_LEGEND = re.compile(r"\$\{([^}]+)\}")


@functools.cache
def dashboard_validator() -> jsonschema.Draft202012Validator:
    """The vendored schema's validator. That the file is a valid Draft 2020-12 schema is a fact of the repository,
    checked once by tests/preview/test_dashboard_check.py rather than in every plan (about 70 ms a process)."""
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def engines_in(capture: Capture) -> list[EngineVersion]:
    """The catalogued engine versions the plan runs: by the images of its containers, Ray by its RayCluster,
    Ray Serve (with the engine's metrics exported through Ray) by its RayService."""
    found: dict[str, EngineVersion] = {}
    for record in capture.resources:
        for image in _images(record.inputs):
            engine = engine_of_image(image)
            if engine is not None:
                found[f"{engine.engine}:{engine.version}"] = engine
        if record.type.endswith(":RayCluster"):
            found[f"ray:{RAY.version}"] = RAY
        if record.type.endswith(":RayService"):
            found[f"ray:{RAY_SERVE.version}"] = RAY_SERVE
    return [found[key] for key in sorted(found)]


def _images(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "image" and isinstance(item, str):
                yield item
            else:
                yield from _images(item)
    elif isinstance(value, list):
        for item in value:
            yield from _images(item)


def known_prometheus_metrics(engines: Iterable[EngineVersion]) -> set[str]:
    """The PromQL names the catalogues publish for these engines (catalog/published.py)."""
    return set(prometheus_names(engines))


def promql_metrics(query: str) -> list[str]:
    """The metric names of a query's selectors (`name{...}`); the dashboards write every selector so."""
    return _SELECTOR.findall(query)


def _queries(node: Any, path: str = "") -> Iterable[tuple[str, str, str]]:
    """(path, kind, text) of every prometheusQuery and timeSeriesFilter.filter in a dashboard document."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}" if path else key
            if key == "prometheusQuery" and isinstance(value, str):
                yield here, "promql", value
            elif key == "timeSeriesFilter" and isinstance(value, dict):
                yield f"{here}.filter", "filter", str(value.get("filter", ""))
            else:
                yield from _queries(value, here)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _queries(value, f"{path}[{index}]")


def _check_metrics(
    object_id: str, path: str, kind: str, text: str, known: set[str], log_metrics: set[str], where: str
) -> list[SchemaProblem]:
    problems = []
    if kind == "promql":
        names = promql_metrics(text)
        if not names:
            problems.append(SchemaProblem(object_id, path, "a query names no metric selector `name{...}`"))
        for name in names:
            if name not in known:
                owner = metric_owner(name)
                renamed = owner.renamed_to(name) if owner is not None else None
                hint = f"; renamed {renamed.new} in {owner.engine} {renamed.since}" if owner and renamed else ""
                problems.append(
                    SchemaProblem(object_id, path, f"metric {name} is not exported by {where} (engine catalogue{hint})")
                )
        return problems
    types = _METRIC_TYPE.findall(text)
    if not types:
        problems.append(SchemaProblem(object_id, path, "a filter names no metric.type"))
    system_types = {m.type for m in SYSTEM_METRICS}
    for metric_type in types:
        if metric_type not in system_types and metric_type not in log_metrics:
            problems.append(
                SchemaProblem(
                    object_id,
                    path,
                    f"metric type {metric_type} is neither a GKE system "
                    "metric nor a log-based metric this plan declares",
                )
            )
    return problems


def _layout(object_id: str, document: dict[str, Any]) -> list[SchemaProblem]:
    mosaic = document.get("mosaicLayout") or {}
    columns = mosaic.get("columns", 48)
    problems: list[SchemaProblem] = []
    cells: dict[tuple[int, int], int] = {}
    for index, tile in enumerate(mosaic.get("tiles", [])):
        x, y, w, h = tile.get("xPos", 0), tile.get("yPos", 0), tile["width"], tile["height"]
        path = f"dashboardJson.mosaicLayout.tiles[{index}]"
        if x + w > columns:
            problems.append(SchemaProblem(object_id, path, f"xPos {x} + width {w} exceeds the {columns} columns"))
        for cx in range(x, x + w):
            for cy in range(y, y + h):
                if (cx, cy) in cells:
                    problems.append(SchemaProblem(object_id, path, f"overlaps tile {cells[(cx, cy)]}"))
                    break
                cells[(cx, cy)] = index
            else:
                continue
            break
    return problems


def _legends(object_id: str, document: dict[str, Any]) -> list[SchemaProblem]:
    """A legend's `${label}` (the API's interpolation form) must be a label the query keeps (`by (...)`):
    any other renders as an empty name."""
    problems = []
    for t_index, tile in enumerate((document.get("mosaicLayout") or {}).get("tiles", [])):
        chart = tile.get("widget", {}).get("xyChart") or {}
        for d_index, data in enumerate(chart.get("dataSets", [])):
            query = data.get("timeSeriesQuery", {}).get("prometheusQuery", "")
            kept = {label.strip() for group in _BY.findall(query) for label in group.split(",")}
            for label in _LEGEND.findall(data.get("legendTemplate", "")):
                if label not in kept:
                    path = (
                        f"dashboardJson.mosaicLayout.tiles[{t_index}].widget.xyChart.dataSets[{d_index}].legendTemplate"
                    )
                    problems.append(SchemaProblem(object_id, path, f"${{{label}}} is not a label the query keeps"))
    return problems


def check_monitoring(capture: Capture) -> list[SchemaProblem]:
    """Every problem of the plan's dashboards and alert policies (none when it declares neither)."""
    engines = engines_in(capture)
    known = known_prometheus_metrics(engines)
    where = ", ".join(f"{e.engine} {e.version[:12]}" for e in engines) or "no engine this plan runs"
    where += " or GKE"
    log_metrics = {
        f"logging.googleapis.com/user/{r.inputs.get('name', r.name)}" for r in capture.resources if r.type == LOG_METRIC
    }
    problems: list[SchemaProblem] = []
    for record in capture.sorted_resources():
        if record.type == DASHBOARD:
            problems += check_dashboard(record, known, log_metrics, where)
        elif record.type == ALERT_POLICY:
            for index, condition in enumerate(record.inputs.get("conditions", [])):
                promql = (condition.get("conditionPrometheusQueryLanguage") or {}).get("query")
                if promql:
                    path = f"conditions[{index}].conditionPrometheusQueryLanguage.query"
                    problems += _check_metrics(_id(record), path, "promql", promql, known, log_metrics, where)
        elif record.type.endswith(":HorizontalPodAutoscaler"):
            problems += check_hpa(record, engines, where)
    return problems


def check_hpa(record: ResourceRecord, engines: list[EngineVersion], where: str) -> list[SchemaProblem]:
    """Every Pods, Object or External metric an HPA scales on has a publisher in the catalogues: an HPA on a
    metric nobody exports never scales (the adapter answers "no metrics returned")."""
    problems = []
    spec = record.inputs.get("spec") if isinstance(record.inputs.get("spec"), dict) else {}
    for index, entry in enumerate(spec.get("metrics") or []):
        source = entry.get("pods") or entry.get("object") or entry.get("external") or {}
        name = (source.get("metric") or {}).get("name")
        if isinstance(name, str) and publisher(name, engines) is None:
            problems.append(
                SchemaProblem(_id(record), f"spec.metrics[{index}].metric.name", f"{name} is not exported by {where}")
            )
    return problems


def _id(record: ResourceRecord) -> str:
    return f"{record.type} {record.name}"


def check_dashboard(record: ResourceRecord, known: set[str], log_metrics: set[str], where: str) -> list[SchemaProblem]:
    object_id = _id(record)
    raw = record.inputs.get("dashboardJson")
    if not isinstance(raw, str):
        return [SchemaProblem(object_id, "dashboardJson", "is not a JSON string known at plan time")]
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        return [SchemaProblem(object_id, "dashboardJson", f"is not JSON: {error}")]
    problems = [
        SchemaProblem(object_id, "dashboardJson." + ".".join(str(p) for p in error.absolute_path), error.message)
        for error in sorted(dashboard_validator().iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    ]
    problems += _layout(object_id, document)
    problems += _legends(object_id, document)
    for path, kind, text in _queries(document):
        problems += _check_metrics(object_id, f"dashboardJson.{path}", kind, text, known, log_metrics, where)
    return problems
