"""GIQ's cost per million tokens and the prices behind it: known numbers, unknown prices never free."""

import pytest

from tpu_stacks.catalog.capacity import pricing_model_price
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import GENERATIONS, slice_shape
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, size_for_traffic
from tpu_stacks.traffic.pricing import cost_per_million, hourly_price


def test_cost_formula_matches_the_proto_definition_by_hand():
    # $10.80/hour = $0.003/s; 1,000 output + 4,000 input tok/s weigh 1,000 + 4,000/4 = 2,000 tokens/s.
    cost = cost_per_million(10.80, output_tokens_per_second=1000, input_tokens_per_second=4000)
    assert cost.per_million_output == pytest.approx(1.5)
    assert cost.per_million_input == pytest.approx(0.375)  # $/output token / 4


def test_cost_without_input_throughput_falls_on_output_tokens_alone():
    cost = cost_per_million(10.80, output_tokens_per_second=1000, input_tokens_per_second=None)
    assert cost.per_million_output == pytest.approx(3.0)
    assert cost.per_million_input == pytest.approx(0.75)


def test_a_ratio_other_than_four_changes_the_split():
    cost = cost_per_million(3.6, output_tokens_per_second=100, input_tokens_per_second=100, ratio=1.0)
    assert cost.per_million_output == pytest.approx(1e6 * 0.001 / 200)
    assert cost.per_million_input == pytest.approx(cost.per_million_output)


def test_pricing_models_map_to_sourced_prices_or_unknown():
    on_demand = pricing_model_price("v6e", "on-demand")
    assert (on_demand.usd_per_chip_hour, on_demand.as_of) == (2.70, "2024-12") and on_demand.source
    one_year = pricing_model_price("v6e", "1-year-cud")
    assert one_year.usd_per_chip_hour == 1.89 and "CUD" in one_year.source
    for generation in GENERATIONS:
        for pricing in ("spot", "3-years-cud"):
            assert pricing_model_price(generation.name, pricing).usd_per_chip_hour is None
    assert hourly_price("v6e", 8, "on-demand").usd_per_hour == pytest.approx(21.6)
    assert hourly_price("tpu7x", 8, "on-demand").usd_per_hour is None


def test_an_unknown_price_is_never_free_and_ranks_after_every_priced_candidate():
    model = lookup_model("meta-llama/Llama-3.1-8B")
    target = TrafficTarget(output_tokens_per_second=2000, ntpot_ms=60)
    unknown = evaluate_slice(model, slice_shape("tpu7x", "2x2x1"), target)
    assert unknown.meets and unknown.price_per_hour is None
    assert unknown.cost_per_million_output_tokens is None and unknown.cost_per_million_input_tokens is None
    answer = size_for_traffic(model, target)
    meeting = [c for c in answer.candidates if c.meets]
    priced = [c.price_per_hour is not None for c in meeting]
    assert priced == sorted(priced, reverse=True) and any(priced) and not all(priced)
    unknowns = [c.total_chips for c in meeting if c.price_per_hour is None]
    assert unknowns == sorted(unknowns)  # among unknowns, fewer chips first
    assert answer.choice is not None and answer.choice.price_per_hour is not None


def test_spot_prices_are_unknown_everywhere_so_the_choice_is_the_fewest_chips():
    model = lookup_model("meta-llama/Llama-3.1-8B")
    answer = size_for_traffic(model, TrafficTarget(output_tokens_per_second=2000, ntpot_ms=60, pricing="spot"))
    assert answer.choice is not None and answer.choice.price_per_hour is None
    fewest = min(c.total_chips for c in answer.candidates if c.meets)
    assert answer.choice.total_chips == fewest


def test_one_year_cud_prices_only_the_generation_with_a_commitment_price():
    model = lookup_model("meta-llama/Llama-3.1-8B")
    answer = size_for_traffic(model, TrafficTarget(output_tokens_per_second=2000, pricing="1-year-cud"))
    assert answer.choice is not None and answer.choice.generation == "v6e"
    assert answer.choice.price_per_hour == pytest.approx(1.89 * answer.choice.total_chips)
    assert {c.generation for c in answer.candidates if c.price_per_hour is not None} == {"v6e"}
