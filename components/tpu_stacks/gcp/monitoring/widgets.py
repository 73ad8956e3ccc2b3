"""The three widget shapes every dashboard section is drawn with: a chart of PromQL series, a scorecard, a note.

Shared by dashboards.py and the sections of other modules (rayserve.py, each workload's monitoring.py), so a chart
is spelt one way."""

from __future__ import annotations

from tpu_stacks.gcp.monitoring.model import (
    Axis,
    DataSet,
    Scorecard,
    Text,
    Threshold,
    TimeSeriesQuery,
    Widget,
    XyChart,
)


def chart(title: str, *series: tuple[str, str], thresholds: tuple[Threshold, ...] = (), unit: str = "") -> Widget:
    """One line per (PromQL, legend) pair; an empty legend is not sent."""
    data = tuple(
        DataSet(time_series_query=TimeSeriesQuery(prometheus_query=query), legend_template=legend or None)
        for query, legend in series
    )
    return Widget(
        title=title, xy_chart=XyChart(data_sets=data, thresholds=thresholds, y_axis=Axis(label=unit or title))
    )


def scorecard(title: str, query: str, thresholds: tuple[Threshold, ...] = ()) -> Widget:
    return Widget(
        title=title,
        scorecard=Scorecard(time_series_query=TimeSeriesQuery(prometheus_query=query), thresholds=thresholds),
    )


def note(title: str, text: str) -> Widget:
    return Widget(title=title, text=Text(content=text))
