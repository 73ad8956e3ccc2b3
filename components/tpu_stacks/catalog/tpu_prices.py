"""TPU list prices: a generation's on-demand price per chip-hour (on its record in catalog/tpu.py) and the one
rounding every price `tpu-stacks size`, the plans and the docs show.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SECONDARY_SB_PRICE = "secondary source: [SB] applied-inference.md (not Google's price list)"
"""Where the v5e and v5p list prices come from: the scaling book, not cloud.google.com/tpu/pricing. Named as
secondary wherever a price is shown (its `source`), as the traffic sizer's issue allows a secondary source."""


class Price(BaseModel):
    """On-demand list price per chip-hour; region-dependent, check cloud.google.com/tpu/pricing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd_per_chip_hour: float
    source: str
    as_of: str


def hourly_usd(usd_per_chip_hour: float | None, chips: int) -> float | None:
    """What `chips` chips cost per hour at a per-chip price (None: unknown, never free); one rounding for every
    price `size`, the plans and the docs show."""
    return None if usd_per_chip_hour is None else round(usd_per_chip_hour * chips, 4)
