"""The optimizer's use of a published row, on hand-made rows (copies of the shipped vLLM row with one field
changed): when a row speaks for a target (the length tolerance at its boundary), which figures it gives, when
its load misses a limit (at the limit exactly it does not), and the JSON's rounding. Each expectation follows
from the row by hand (rate x input / output, the row's own latencies), not from the roofline's numbers."""

import dataclasses

import pytest

from tests.traffic.test_optimizer import VLLM_ROW, pinned
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, size_for_traffic
from tpu_stacks.traffic.evidence import LENGTH_TOLERANCE, PerReplica
from tpu_stacks.traffic.evidence import from_profile as _from_profile
from tpu_stacks.traffic.model import Workload, choose
from tpu_stacks.traffic.profiles import Profile, ProfilePoint

MODEL = lookup_model("meta-llama/Llama-3.1-8B-Instruct")
SHAPE = slice_shape("v6e", "1x1")
ROW = pinned(VLLM_ROW)  # 1800 in / 128 out, 945.8 output tokens/s, its batch chosen by the KV cache under 512


def judge(row=ROW, **target):
    fields = {"output_tokens_per_second": 1800, "input_tokens": row.input_tokens, "output_tokens": row.output_tokens}
    return evaluate_slice(MODEL, SHAPE, TrafficTarget(**{**fields, **target}), measurements=(row,))


def test_a_row_speaks_for_lengths_up_to_twice_or_half_its_own_and_no_further():
    assert LENGTH_TOLERANCE == 2.0
    assert judge(input_tokens=2 * ROW.input_tokens).basis == "measured"
    assert judge(input_tokens=ROW.input_tokens // 2).basis == "measured"
    assert judge(input_tokens=2 * ROW.input_tokens + 1).basis == "model"
    assert judge(input_tokens=int(2.5 * ROW.input_tokens)).basis == "model"
    assert judge(output_tokens=2 * ROW.output_tokens).basis == "measured"
    assert judge(output_tokens=2 * ROW.output_tokens + 1).basis == "model"


def test_the_measured_rate_brings_its_input_rate_at_the_targets_lengths():
    per = judge().per_replica
    assert per.output_tokens_per_second == 945.8
    assert per.input_tokens_per_second == pytest.approx(945.8 * 1800 / 128)
    longer = judge(input_tokens=3000).per_replica
    assert longer.input_tokens_per_second == pytest.approx(945.8 * 3000 / 128)


def test_a_rows_own_latencies_win_and_a_limit_equal_to_them_is_met():
    row = ROW.model_copy(update={"ntpot_ms": 40.0, "ttft_ms": 900.0})
    at_the_limits = judge(row, ntpot_ms=40, ttft_ms=900)
    assert at_the_limits.basis == "measured"
    assert (at_the_limits.per_replica.ntpot_ms, at_the_limits.per_replica.ttft_ms) == (40.0, 900.0)
    assert at_the_limits.measured_figures == ("output_tokens_per_second", "ntpot_ms", "ttft_ms")
    assert judge(row, ntpot_ms=39.9).basis == "model"  # the measured load misses: a smaller batch, modelled
    assert judge(row, ttft_ms=899).basis == "model"


def test_a_row_at_batch_one_that_misses_the_limit_leaves_no_smaller_batch():
    row = ROW.model_copy(update={"batch": 1, "ntpot_ms": 40.0, "ttft_ms": 900.0})
    ntpot = judge(row, ntpot_ms=20)
    assert (ntpot.meets, ntpot.basis, ntpot.binding_limit) == (False, "measured", "ntpot-target")
    assert "no smaller batch is left" in ntpot.why
    ttft = judge(row, ttft_ms=500)
    assert (ttft.meets, ttft.binding_limit) == (False, "ttft-target")


def test_a_missed_row_is_replaced_by_a_batch_below_its_own():
    row = ROW.model_copy(update={"batch": 64, "ntpot_ms": 400.0})  # a slow row: any limit below it misses
    smaller = judge(row, ntpot_ms=300)
    assert smaller.basis == "model" and "scaled by" in smaller.source
    assert smaller.per_replica.batch is not None and smaller.per_replica.batch < 64


def test_a_row_without_a_batch_cap_runs_as_many_as_the_kv_cache_holds_up_to_256():
    row = ROW.model_copy(update={"batch_cap": None})
    workload = Workload(engine="vllm", input_tokens=1800, output_tokens=128)
    expected = choose(MODEL, SHAPE, workload, ntpot_ms=None, ttft_ms=None, max_batch=256).point.batch
    measured = judge(row)
    assert measured.basis == "measured" and measured.per_replica.batch == expected


def test_the_json_rounds_rates_to_tenths_ntpot_to_hundredths_and_costs_to_four_places():
    per = PerReplica(1234.5678, 2345.6789, 12.34567, 456.789, 8, 1234.5678)
    assert per.as_dict() == {
        "output_tokens_per_second": 1234.6,
        "input_tokens_per_second": 2345.7,
        "ntpot_ms": 12.35,
        "ttft_ms": 456.8,
        "batch": 8,
        "ttft_p99_ms": 1234.6,
    }
    assert PerReplica(None, None, None, None, None).as_dict()["output_tokens_per_second"] is None
    candidate = judge()
    costed = dataclasses.replace(
        candidate, cost_per_million_output_tokens=0.123456, cost_per_million_input_tokens=0.0123456
    ).as_dict()
    assert (costed["cost_per_million_output_tokens"], costed["cost_per_million_input_tokens"]) == (0.1235, 0.0123)


def test_total_chips_are_the_replicas_chips_and_one_replicas_when_none_serve():
    candidate = judge()
    assert candidate.replicas == 2 and candidate.total_chips == 2 * candidate.chips_per_replica == 2
    assert dataclasses.replace(candidate, replicas=None).total_chips == candidate.chips_per_replica


def test_a_priced_slice_that_meets_ranks_before_an_unpriced_one_that_meets():
    """tpu7x has no catalogue price: a price no source gives is never taken as free (v4, uncalibrated for vLLM,
    is flagged and meets nothing)."""
    answer = size_for_traffic(lookup_model("meta-llama/Llama-3.1-8B"), TrafficTarget(output_tokens_per_second=100))
    meeting = [c for c in answer.candidates if c.meets]
    assert {c.generation for c in meeting} >= {"tpu7x", "v6e"} and "v4" not in {c.generation for c in meeting}
    priced = [c.price_per_hour is not None for c in meeting]
    assert priced == sorted(priced, reverse=True)  # every priced one first
    assert answer.choice.price_per_hour is not None


def test_a_missed_row_gives_way_to_the_batch_just_below_it_or_batch_one():
    """The scaled model at the row's batch runs at the row's rate (20 / 945.8 tokens/s: ~21 ms a token), far
    inside 300 ms: so the largest batch left, 19, or for a row at batch 2, batch 1, is the one chosen (20 is
    below the 33 sequences the default 512-token step budget admits, so neither it nor the KV cache binds)."""
    slow = ROW.model_copy(update={"batch": 20, "ntpot_ms": 400.0})
    assert judge(slow, ntpot_ms=300).per_replica.batch == 19
    two = judge(ROW.model_copy(update={"batch": 2, "ntpot_ms": 400.0}), ntpot_ms=300)
    assert (two.meets, two.basis, two.per_replica.batch) == (True, "model", 1)


def test_at_batch_one_a_ttft_exactly_at_its_limit_is_not_the_one_missed():
    row = ROW.model_copy(update={"batch": 1, "ntpot_ms": 40.0, "ttft_ms": 900.0})
    assert judge(row, ntpot_ms=20, ttft_ms=900).binding_limit == "ntpot-target"


def profile(*points):
    return Profile("m", "vLLM", "", "tpu-v6e-slice", "2x4", "ct6e-standard-8t", 8, tuple(points))


def test_a_profile_point_exactly_at_the_limits_is_used_and_the_next_names_what_it_breaks():
    at_limit = ProfilePoint(queries_per_second=2.0, output_tokens_per_second=500.0, ntpot_ms=40.0, ttft_ms=900.0)
    busier = ProfilePoint(queries_per_second=3.0, output_tokens_per_second=700.0, ntpot_ms=60.0, ttft_ms=900.0)
    target = TrafficTarget(output_tokens_per_second=1000, ntpot_ms=40, ttft_ms=900)
    served = _from_profile(profile(at_limit, busier), target, "giq")
    assert served.per_replica.output_tokens_per_second == 500.0
    assert served.limit == "ntpot-target"  # the busier point keeps the TTFT limit (900 <= 900): NTPOT binds
    no_ttft = ProfilePoint(queries_per_second=3.0, output_tokens_per_second=700.0, ntpot_ms=30.0, ttft_ms=None)
    assert _from_profile(profile(at_limit, no_ttft), target, "giq").limit == "ttft-target"  # unmeasured: not kept


def test_priced_candidates_rank_by_price_and_unpriced_ones_by_chips():
    """Hand-made from one candidate: a dearer slice with fewer chips ranks after a cheaper one with more; with no
    price, fewer chips first."""
    one = dataclasses.replace(judge(), replicas=1)
    dear = dataclasses.replace(one, chips_per_replica=8, price_per_hour=10.0)
    cheap = dataclasses.replace(one, chips_per_replica=16, price_per_hour=5.0)
    assert sorted([dear, cheap], key=lambda c: c.rank()) == [cheap, dear]
    small = dataclasses.replace(dear, price_per_hour=None, cost_per_million_output_tokens=None)
    large = dataclasses.replace(cheap, price_per_hour=None, cost_per_million_output_tokens=None)
    assert sorted([large, small], key=lambda c: c.rank()) == [small, large]
    assert sorted([small, dear], key=lambda c: c.rank()) == [dear, small]  # priced first
