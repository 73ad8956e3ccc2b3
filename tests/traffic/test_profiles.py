"""GIQ profiles in: a FetchProfiles response in the proto's JSON mapping changes the answer where it matches.

The fixture's numbers are invented to show the effect; its shape is the proto's (googleapis/googleapis
google/cloud/gkerecommender/v1/gkerecommender.proto): lowerCamelCase names, int64 `Amount.units` once as a
string and once as a number, and a GPU profile that must be ignored.

Checked against Google's own client when written (2026-11-26): google-cloud-gkerecommender 0.3.2 parses the
fixture strictly (`FetchProfilesResponse.from_json(text, ignore_unknown_fields=False)`, and as a
`FetchBenchmarkingDataResponse`), reading the same values this reader reads, and the snake_case document below
too; its `to_json` writes `Amount.units` as the string "1". That client is not a test dependency: it needs
protobuf >= 6.33.5 and the Pulumi SDKs pin protobuf 5.29.6."""

import json
from pathlib import Path

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import all_slice_shapes, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, read_profiles, size_for_traffic

FIXTURE = Path(__file__).parent / "fixtures" / "giq_fetch_profiles.json"
TARGET = TrafficTarget(output_tokens_per_second=3000, ntpot_ms=40)


def test_reads_every_profile_and_its_operating_points():
    profiles = read_profiles(FIXTURE)
    assert len(profiles) == 2
    tpu = profiles[0]
    assert (tpu.model, tpu.model_server, tpu.model_server_version) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        "vllm",
        "v0.23.0",
    )
    assert (tpu.accelerator_type, tpu.tpu_topology, tpu.instance_type, tpu.accelerator_count) == (
        "tpu-v6e-slice",
        "1x1",
        "ct6e-standard-1t",
        1,
    )
    assert [p.output_tokens_per_second for p in tpu.points] == [1600, 3200, 5100]
    assert [p.cost_per_million_output_tokens for p in tpu.points] == [pytest.approx(0.31), pytest.approx(1.05), None]
    assert tpu.generation_name() == "v6e" and profiles[1].generation_name() is None


def test_a_matching_profile_changes_the_answer():
    model = lookup_model("meta-llama/Llama-3.1-8B")
    without = size_for_traffic(model, TARGET)
    with_profiles = size_for_traffic(model, TARGET, profiles=read_profiles(FIXTURE))
    assert without.choice is not None and with_profiles.choice is not None
    # the roofline's answer: three v6e 1x1 replicas at vLLM's own step budget (the profile's row carries 3,000 on one)
    assert (without.choice.generation, without.choice.topology, without.choice.basis) == ("v6e", "1x1", "model")
    assert without.choice.replicas > 1
    choice = with_profiles.choice
    assert (choice.generation, choice.topology, choice.basis, choice.replicas) == ("v6e", "1x1", "profile", 1)
    # The busiest operating point within NTPOT 40 ms: 3,200 tok/s at 35 ms (5,100 at 62 ms is over the limit).
    assert choice.per_replica.output_tokens_per_second == 3200 and choice.per_replica.ntpot_ms == 35
    # Input throughput derived from QPS x the target's input length: 2.5 x 1,800.
    assert choice.per_replica.input_tokens_per_second == pytest.approx(4500)
    assert choice.price_per_hour < without.choice.price_per_hour
    assert "GIQ profile vllm v0.23.0" in choice.source
    assert choice.measured_figures == ("output_tokens_per_second", "ntpot_ms", "ttft_ms")
    assert choice.binding_limit == "ntpot-target"  # the busier point (5,100 tok/s) is at 62 ms


def test_without_a_latency_limit_the_busiest_profile_point_is_used_and_nothing_binds():
    candidate = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B"),
        slice_shape("v6e", "1x1"),
        TrafficTarget(output_tokens_per_second=10000),
        profiles=read_profiles(FIXTURE),
    )
    assert candidate.per_replica.output_tokens_per_second == 5100 and candidate.replicas == 2
    assert candidate.binding_limit is None


def test_a_profile_covers_only_its_model_server_and_slice():
    profiles = read_profiles(FIXTURE)
    model = lookup_model("meta-llama/Llama-3.1-8B")
    assert evaluate_slice(model, slice_shape("v6e", "1x1"), TARGET, engine="jetstream", profiles=profiles).basis == (
        "model"
    )
    assert evaluate_slice(model, slice_shape("v6e", "2x2"), TARGET, profiles=profiles).basis == "model"
    other_model = lookup_model("google/gemma-2-9b")
    assert evaluate_slice(other_model, slice_shape("v6e", "1x1"), TARGET, profiles=profiles).basis != "profile"


def test_no_qps_means_no_input_throughput_and_cost_on_output_alone(tmp_path):
    document = json.loads(FIXTURE.read_text())
    for point in document["profile"][0]["performanceStats"]:
        del point["queriesPerSecond"]
    path = tmp_path / "no-qps.json"
    path.write_text(json.dumps(document))
    candidate = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B"), slice_shape("v6e", "1x1"), TARGET, profiles=read_profiles(path)
    )
    assert candidate.basis == "profile" and candidate.per_replica.input_tokens_per_second is None
    # $2.70/hour over 3,200 output tokens/s alone.
    assert candidate.cost_per_million_output_tokens == pytest.approx(2.70 / 3600 / 3200 * 1e6)


def test_a_profile_whose_points_all_miss_the_limit_fails_the_candidate():
    candidate = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B"),
        slice_shape("v6e", "1x1"),
        TrafficTarget(output_tokens_per_second=3000, ntpot_ms=10),
        profiles=read_profiles(FIXTURE),
    )
    assert not candidate.meets and candidate.basis == "profile" and "GIQ profile meets" in candidate.why


def test_snake_case_names_and_numeric_int64_are_read_too(tmp_path):
    path = tmp_path / "snake.json"
    path.write_text(
        json.dumps(
            {
                "profile": [
                    {
                        "model_server_info": {"model": "meta-llama/Llama-3.1-8B-Instruct", "model_server": "vllm"},
                        "accelerator_type": "tpu-v6e-slice",
                        "tpu_topology": "2x2",
                        "resources_used": {"accelerator_count": "4"},
                        "performance_stats": [
                            {
                                "output_tokens_per_second": 9000,
                                "ntpot_milliseconds": 30,
                                "cost": [{"cost_per_million_output_tokens": {"units": 2, "nanos": 0}}],
                            }
                        ],
                    }
                ]
            }
        )
    )
    (profile,) = read_profiles(path)
    assert (profile.tpu_topology, profile.accelerator_count, profile.points[0].cost_per_million_output_tokens) == (
        "2x2",
        4,
        2.0,
    )


BAD = {
    "not-json.json": "{ profile: oops",
    # proto3 JSON writes NaN and Infinity as strings; neither is a throughput, nor is a negative latency
    "nan.json": json.dumps(
        {"profile": [{"modelServerInfo": {"model": "m"}, "performanceStats": [{"outputTokensPerSecond": "NaN"}]}]}
    ),
    "negative-latency.json": json.dumps(
        {
            "profile": [
                {
                    "modelServerInfo": {"model": "m"},
                    "performanceStats": [{"outputTokensPerSecond": 100, "ntpotMilliseconds": -5}],
                }
            ]
        }
    ),
    "no-list.json": json.dumps({"profiles": []}),
    "no-model.json": json.dumps({"profile": [{"modelServerInfo": {}, "performanceStats": [{}]}]}),
    "no-stats.json": json.dumps({"profile": [{"modelServerInfo": {"model": "m"}, "performanceStats": []}]}),
    "bad-number.json": json.dumps(
        {"profile": [{"modelServerInfo": {"model": "m"}, "performanceStats": [{"outputTokensPerSecond": "fast"}]}]}
    ),
    "bad-units.json": json.dumps(
        {
            "profile": [
                {
                    "modelServerInfo": {"model": "m"},
                    "performanceStats": [
                        {"outputTokensPerSecond": 1, "cost": [{"costPerMillionOutputTokens": {"units": "one"}}]}
                    ],
                }
            ]
        }
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_file_is_one_line_naming_the_flag(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)  # a short relative path: a long one is elided in the line (errors.shorten)
    path = Path(name)
    path.write_text(BAD[name])
    with pytest.raises(UserError) as caught:
        read_profiles(path)
    message = str(caught.value)
    assert message.startswith(f"--profiles: '{path}'") and "\n" not in message and "[GIQ]" in message


def test_a_missing_file_is_one_line():
    with pytest.raises(UserError, match=r"^--profiles: '/nonexistent/giq.json' cannot be read"):
        read_profiles("/nonexistent/giq.json")


def test_a_profile_point_that_breaks_the_ttft_limit_is_not_used():
    """TTFT 200 ms: only the 1,600 tok/s point (180 ms) keeps it; 3,200 (300 ms) and 5,100 (900 ms) break it, and
    the nearest busier point's TTFT is what binds."""
    candidate = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B"),
        slice_shape("v6e", "1x1"),
        TrafficTarget(output_tokens_per_second=3200, ttft_ms=200),
        profiles=read_profiles(FIXTURE),
    )
    per = candidate.per_replica
    assert candidate.basis == "profile" and (per.output_tokens_per_second, per.ttft_ms) == (1600, 180)
    assert candidate.replicas == 2 and candidate.binding_limit == "ttft-target"
    # A limit no point keeps fails the candidate, naming the TTFT limit.
    strict = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B"),
        slice_shape("v6e", "1x1"),
        TrafficTarget(output_tokens_per_second=3200, ttft_ms=100),
        profiles=read_profiles(FIXTURE),
    )
    assert not strict.meets and strict.binding_limit == "ttft-target" and "GIQ profile meets" in strict.why


def test_a_modelled_sibling_never_meets_what_a_profile_measured_failing(tmp_path):
    """The issue's case: a GIQ profile of v5e 2x4 on ct5lp-hightpu-8t measured NTPOT 80 ms at its lightest load;
    the same slice on two ct5lp-hightpu-4t hosts is modelled, and must not say it meets 40 ms."""
    failing = {
        "profile": [
            {
                "modelServerInfo": {"model": "meta-llama/Llama-3.1-8B-Instruct", "modelServer": "vllm"},
                "acceleratorType": "tpu-v5-lite-podslice",
                "tpuTopology": "2x4",
                "instanceType": "ct5lp-hightpu-8t",
                "resourcesUsed": {"acceleratorCount": 8},
                "performanceStats": [{"queriesPerSecond": 1, "outputTokensPerSecond": 500, "ntpotMilliseconds": 80}],
            }
        ]
    }
    path = tmp_path / "giq.json"
    path.write_text(json.dumps(failing))
    profiles = read_profiles(path)
    model = lookup_model("meta-llama/Llama-3.1-8B")
    siblings = [s for s in all_slice_shapes("v5e") if s.topology == "2x4"]
    two_hosts = next(s for s in siblings if s.machine_type != "ct5lp-hightpu-8t")
    assert evaluate_slice(model, two_hosts, TARGET).meets  # the model alone would claim it
    refuted = evaluate_slice(model, two_hosts, TARGET, profiles=profiles)
    assert not refuted.meets and refuted.basis == "profile" and "measured no operating point" in refuted.why
    answer = size_for_traffic(model, TARGET, profiles=profiles)
    assert all(c.meets is False for c in answer.candidates if (c.generation, c.topology) == ("v5e", "2x4"))
