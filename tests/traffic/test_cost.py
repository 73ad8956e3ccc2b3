"""GIQ's cost per million tokens and the prices behind it: known numbers, unknown prices never free."""

import pytest

from tpu_stacks.catalog.capacity import pricing_model_price
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS
from tpu_stacks.catalog.tpu import GENERATIONS, slice_shape
from tpu_stacks.catalog.tpu import generation as tpu_generation
from tpu_stacks.traffic import TrafficTarget, evaluate_slice, size_for_traffic
from tpu_stacks.traffic.model import attention_flops, calibration
from tpu_stacks.traffic.pricing import cost_per_million, hourly_price

VLLM_ROW = next(row for row in MEASUREMENTS if row.engine == "vllm")
"""The published vLLM row (Llama 3 8B, v6e 1x1, 1,800 in / 128 out, 945.80 output tok/s)."""


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


def test_input_throughput_and_input_cost_follow_the_model_by_hand():
    """Every request brings `input_tokens` for its `output_tokens`, so a replica takes in output rate x I / O tokens a
    second; GIQ's cost then weighs them at 1/4 of an output token and prices an input token at 1/4 of an output
    token. Llama 3.1 8B on one v6e chip, 1,800 in / 128 out, capped at 8 sequences (the modelled basis), by hand."""
    model = lookup_model("meta-llama/Llama-3.1-8B")
    shape = slice_shape("v6e", "1x1")
    target = TrafficTarget(output_tokens_per_second=1000, input_tokens=1800, output_tokens=128)
    candidate = evaluate_slice(model, shape, target, max_batch=8)
    assert (candidate.basis, candidate.per_replica.batch) == ("model", 8)
    # the roofline at batch 8 (tpu_stacks.traffic.model): decode is the bytes read, prefill chunks the FLOPs
    v6e = tpu_generation("v6e")
    fit = calibration("vllm", "v6e")[0]
    bandwidth = v6e.hbm_bandwidth_bytes_per_s
    compute = v6e.peak_bf16_flops * fit.compute
    weights = model.params * 2
    kv_per_token = 2 * 2 * 128 * 8 * 32  # K and V, bf16, head_dim 128, 8 KV heads, 32 layers
    active = model.architecture.active_params
    # a step: 8 decode tokens and 8 x 1800 / 128 = 112.5 prompt tokens (within one 512-token step) through the
    # linear layers, which read the weights once; then 8 sequences' KV reads; then the prompt tokens' attention
    linear = weights / (bandwidth * fit.weights)
    assert linear > 2 * active * (8 + 112.5) / compute  # bandwidth-bound at 8 sequences
    kv = 8 * kv_per_token * (1800 + 64) / (bandwidth * fit.kv)
    step = linear + kv + 8 / 128 * attention_flops(model, 1800) / compute
    output_rate = 8 / step
    input_rate = output_rate * 1800 / 128
    per = candidate.per_replica
    assert per.output_tokens_per_second == pytest.approx(output_rate, rel=1e-9)
    assert per.input_tokens_per_second == pytest.approx(input_rate, rel=1e-9)
    # GIQ's Cost: $/s over (output + input / 4) tokens/s; $/input token = $/output token / 4
    usd_per_second = hourly_price("v6e", 1, "on-demand").usd_per_hour / 3600
    per_output = usd_per_second / (output_rate + input_rate / 4)
    assert candidate.cost_per_million_output_tokens == pytest.approx(per_output * 1e6, rel=1e-9)
    assert candidate.cost_per_million_input_tokens == pytest.approx(per_output / 4 * 1e6, rel=1e-9)
    # A measured row gives the output rate; the input rate is derived the same way (945.80 tok/s x 1,800 / 128).
    measured = evaluate_slice(
        lookup_model("meta-llama/Llama-3.1-8B-Instruct"),
        shape,
        target,
        measurements=(VLLM_ROW.model_copy(update={"engine_version": VLLM.version}),),
    )
    assert measured.basis == "measured" and measured.per_replica.output_tokens_per_second == 945.80
    assert measured.per_replica.input_tokens_per_second == pytest.approx(945.80 * 1800 / 128)
    measured_per_output = usd_per_second / (945.80 + 945.80 * 1800 / 128 / 4)
    assert measured.cost_per_million_input_tokens == pytest.approx(measured_per_output / 4 * 1e6)
