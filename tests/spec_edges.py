"""A helper for the spec input tests (`tests/*/test_spec_inputs.py`): a bounded input at its edges.

Each row names a key as a user writes it in the stack file (`converter.diskGib`), its lowest and highest accepted
values and the bound's kind; the check parses the section with the edge (accepted) and one past it (refused with the
one line a user sees: `SECTION.KEY: VALUE is not accepted; input should be ...`, pydantic's documented sentences,
https://docs.pydantic.dev/latest/errors/validation_errors/#greater_than_equal, lowered by inputs/validation.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import parse


@dataclass(frozen=True)
class Edge:
    """`key` (dotted, as written) accepts `low` (or anything above 0 when `above` is set) up to `high`."""

    key: str
    low: int
    high: int | None = None
    above: bool = False
    """`gt=low`: `low` itself is refused ("greater than"), `low + 1` is the lowest accepted."""


def _nested(key: str, value: Any, base: Mapping[str, Any]) -> dict[str, Any]:
    first, _, rest = key.partition(".")
    data = dict(base)
    data[first] = _nested(rest, value, data.get(first) or {}) if rest else value
    return data


def refusal(model: type, section: str, data: Mapping[str, Any]) -> str:
    with pytest.raises(UserError) as caught:
        parse(model, data, section)
    return str(caught.value)


def check_edge(model: type, section: str, base: Mapping[str, Any], edge: Edge) -> None:
    """The edges accepted, one past each refused with its line."""
    lowest = edge.low + 1 if edge.above else edge.low
    parse(model, _nested(edge.key, lowest, base), section)
    below = edge.low if edge.above else edge.low - 1
    sentence = f"greater than {edge.low}" if edge.above else f"greater than or equal to {edge.low}"
    assert refusal(model, section, _nested(edge.key, below, base)) == (
        f"{section}.{edge.key}: {below} is not accepted; input should be {sentence}"
    )
    if edge.high is not None:
        parse(model, _nested(edge.key, edge.high, base), section)
        assert refusal(model, section, _nested(edge.key, edge.high + 1, base)) == (
            f"{section}.{edge.key}: {edge.high + 1} is not accepted; input should be less than or equal to {edge.high}"
        )
