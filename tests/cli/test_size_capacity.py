"""`tpu-stacks size` prices the recommended slice on every capacity kind the catalogue knows, with source
and date, and says unknown where no source gives a price (never a guess)."""

import json

from tests.cli.test_size import run


def test_json_prices_the_recommended_slice_per_kind():
    result = run("meta-llama/Llama-3.1-70B", "--tpu", "v6e", "--json")
    assert result.returncode == 0, result.stderr
    prices = {price["kind"]: price for price in json.loads(result.stdout)["capacity_prices"]}
    assert list(prices) == ["reservation", "spot", "onDemand", "flexStart"]
    # 2x4 = 8 chips; v6e $2.70 on-demand and $1.89 with a 1-year CUD per chip-hour ([NEO]).
    assert prices["onDemand"]["usd_per_hour"] == 21.6 and prices["onDemand"]["as_of"] == "2024-12"
    assert prices["reservation"]["usd_per_hour"] == 15.12
    assert prices["spot"]["usd_per_hour"] is None and prices["flexStart"]["usd_per_hour"] is None
    assert all(price["source"] for price in prices.values())


def test_table_says_unknown_rather_than_inventing_a_price():
    result = run("meta-llama/Llama-3.1-70B", "--tpu", "v6e")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Price per hour of this slice by capacity kind"))
    block = lines[start + 1 : start + 5]
    assert [line.split()[0] for line in block] == ["reservation", "spot", "on-demand", "flex-start"]
    assert "$21.60" in block[2] and "2024-12" in block[2]
    assert "unknown" in block[1] and "unknown" in block[3]


def test_a_generation_with_no_published_price_is_unknown_on_every_kind():
    """TPU7x: "contact your account team" ([D-7x]); no kind gets a number."""
    result = run("meta-llama/Llama-3.1-70B", "--tpu", "tpu7x", "--json")
    assert result.returncode == 0, result.stderr
    assert {price["usd_per_hour"] for price in json.loads(result.stdout)["capacity_prices"]} == {None}
