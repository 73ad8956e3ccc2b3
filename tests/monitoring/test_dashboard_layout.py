"""gcp/monitoring/model.py's layout and widget reads, on a hand-made dashboard: Cloud Monitoring's mosaic layout is a
grid of 48 columns (MosaicLayout.columns, the API's maximum,
cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards#mosaiclayout); each section is a full-width header
4 high, then its widgets two to a row, 24 wide and 16 high (the module's layout rule), top to bottom."""

from __future__ import annotations

from tpu_stacks.gcp.monitoring.model import (
    Dashboard,
    DataSet,
    Scorecard,
    Section,
    Text,
    Threshold,
    TimeSeriesQuery,
    Widget,
    XyChart,
)

Q1, Q2 = TimeSeriesQuery(prometheus_query="up"), TimeSeriesQuery(prometheus_query="down")
LIMIT = Threshold(value=0.9, label="limit")
CHART = Widget(title="chart", xy_chart=XyChart(data_sets=(DataSet(Q1), DataSet(Q2)), thresholds=(LIMIT,)))
CARD = Widget(title="card", scorecard=Scorecard(time_series_query=Q1, thresholds=(LIMIT,)))
NOTE = Widget(title="note", text=Text(content="read me"))


def test_sections_are_a_header_then_widgets_two_to_a_row():
    dashboard = Dashboard("d", (Section("A", (CHART, CARD, NOTE)), Section("B", (NOTE,))))
    placed = [(t.widget.title, t.x_pos, t.y_pos, t.width, t.height) for t in dashboard.tiles()]
    assert placed == [
        ("A", 0, 0, 48, 4),
        ("chart", 0, 4, 24, 16),
        ("card", 24, 4, 24, 16),
        ("note", 0, 20, 24, 16),  # the odd widget starts a second row
        ("B", 0, 36, 48, 4),  # after two rows: 4 + 2 x 16
        ("note", 0, 40, 24, 16),
    ]


def test_an_even_section_takes_exactly_its_rows():
    dashboard = Dashboard("d", (Section("A", (CHART, CARD)), Section("B", ()), Section("C", (NOTE,))))
    assert [(t.widget.title, t.y_pos) for t in dashboard.tiles() if t.widget.section_header] == [
        ("A", 0),
        ("B", 20),
        ("C", 24),  # an empty section is its header alone
    ]


def test_a_widgets_queries_and_thresholds_by_kind():
    assert CHART.queries == (Q1, Q2) and CHART.thresholds == (LIMIT,)
    assert CARD.queries == (Q1,) and CARD.thresholds == (LIMIT,)
    assert NOTE.queries == () and NOTE.thresholds == ()
