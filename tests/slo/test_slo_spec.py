"""slo/spec.py's bounds: every figure of a traffic target is above zero, and the least of each is accepted (a rate
or a latency may be a fraction, a token count is whole, so 1 is the least)."""

from __future__ import annotations

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import parse
from tpu_stacks.slo.spec import SloSpec

RATE = {"outputTokensPerSecond": 100}


@pytest.mark.parametrize(("key", "least"), [("outputTokensPerSecond", 0.5), ("ntpotMs", 0.5), ("ttftMs", 0.5)])
def test_a_rate_or_latency_is_any_positive_number(key, least):
    assert parse(SloSpec, {**RATE, key: least}).model_dump(by_alias=True)[key] == least
    with pytest.raises(UserError, match=rf"^slo\.{key}: 0 is not accepted; input should be greater than 0"):
        parse(SloSpec, {**RATE, key: 0}, "slo")


@pytest.mark.parametrize("key", ["inputTokens", "outputTokens"])
def test_a_token_count_is_at_least_one(key):
    assert parse(SloSpec, {**RATE, key: 1}).model_dump(by_alias=True)[key] == 1
    with pytest.raises(UserError, match=rf"^slo\.{key}: 0 is not accepted; input should be greater than 0"):
        parse(SloSpec, {**RATE, key: 0}, "slo")
