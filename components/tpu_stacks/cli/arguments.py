"""argparse types the commands share: one rule for what a count or a rate on the command line may be."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from tpu_stacks.inputs.field_rules import LARGEST_NUMBER


def positive(kind: type[int] | type[float] = int) -> Callable[[str], int | float]:
    """A positive, finite number no larger than any stack setting may be (field_rules.LARGEST_NUMBER): `nan`,
    `inf` and `1e30` are refused as the config refuses them. argparse names the flag in its one-line error."""
    noun = "whole number" if kind is int else "number"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}; give a positive {noun}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not a positive {noun}; give a positive {noun}")
        if value > LARGEST_NUMBER:
            raise argparse.ArgumentTypeError(f"{text} is beyond any sensible value (more than {LARGEST_NUMBER:,})")
        return value

    return parse
