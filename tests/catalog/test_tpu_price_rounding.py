"""catalog/tpu_prices.hourly_usd: the one rounding every shown price takes, to a hundredth of a cent (four decimal
places of a dollar), so figures summed from it match the ones `size`, the plans and the docs print."""

from tpu_stacks.catalog.tpu_prices import hourly_usd


def test_an_hourly_price_is_kept_to_a_hundredth_of_a_cent():
    assert hourly_usd(0.123456, 1) == 0.1235
    assert hourly_usd(1.23456, 8) == 9.8765
    assert hourly_usd(None, 8) is None
