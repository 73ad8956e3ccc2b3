"""The traffic target's defaults and bounds, each compared with its source.

Sources: the request shape of Google's vLLM TPU recipe benchmark ([REC-VLLM], AI-Hypercomputer/tpu-recipes
51a4773b inference/trillium/vLLM/Llama3.1/README.md lines 192-193: `MAX_INPUT_LEN=1800`, `MAX_OUTPUT_LEN=128`);
GIQ's `Cost.output_input_cost_ratio` "If not provided, `4.0` is used" ([GIQ], gkerecommender.proto at 731d7f2a).
The bounds: a throughput, a latency and a token count are positive, and a throughput or a latency may be a
fraction (half a token a second, half a millisecond), a token count not below one.
"""

import pytest
from pydantic import ValidationError

from tpu_stacks.traffic.target import (
    DEFAULT_INPUT_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    OUTPUT_INPUT_COST_RATIO,
    TrafficTarget,
)


def test_the_defaults_are_the_recipe_shape_and_giq_ratio():
    assert (DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS) == (1800, 128)
    assert OUTPUT_INPUT_COST_RATIO == 4.0


@pytest.mark.parametrize("field", ["output_tokens_per_second", "ntpot_ms", "ttft_ms"])
def test_a_rate_or_latency_must_be_positive_and_may_be_a_fraction(field):
    base = {"output_tokens_per_second": 10.0}
    assert getattr(TrafficTarget(**{**base, field: 0.5}), field) == 0.5
    with pytest.raises(ValidationError):
        TrafficTarget(**{**base, field: 0})


@pytest.mark.parametrize("field", ["input_tokens", "output_tokens"])
def test_a_request_length_is_at_least_one_token(field):
    assert getattr(TrafficTarget(output_tokens_per_second=10.0, **{field: 1}), field) == 1
    with pytest.raises(ValidationError):
        TrafficTarget(output_tokens_per_second=10.0, **{field: 0})


def test_as_dict_gives_what_was_asked():
    target = TrafficTarget(output_tokens_per_second=5000.0, ntpot_ms=40.0, ttft_ms=900.0, pricing="1-year-cud")
    assert target.as_dict() == {
        "output_tokens_per_second": 5000.0,
        "ntpot_ms": 40.0,
        "ttft_ms": 900.0,
        "input_tokens": 1800,
        "output_tokens": 128,
        "pricing": "1-year-cud",
    }
