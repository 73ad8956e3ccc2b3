"""Read-back: what every shipped stack sends to Cloud Monitoring is what the API answers, so a second `up`
has nothing to update.

The model here is not the serialiser's. It is written from two outside sources:
- the proto3 JSON mapping (https://protobuf.dev/programming-guides/json/): a field holding its default
  value (0, "", false, an empty list or map, an enum's zero value) is omitted from the output, except a
  member of a `oneof`, which has presence; a set message is written even when empty (`{}`); a double is a
  JSON number, so `10.0` reads back as `10`. The enum zero values are the dashboard protos' own
  (google/monitoring/dashboard/v1/*.proto: `*_UNSPECIFIED`; google/monitoring/v3/common.proto:
  Aligner `ALIGN_NONE = 0`, Reducer `REDUCE_NONE = 0`).
- the provider's comparison of the stored answer with the input (terraform-provider-google
  google/services/monitoring/resource_monitoring_dashboard.go, `monitoringDashboardDiffSuppress`): keys
  the *input* lacks are removed from the answer (`removeComputedKeys`: `name`, `etag`, server defaults),
  then the two must be deeply equal. A key the input sends and the answer lacks is a diff at every `up`
  (terraform-provider-google#16173, #7242: `xPos: 0`, `yPos: 0`, `subtitle: ""`, a threshold at 0).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tpu_stacks.gcp.monitoring.model import Dashboard, Section, SectionHeader, Threshold, Widget, XyChart

from .conftest import STACKS
from .test_stacks import ALERT, DASHBOARD, of_type

ONEOF_SCALARS = frozenset({"prometheusQuery", "timeSeriesQueryLanguage"})
"""Scalar members of a oneof in the Dashboard message tree (TimeSeriesQuery's `source`): kept even when
empty, as proto3 gives oneof members presence."""
MAP_FIELDS = frozenset({"labels"})
"""`map<string, string>` fields (Dashboard.labels): proto3 writes every entry, an empty value included."""
ENUM_ZEROS = frozenset({"ALIGN_NONE", "REDUCE_NONE"})
DURATION = re.compile(r"^(0|[1-9]\d*)(\.\d{3}|\.\d{6}|\.\d{9})?s$")
"""google.protobuf.Duration in JSON: seconds with 0, 3, 6 or 9 fractional digits and an `s`."""


def _is_default(key: str, value: Any) -> bool:
    if key in ONEOF_SCALARS:
        return False
    if isinstance(value, bool):
        return value is False
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, str):
        return value == "" or value in ENUM_ZEROS or value.endswith("_UNSPECIFIED")
    if isinstance(value, list):
        return not value
    if key in MAP_FIELDS:
        return not value  # an empty map is not written; a non-empty one is written whole
    return False  # a message, even `{}`, is written when set


def api_answer(document: Any) -> Any:
    """The document as the Monitoring API writes it back, by the proto3 JSON mapping."""
    if isinstance(document, dict):
        return {k: v if k in MAP_FIELDS else api_answer(v) for k, v in document.items() if not _is_default(k, v)}
    if isinstance(document, list):
        return [api_answer(item) for item in document]
    if isinstance(document, float) and document.is_integer():
        return int(document)
    return document


def _without_keys_input_lacks(answer: Any, sent: Any) -> Any:
    """The provider's `removeComputedKeys`: drop what the answer has and the input does not."""
    if isinstance(answer, dict) and isinstance(sent, dict):
        return {k: _without_keys_input_lacks(v, sent[k]) for k, v in answer.items() if k in sent}
    if isinstance(answer, list) and isinstance(sent, list):
        return [_without_keys_input_lacks(a, s) if i < len(sent) else a for i, (a, s) in enumerate(zip(answer, sent))]
    return answer


def provider_sees_a_change(sent_json: str) -> bool:
    sent = json.loads(sent_json)
    answer = {**api_answer(sent), "name": "projects/p/dashboards/1", "etag": "e"}  # the server adds these
    return _without_keys_input_lacks(answer, sent) != sent


def _serialised(document: Any) -> str:
    return json.dumps(document, sort_keys=True)


# -- the model itself: it fails on what the tracker reports and passes what the API keeps --------------


@pytest.mark.parametrize(
    "tile",
    [
        {"xPos": 0, "yPos": 4, "width": 24, "height": 16, "widget": {"title": "a", "sectionHeader": {}}},
        {"yPos": 4, "width": 24, "height": 16, "widget": {"title": "a", "sectionHeader": {"subtitle": ""}}},
        {
            "yPos": 4,
            "width": 24,
            "height": 16,
            "widget": {"title": "a", "text": {"content": "x", "format": "FORMAT_UNSPECIFIED"}},
        },
        {
            "yPos": 4,
            "width": 24,
            "height": 16,
            "widget": {"title": "a", "xyChart": {"dataSets": [], "thresholds": [{"value": 0.0, "label": "z"}]}},
        },
        {"yPos": 4, "width": 24, "height": 16, "widget": {"title": "a", "sectionHeader": {"dividerBelow": False}}},
    ],
)
def test_the_model_sees_a_change_where_the_api_drops_a_default(tile):
    assert provider_sees_a_change(_serialised({"displayName": "d", "mosaicLayout": {"columns": 48, "tiles": [tile]}}))


def test_the_model_keeps_what_the_api_writes_back():
    kept = {
        "displayName": "d",
        "mosaicLayout": {
            "columns": 48,
            "tiles": [
                {"width": 48, "height": 4, "widget": {"title": "h", "sectionHeader": {}}},  # empty message kept
                {
                    "yPos": 4,
                    "width": 24,
                    "height": 16,
                    "widget": {"title": "q", "scorecard": {"timeSeriesQuery": {"prometheusQuery": "up"}}},
                },
            ],
        },
    }
    assert not provider_sees_a_change(_serialised(kept))
    assert api_answer({"value": 10.0}) == {"value": 10} and json.dumps(api_answer({"value": 10.0})) == '{"value": 10}'


# -- the serialiser against it ----------------------------------------------------------------------


def test_defaults_are_not_sent_by_the_serialiser():
    """A header at the top-left with no subtitle, a threshold at 0 and a whole-number double: the cases
    the tracker reports, serialised as the API answers them."""
    board = Dashboard(
        display_name="d",
        sections=(
            Section(
                title="s",
                widgets=(
                    Widget(title="w", xy_chart=XyChart(data_sets=(), thresholds=(Threshold(value=0, label="zero"),))),
                    Widget(title="v", xy_chart=XyChart(data_sets=(), thresholds=(Threshold(value=10.0, label="ten"),))),
                ),
            ),
        ),
    )
    document = json.loads(board.to_json())
    header, zero, ten = document["mosaicLayout"]["tiles"]
    assert header["widget"]["sectionHeader"] == {"dividerBelow": True} and "xPos" not in header and "yPos" not in header
    assert zero["widget"]["xyChart"]["thresholds"] == [{"color": "RED", "direction": "ABOVE", "label": "zero"}]
    assert '"value":10}' in board.to_json()
    assert not provider_sees_a_change(board.to_json())
    bare = Widget(title="h", section_header=SectionHeader(subtitle="", divider_below=False))
    assert json.loads(Dashboard("d", (Section("s", (bare,)),)).to_json())["mosaicLayout"]["tiles"][1]["widget"] == {
        "title": "h",
        "sectionHeader": {},
    }


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "cluster"])
def test_every_shipped_dashboard_reads_back_unchanged(planned, stack):
    (board,) = of_type(planned[stack], DASHBOARD)
    sent = board.inputs["dashboardJson"]
    assert json.loads(sent) == api_answer(json.loads(sent)), "a default value is sent; the API drops it"
    assert not provider_sees_a_change(sent)


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "cluster"])
def test_every_shipped_alert_policy_sends_canonical_durations(planned, stack):
    """The provider stores an alert policy's durations as the API writes them (flatten*Duration returns the
    answer as is), and the API writes google.protobuf.Duration canonically: `300s`, never `5m` or `300.0s`."""
    for policy in of_type(planned[stack], ALERT):
        for condition in policy.inputs["conditions"]:
            promql = condition["conditionPrometheusQueryLanguage"]
            for key in ("duration", "evaluationInterval"):
                assert DURATION.match(promql[key]) and promql[key] != "0s", (stack, key, promql[key])
        assert policy.inputs.get("notificationChannels") != []  # an empty list is not written back either
