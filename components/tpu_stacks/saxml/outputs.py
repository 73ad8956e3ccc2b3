"""The typed outputs of `SaxmlStack`, as Pulumi's schema inference reads them.

Written by hand: outputs are what the component returns, not inputs a spec declares (those are in the
generated `args.py`).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import TypedDict


class SaxmlSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    hosts: int
    chips_per_vm: int
    slices: int


class SaxmlCurl(TypedDict):
    """The tutorial's requests, ready to paste."""

    publish: str
    listcell: str
    generate: str
    unpublish: str
