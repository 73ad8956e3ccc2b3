"""Hand-made GIQ profiles for the traffic tests: one builder, every field of a profile named, so a test changes one
field at a time and states only that one (traffic/profiles.py reads the same fields from a saved response)."""

from __future__ import annotations

from tpu_stacks.traffic.profiles import Profile, ProfilePoint

GIQ_V5E_2X4 = {"accelerator": "tpu-v5-lite-podslice", "topology": "2x4", "instance": "ct5lp-hightpu-8t", "count": 8}
"""GIQ's v5e 2x4 slice on one ct5lp-hightpu-8t host (8 chips)."""
GIQ_V6E_2X2 = {"accelerator": "tpu-v6e-slice", "topology": "2x2", "instance": "ct6e-standard-4t", "count": 4}
"""GIQ's v6e 2x2 slice: one ct6e-standard-4t host (4 chips)."""


def giq_profile(
    *points: ProfilePoint,
    accelerator: str,
    topology: str,
    instance: str,
    count: int | None,
    server: str = "vLLM",
    version: str = "",
    model: str = "meta-llama/Llama-3.1-8B-Instruct",
) -> Profile:
    """A profile of `model` served by `server` on the slice named by the other fields, measured at `points`."""
    return Profile(model, server, version, accelerator, topology, instance, count, points)
