"""What a GIQ profile says about itself (traffic/profiles.py): which slice it covers (`matches`), its label in a
figure's source, its generation, and the numbers a saved response may hold (proto3 JSON: a number or a decimal
string, finite, not negative). Hand-made profiles, one field changed at a time, so each rule decides alone."""

from __future__ import annotations

import json

import pytest

from tests.traffic.giq import GIQ_V6E_2X2, giq_profile
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.traffic.profiles import Profile, ProfilePoint, profiles_document, read_profiles

MODEL = lookup_model("meta-llama/Llama-3.1-8B")
V6E_2X2 = slice_shape("v6e", "2x2")  # one ct6e-standard-4t host, 4 chips
POINT = ProfilePoint(queries_per_second=1.0, output_tokens_per_second=500.0, ntpot_ms=30.0, ttft_ms=200.0)


def giq(**fields) -> Profile:
    """A GIQ profile of the v6e 2x2 slice (one ct6e-standard-4t host) measured at POINT, one field changed."""
    return giq_profile(POINT, **{**GIQ_V6E_2X2, **fields})


# --- matches -----------------------------------------------------------------------------------------


def test_a_profile_matches_its_server_in_any_case_its_generation_weights_machine_type_and_topology():
    assert giq().matches(MODEL, V6E_2X2, "vllm") is True
    assert giq(server="VLLM").matches(MODEL, V6E_2X2, "vllm") is True
    assert giq(model="meta-llama/Llama-3.1-8B").matches(MODEL, V6E_2X2, "vllm") is True


def test_another_server_generation_or_model_does_not_match():
    assert giq(server="JetStream").matches(MODEL, V6E_2X2, "vllm") is False
    v5e = giq(accelerator="tpu-v5-lite-podslice", instance="ct5lp-hightpu-4t")
    assert v5e.matches(MODEL, V6E_2X2, "vllm") is False
    assert giq(model="google/gemma-2-9b").matches(MODEL, V6E_2X2, "vllm") is False
    assert giq(model="nobody/uncatalogued-model").matches(MODEL, V6E_2X2, "vllm") is False


def test_a_named_machine_type_must_be_the_slices():
    assert giq(instance="ct6e-standard-8t").matches(MODEL, V6E_2X2, "vllm") is False
    assert giq(instance="").matches(MODEL, V6E_2X2, "vllm") is True  # not named: the accelerator says v6e


def test_a_topology_decides_when_given_else_the_chip_count():
    assert giq(topology="2x4", count=4).matches(MODEL, V6E_2X2, "vllm") is False  # the topology wins over the count
    assert giq(topology="2x2", count=8).matches(MODEL, V6E_2X2, "vllm") is True
    assert giq(topology="", count=4).matches(MODEL, V6E_2X2, "vllm") is True
    assert giq(topology="", count=8).matches(MODEL, V6E_2X2, "vllm") is False
    assert giq(topology="", count=None).matches(MODEL, V6E_2X2, "vllm") is False


# --- label and generation ----------------------------------------------------------------------------


def test_the_label_names_server_version_model_accelerator_and_where():
    assert giq(version="v0.23.0").label == (
        "GIQ profile vLLM v0.23.0 meta-llama/Llama-3.1-8B-Instruct on tpu-v6e-slice 2x2"
    )
    assert giq().label == "GIQ profile vLLM meta-llama/Llama-3.1-8B-Instruct on tpu-v6e-slice 2x2"
    no_topology = giq(topology="")
    assert no_topology.label == "GIQ profile vLLM meta-llama/Llama-3.1-8B-Instruct on tpu-v6e-slice ct6e-standard-4t"
    bare = giq(topology="", instance="")
    assert bare.label == "GIQ profile vLLM meta-llama/Llama-3.1-8B-Instruct on tpu-v6e-slice tpu-v6e-slice"
    nothing = Profile("m", "vLLM", "", "", "", "", None, (POINT,))
    assert nothing.label == "GIQ profile vLLM m on"  # no trailing space


def test_the_generation_comes_from_the_machine_type_the_accelerator_label_or_a_generation_name():
    assert giq().generation_name() == "v6e"
    assert giq(instance="", accelerator="tpu-v6e-slice").generation_name() == "v6e"
    assert giq(instance="", accelerator="trillium").generation_name() == "v6e"  # an alias of the catalogue
    assert giq(instance="", accelerator="nvidia-l4").generation_name() is None  # not a TPU
    # the machine type first: a profile's instance type is what ran it
    assert giq(instance="ct5lp-hightpu-4t", accelerator="tpu-v6e-slice").generation_name() == "v5e"


# --- numbers -----------------------------------------------------------------------------------------


def _read(tmp_path, stats: dict, used: dict | None = None) -> Profile:
    record = {
        "modelServerInfo": {"model": "meta-llama/Llama-3.1-8B-Instruct", "modelServer": "vllm"},
        "acceleratorType": "tpu-v6e-slice",
        "tpuTopology": "2x2",
        "resourcesUsed": used if used is not None else {"acceleratorCount": 4},
        "performanceStats": [stats],
    }
    path = tmp_path / "giq.json"
    path.write_text(json.dumps({"profile": [record]}))
    (profile,) = read_profiles(path)
    return profile


def test_a_number_may_be_a_decimal_string_and_zero_is_a_number(tmp_path):
    (point,) = _read(
        tmp_path, {"outputTokensPerSecond": "900.5", "ntpotMilliseconds": 0, "ttftMilliseconds": "0"}
    ).points
    assert (point.output_tokens_per_second, point.ntpot_ms, point.ttft_ms) == (900.5, 0.0, 0.0)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (True, "is True, not a number"),
        ([1], "is [1], not a number"),
        ("fast", "is 'fast', not a number"),
        ("NaN", "is 'NaN', not a finite number of zero or more"),
        ("Infinity", "is 'Infinity', not a finite number of zero or more"),
        (-1, "is -1, not a finite number of zero or more"),
        (-0.001, "is -0.001, not a finite number of zero or more"),
    ],
)
def test_a_latency_that_is_not_a_finite_number_of_zero_or_more_is_refused_in_one_line(tmp_path, value, problem):
    with pytest.raises(UserError) as caught:
        _read(tmp_path, {"outputTokensPerSecond": 900, "ntpotMilliseconds": value})
    assert f"profile[0].performanceStats[0] {problem}" in str(caught.value)
    assert "--profiles" in str(caught.value)


def test_an_amount_of_whole_units_has_no_nanos(tmp_path):
    cost = {"costPerMillionOutputTokens": {"units": "2"}}
    (point,) = _read(tmp_path, {"outputTokensPerSecond": 900, "cost": [cost]}).points
    assert point.cost_per_million_output_tokens == 2.0


def test_a_cost_that_is_not_an_amount_is_no_cost(tmp_path):
    (point,) = _read(tmp_path, {"outputTokensPerSecond": 900, "cost": [{"costPerMillionOutputTokens": 3}]}).points
    assert point.cost_per_million_output_tokens is None
    (point,) = _read(tmp_path, {"outputTokensPerSecond": 900, "cost": []}).points
    assert point.cost_per_million_output_tokens is None


def test_the_accelerator_count_is_a_whole_number_or_unknown(tmp_path):
    assert _read(tmp_path, {"outputTokensPerSecond": 900}, {"acceleratorCount": "4"}).accelerator_count == 4
    assert _read(tmp_path, {"outputTokensPerSecond": 900}, {}).accelerator_count is None


def test_the_first_cost_entry_is_the_points_cost(tmp_path):
    first, second = ({"costPerMillionOutputTokens": {"units": str(units)}} for units in (2, 7))
    (point,) = _read(tmp_path, {"outputTokensPerSecond": 900, "cost": [first, second]}).points
    assert point.cost_per_million_output_tokens == 2.0


# --- document: what `tpu-stacks bench` saves, read back --------------------------------------------------


def test_a_point_is_written_in_the_protos_json_mapping_with_its_int32_fields_whole():
    point = ProfilePoint(1.23456, 900.4, 30.6, 200.2, cost_per_million_output_tokens=2.25)
    assert point.document() == {
        "queriesPerSecond": 1.235,  # a float: to the thousandth
        "outputTokensPerSecond": 900,
        "ntpotMilliseconds": 31,
        "ttftMilliseconds": 200,
        "cost": [{"costPerMillionOutputTokens": {"units": "2", "nanos": 250000000}}],  # int64 units as a string
    }


def test_fields_a_point_does_not_know_are_left_out():
    assert ProfilePoint(None, 900.0, None, None).document() == {"outputTokensPerSecond": 900}


def test_a_profile_written_by_bench_reads_back_as_itself(tmp_path):
    points = (
        ProfilePoint(1.5, 900.0, 30.0, 200.0, cost_per_million_output_tokens=0.04),
        ProfilePoint(None, 1200.0, None, None),
    )
    counted = Profile("meta-llama/Llama-3.1-8B-Instruct", "vLLM", "v0.23.0", "tpu-v6e-slice", "2x2", "", 4, points)
    uncounted = Profile("m", "JetStream", "", "tpu-v5-lite-podslice", "", "ct5lp-hightpu-4t", None, points[1:])
    assert "resourcesUsed" not in uncounted.document()
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(profiles_document([counted, uncounted])))
    assert read_profiles(path) == (counted, uncounted)
