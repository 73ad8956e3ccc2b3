"""Sizing for traffic: the cheapest TPU slices and replicas that carry a throughput within latency limits.

Pure, no Pulumi. `size_for_traffic` answers `tpu-stacks size MODEL --output-tokens-per-second N`; the stack's
`slo` setting and the policy pack call `evaluate_slice` for the slice a workload runs on.

The names below are loaded on first use (PEP 562), as the workload packages' are: a stack imports
`traffic.pricing` and `traffic.target` (first_up.py), and the optimizer with the profiles and evidence it reads is
loaded only by what sizes for traffic (the `slo` setting, `tpu-stacks size`, the policy pack).
"""

from __future__ import annotations

from typing import Any

_HOMES = {
    "MAX_REPLICA_CHIPS": "optimizer",
    "PerReplica": "optimizer",
    "TrafficAnswer": "optimizer",
    "TrafficCandidate": "optimizer",
    "candidate_shapes": "optimizer",
    "evaluate_slice": "optimizer",
    "size_for_traffic": "optimizer",
    "Profile": "profiles",
    "ProfilePoint": "profiles",
    "read_profiles": "profiles",
    "DEFAULT_PRICING": "target",
    "GIQ_DEFAULT_PRICING": "target",
    "PRICING_MODELS": "target",
    "Pricing": "target",
    "TrafficTarget": "target",
}
"""Each exported name's module in this package."""

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tpu_stacks.traffic import optimizer, profiles, target  # named, so the import walks see them

    return getattr({"optimizer": optimizer, "profiles": profiles, "target": target}[home], name)
