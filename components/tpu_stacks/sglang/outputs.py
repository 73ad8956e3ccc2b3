"""The typed outputs of `SglangStack`, as Pulumi's schema inference reads them.

Written by hand: outputs are what the component returns, not inputs a spec declares (those are in the
generated `args.py`).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import TypedDict


class SglangSlice(TypedDict):
    """The slice a server replica runs on (its own name: the plugin schema has one namespace of types)."""

    generation: str
    topology: str
    machine_type: str
    chips: int
    tensor_parallel_size: int
