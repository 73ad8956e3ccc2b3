"""The Cloud Monitoring dashboard as typed dataclasses, serialised the way the API spells it.

Fields and enums follow the Monitoring API v1 `projects.dashboards` resource
(https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards): a Dashboard with a
`mosaicLayout` of tiles on a 48-column grid, each tile a Widget (`xyChart`, `scorecard`, `text`,
`sectionHeader`) whose data sets are `timeSeriesQuery`s holding a `prometheusQuery` (PromQL) or a
`timeSeriesFilter`. `to_json` drops unset fields and sorts keys: one input, one byte string, so a
plan diff shows only real changes. The offline plan validates the JSON against a schema written
from the same page (tools/preview dashboard_schema.json).

Read-back: the API answers with the proto3 JSON mapping, which omits a field holding its default value
(0, "", false, an empty list; https://protobuf.dev/programming-guides/json/), so a tile at `xPos: 0`,
a threshold at `value: 0` or a `subtitle: ""` comes back without the key. The provider compares the
stored answer with the input after removing only the keys the *input* lacks (terraform-provider-google
google/services/monitoring/resource_monitoring_dashboard.go, `removeComputedKeys` then
`reflect.DeepEqual`): a key sent with a default value is a diff at every `up` (terraform-provider-google
#16173, #7242). So defaults are never sent, and a whole number is written as one (`10`, not `10.0`, as the
API writes a double). tests/monitoring/test_read_back.py holds every shipped dashboard against the mapping.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

COLUMNS = 48  # a mosaic layout's grid width (MosaicLayout.columns; 48 is the API's maximum)

PlotType = Literal["LINE", "STACKED_AREA", "STACKED_BAR", "HEATMAP"]
Color = Literal["YELLOW", "RED", "BLUE", "GREEN"]
Direction = Literal["ABOVE", "BELOW"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _omitted(item: Any) -> bool:
    """Unset, or a proto3 default the API would not send back: None, empty, 0, "" or false. A message is
    never omitted for being empty (`sectionHeader: {}` is how a header with no subtitle says it is one)."""
    if item is None or item == () or item == {}:
        return True
    return isinstance(item, (bool, int, float, str)) and not item


def _plain(value: Any) -> Any:
    if is_dataclass(value):
        out = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if _omitted(item):
                continue
            out[_camel(f.name)] = _plain(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the API writes a whole double as `10`
    return value


@dataclass(frozen=True)
class Aggregation:
    alignment_period: str = "60s"
    per_series_aligner: str = "ALIGN_MEAN"
    cross_series_reducer: str | None = None
    group_by_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class TimeSeriesFilter:
    filter: str
    aggregation: Aggregation = field(default_factory=Aggregation)


@dataclass(frozen=True)
class TimeSeriesQuery:
    """Exactly one of `prometheus_query` and `time_series_filter` (the API's oneof)."""

    prometheus_query: str | None = None
    time_series_filter: TimeSeriesFilter | None = None
    unit_override: str | None = None

    def __post_init__(self) -> None:
        if (self.prometheus_query is None) == (self.time_series_filter is None):
            raise ValueError("a TimeSeriesQuery holds exactly one of prometheus_query and time_series_filter")


@dataclass(frozen=True)
class DataSet:
    time_series_query: TimeSeriesQuery
    plot_type: PlotType = "LINE"
    legend_template: str | None = None
    target_axis: Literal["Y1", "Y2"] = "Y1"


@dataclass(frozen=True)
class Threshold:
    value: float
    label: str
    color: Color = "RED"
    direction: Direction = "ABOVE"
    target_axis: Literal["Y1", "Y2"] | None = None


@dataclass(frozen=True)
class Axis:
    label: str
    scale: Literal["LINEAR", "LOG10"] = "LINEAR"


@dataclass(frozen=True)
class XyChart:
    data_sets: tuple[DataSet, ...]
    thresholds: tuple[Threshold, ...] = ()
    y_axis: Axis | None = None


@dataclass(frozen=True)
class SparkChartView:
    spark_chart_type: Literal["SPARK_LINE", "SPARK_BAR"] = "SPARK_LINE"


@dataclass(frozen=True)
class Scorecard:
    time_series_query: TimeSeriesQuery
    thresholds: tuple[Threshold, ...] = ()
    spark_chart_view: SparkChartView | None = field(default_factory=SparkChartView)


@dataclass(frozen=True)
class Text:
    content: str
    format: Literal["MARKDOWN", "RAW"] = "MARKDOWN"


@dataclass(frozen=True)
class SectionHeader:
    subtitle: str = ""
    divider_below: bool = True


@dataclass(frozen=True)
class Widget:
    """One of xy_chart, scorecard, text, section_header (the API's `content` oneof)."""

    title: str
    xy_chart: XyChart | None = None
    scorecard: Scorecard | None = None
    text: Text | None = None
    section_header: SectionHeader | None = None

    def __post_init__(self) -> None:
        kinds = [k for k in (self.xy_chart, self.scorecard, self.text, self.section_header) if k is not None]
        if len(kinds) != 1:
            raise ValueError(f"widget {self.title!r} must hold exactly one content, not {len(kinds)}")

    @property
    def queries(self) -> tuple[TimeSeriesQuery, ...]:
        if self.xy_chart:
            return tuple(d.time_series_query for d in self.xy_chart.data_sets)
        if self.scorecard:
            return (self.scorecard.time_series_query,)
        return ()

    @property
    def thresholds(self) -> tuple[Threshold, ...]:
        if self.xy_chart:
            return self.xy_chart.thresholds
        if self.scorecard:
            return self.scorecard.thresholds
        return ()


@dataclass(frozen=True)
class Tile:
    x_pos: int
    y_pos: int
    width: int
    height: int
    widget: Widget


@dataclass(frozen=True)
class Section:
    """A titled group of widgets; the layout puts a header, then the widgets two to a row."""

    title: str
    widgets: tuple[Widget, ...]
    subtitle: str = ""


@dataclass(frozen=True)
class Dashboard:
    display_name: str
    sections: tuple[Section, ...]
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def widgets(self) -> tuple[Widget, ...]:
        return tuple(w for s in self.sections for w in s.widgets)

    def tiles(self) -> tuple[Tile, ...]:
        """Header (full width, 4 high), then the section's widgets in rows of two (24 x 16), top to bottom."""
        tiles: list[Tile] = []
        y = 0
        half = COLUMNS // 2
        for section in self.sections:
            header = Widget(title=section.title, section_header=SectionHeader(subtitle=section.subtitle))
            tiles.append(Tile(x_pos=0, y_pos=y, width=COLUMNS, height=4, widget=header))
            y += 4
            for index, widget in enumerate(section.widgets):
                tiles.append(
                    Tile(x_pos=(index % 2) * half, y_pos=y + (index // 2) * 16, width=half, height=16, widget=widget)
                )
            y += ((len(section.widgets) + 1) // 2) * 16
        return tuple(tiles)

    def document(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "displayName": self.display_name,
            "mosaicLayout": {"columns": COLUMNS, "tiles": _plain(self.tiles())},
        }
        if self.labels:
            body["labels"] = dict(self.labels)
        return body

    def to_json(self) -> str:
        """The `dashboard_json` input: compact, keys sorted (deterministic)."""
        return json.dumps(self.document(), sort_keys=True, separators=(",", ":"))
