"""catalog/tpu_prices.hourly_usd: the one rounding every shown price takes, to a hundredth of a cent (four decimal
places of a dollar), so figures summed from it match the ones `size`, the plans and the docs print."""

from tpu_stacks.catalog.tpu_prices import hourly_usd


def test_an_hourly_price_is_kept_to_a_hundredth_of_a_cent():
    assert hourly_usd(0.123456, 1) == 0.1235
    assert hourly_usd(1.23456, 8) == 9.8765
    assert hourly_usd(None, 8) is None


def test_every_catalogued_price_is_in_whole_cents():
    """List prices are quoted in cents per chip-hour (cloud.google.com/tpu/pricing; the catalogue's secondary
    sources quote them so). The plan's cost summary (first_up.slo_summary) rounds a price x chips x replicas to
    four places, which only removes float noise while that holds (scripts/mutation_equivalent.txt says so)."""
    from tpu_stacks.catalog.tpu import GENERATIONS

    prices = [p for g in GENERATIONS for p in (g.price, g.commitment_price) if p is not None]
    assert prices
    for price in prices:
        assert abs(price.usd_per_chip_hour * 100 - round(price.usd_per_chip_hour * 100)) < 1e-9, price
