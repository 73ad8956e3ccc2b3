"""Prices per pricing model and GIQ's cost per million tokens.

The price of a chip-hour comes from the capacity catalogue (tpu_stacks.catalog.capacity), with its source
and date; a price no source gives stays unknown (None) and is never treated as free. The cost per token
follows GKE Inference Quickstart's definition ([GIQ], message `Cost`):
"$/output token = GPU $/s / (1/output-to-input-cost-ratio * input tokens/s + output tokens/s)" and
"$/input token = ($/output token) / output-to-input-cost-ratio", the ratio 4 unless given.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpu_stacks.catalog.capacity import pricing_model_price
from tpu_stacks.catalog.tpu_prices import hourly_usd
from tpu_stacks.traffic.target import OUTPUT_INPUT_COST_RATIO, Pricing


@dataclass(frozen=True)
class HourlyPrice:
    """What a number of chips costs per hour on one pricing model, or unknown, with the price's source."""

    usd_per_hour: float | None
    source: str
    as_of: str | None


def hourly_price(generation_name: str, chips: int, pricing: Pricing) -> HourlyPrice:
    price = pricing_model_price(generation_name, pricing)
    if price.usd_per_chip_hour is None:
        return HourlyPrice(None, price.source, None)
    return HourlyPrice(hourly_usd(price.usd_per_chip_hour, chips), price.source, price.as_of)


@dataclass(frozen=True)
class TokenCost:
    per_million_output: float
    per_million_input: float


def cost_per_million(
    usd_per_hour: float,
    output_tokens_per_second: float,
    input_tokens_per_second: float | None,
    ratio: float = OUTPUT_INPUT_COST_RATIO,
) -> TokenCost:
    """GIQ's `Cost`: the hourly price split over output tokens and input tokens weighted 1/ratio.

    Without an input throughput (a GIQ profile with no QPS), the input term is dropped: the price then
    falls on output tokens alone, as the issue asks, and $/input token is still $/output token / ratio.
    """
    per_second = usd_per_hour / 3600
    weighted = output_tokens_per_second + (input_tokens_per_second or 0.0) / ratio
    per_output = per_second / weighted
    return TokenCost(per_million_output=per_output * 1e6, per_million_input=per_output / ratio * 1e6)
