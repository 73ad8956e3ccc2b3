"""The typed outputs of `RayTrainStack`, as Pulumi's schema inference reads them.

Written by hand: outputs are what the component returns, not inputs a spec declares (those are in the
generated `args.py`).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import TypedDict


class TrainingSlice(TypedDict):
    """The TPU capacity a run gets, as the RayCluster and the trainer's ScalingConfig use it."""

    generation: str
    topology: str
    machine_type: str
    chips: int
    hosts: int
    chips_per_host: int
    slices: int
    ray_accelerator_type: str
    parallelism: str
    memory_needed_gib: float
    memory_usable_gib: float
