"""How a GIQ profile's operating points are read (traffic/profiles.py): the proto's Amount in dollars, a fractional
throughput kept, a point without a positive output refused in one line. The message format is the proto3 JSON
mapping of FetchProfiles' response (https://cloud.google.com/kubernetes-engine/docs/how-to/machine-learning/inference/
inference-quickstart)."""

import json

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.traffic import read_profiles


def _one_point(tmp_path, stats: dict):
    path = tmp_path / "giq.json"
    record = {
        "modelServerInfo": {"model": "meta-llama/Llama-3.1-8B-Instruct", "modelServer": "vllm"},
        "acceleratorType": "tpu-v6e-slice",
        "tpuTopology": "2x2",
        "resourcesUsed": {"acceleratorCount": 4},
        "performanceStats": [stats],
    }
    path.write_text(json.dumps({"profile": [record]}))
    (profile,) = read_profiles(path)
    (point,) = profile.points
    return point


def test_an_amount_is_its_units_plus_its_nanos_in_dollars(tmp_path):
    """google.type.Money-like Amount: units (int64, written as a string) plus nanos, billionths of a unit."""
    cost = {"costPerMillionOutputTokens": {"units": "2", "nanos": 250000000}}
    assert _one_point(tmp_path, {"outputTokensPerSecond": 900, "cost": [cost]}).cost_per_million_output_tokens == 2.25
    only_nanos = {"costPerMillionOutputTokens": {"nanos": 40000000}}  # 0.04: proto3 JSON leaves out zero units
    assert _one_point(
        tmp_path, {"outputTokensPerSecond": 900, "cost": [only_nanos]}
    ).cost_per_million_output_tokens == (pytest.approx(0.04))


def test_a_fractional_output_rate_is_a_rate(tmp_path):
    assert _one_point(tmp_path, {"outputTokensPerSecond": 0.5}).output_tokens_per_second == 0.5


@pytest.mark.parametrize("stats", [{}, {"outputTokensPerSecond": 0}], ids=["missing", "zero"])
def test_a_point_without_a_positive_output_is_refused_in_one_line(tmp_path, stats):
    with pytest.raises(UserError) as caught:
        _one_point(tmp_path, stats)
    assert "profile[0].performanceStats[0] has no positive outputTokensPerSecond" in str(caught.value)
