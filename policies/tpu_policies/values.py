"""Resource properties as plain data, with values unknown at preview kept as one sentinel.

The SDK hands policies a proxy that raises as soon as an unknown value is read, which turns the
whole policy into an advisory "can't run during preview" note. Copying the properties once into
plain dicts and lists, with `UNKNOWN` where the engine had no value yet, lets each check skip only
what it cannot know and still judge everything else. Numbers arrive as floats (protobuf doubles).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from tpu_stacks.objects.pod_templates import count


class _Unknown:
    """A value the engine will only know after apply."""

    def __repr__(self) -> str:
        return "<unknown>"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()


def plain(value: Any) -> Any:
    """Deep copy of SDK properties into dicts/lists; unknown values become `UNKNOWN`."""
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key in value:
            try:
                result[key] = plain(value[key])
            except UnknownValueError:
                result[key] = UNKNOWN
        return result
    if isinstance(value, Sequence):
        items: list[Any] = []
        for index in range(len(value)):
            try:
                items.append(plain(value[index]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def dig(data: Any, *path: str | int) -> Any:
    """`data[path[0]][path[1]]...`: None when a step is missing, UNKNOWN when a step is unknown."""
    for step in path:
        if data is UNKNOWN:
            return UNKNOWN
        if isinstance(step, int):
            if not isinstance(data, list) or step >= len(data):
                return None
            data = data[step]
        else:
            if not isinstance(data, dict):
                return None
            data = data.get(step)
    return data


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


as_int = count
"""An integral count from a float, int or digit string (`4.0`, `4`, `"4"`); else None: the walker's own
reading (tpu_stacks.objects.pod_templates.count), so a group size and a chip count are read alike."""


def is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def config(args: Any, key: str, default: Any) -> Any:
    """A policy setting from the pack config (the engine fills schema defaults; so do we)."""
    try:
        value = args.get_config().get(key)
    except AttributeError:
        return default
    return default if value is None else value
