"""GIQ's cost per million tokens and the hourly price it splits, computed by hand from the published definitions.

Sources: GKE Inference Quickstart's API ([GIQ], googleapis/googleapis 731d7f2a
google/cloud/gkerecommender/v1/gkerecommender.proto, message `Cost`): "$/output token = GPU $/s /
(1/output-to-input-cost-ratio * input tokens/s + output tokens/s)", "$/input token = ($/output token) /
output-to-input-cost-ratio", and `output_input_cost_ratio` "If not provided, `4.0` is used". Trillium (v6e) at
$2.70 per chip-hour on demand and $1.89 with a 1-year CUD, no spot price in a primary source ([NEO], Neowin
quoting Google's GA announcement, Dec 2024: https://www.neowin.net/amp/google-takes-on-nvidia-blackwell-gpus-with-the-new-trillium-tpus/).
"""

import pytest

from tpu_stacks.traffic.pricing import cost_per_million, hourly_price


def test_the_price_is_split_over_output_and_quarter_weighted_input_tokens():
    # $3.60 an hour is $0.001 a second; 100 output + 400 input / 4 = 200 weighted tokens a second:
    # $0.000005 per output token = $5 per million, and $5 / 4 = $1.25 per million input tokens.
    cost = cost_per_million(3.6, output_tokens_per_second=100.0, input_tokens_per_second=400.0)
    assert cost.per_million_output == pytest.approx(5.0, rel=1e-12)
    assert cost.per_million_input == pytest.approx(1.25, rel=1e-12)


def test_without_an_input_throughput_the_price_falls_on_output_tokens_alone():
    # $7.20 an hour = $0.002 a second over 100 output tokens a second: $20 per million, input $5 per million.
    cost = cost_per_million(7.2, output_tokens_per_second=100.0, input_tokens_per_second=None)
    assert cost.per_million_output == pytest.approx(20.0, rel=1e-12)
    assert cost.per_million_input == pytest.approx(5.0, rel=1e-12)


def test_another_ratio_weighs_input_tokens_by_its_inverse():
    # ratio 2: 100 + 400 / 2 = 300 weighted tokens; $10.80 an hour = $0.003 a second -> $10 per million output,
    # $5 per million input.
    cost = cost_per_million(10.8, output_tokens_per_second=100.0, input_tokens_per_second=400.0, ratio=2.0)
    assert cost.per_million_output == pytest.approx(10.0, rel=1e-12)
    assert cost.per_million_input == pytest.approx(5.0, rel=1e-12)


def test_an_hourly_price_is_chips_times_the_chip_hour_with_its_date():
    price = hourly_price("v6e", 8, "on-demand")  # 8 x $2.70
    assert price.usd_per_hour == pytest.approx(21.6, rel=1e-12)
    assert price.as_of == "2024-12"
    assert "[NEO]" in price.source
    assert hourly_price("v6e", 4, "1-year-cud").usd_per_hour == pytest.approx(7.56, rel=1e-12)  # 4 x $1.89


def test_a_price_no_source_gives_stays_unknown_never_free():
    price = hourly_price("v6e", 8, "spot")
    assert price is not None
    assert (price.usd_per_hour, price.as_of) == (None, None)
    assert "not found in a primary source" in price.source
