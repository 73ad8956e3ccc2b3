"""Sizing for traffic: the cheapest TPU slices and replicas that carry a throughput within latency limits.

Pure, no Pulumi. `size_for_traffic` answers `tpu-stacks size MODEL --output-tokens-per-second N`; the stack's
`slo` setting and the policy pack call `evaluate_slice` for the slice a workload runs on.
"""

from tpu_stacks.traffic.optimizer import (
    MAX_REPLICA_CHIPS,
    PerReplica,
    TrafficAnswer,
    TrafficCandidate,
    candidate_shapes,
    evaluate_slice,
    size_for_traffic,
)
from tpu_stacks.traffic.profiles import Profile, ProfilePoint, read_profiles
from tpu_stacks.traffic.target import (
    DEFAULT_PRICING,
    GIQ_DEFAULT_PRICING,
    PRICING_MODELS,
    Pricing,
    TrafficTarget,
)

__all__ = [
    "DEFAULT_PRICING",
    "GIQ_DEFAULT_PRICING",
    "MAX_REPLICA_CHIPS",
    "PRICING_MODELS",
    "PerReplica",
    "Pricing",
    "Profile",
    "ProfilePoint",
    "TrafficAnswer",
    "TrafficCandidate",
    "TrafficTarget",
    "candidate_shapes",
    "evaluate_slice",
    "read_profiles",
    "size_for_traffic",
]
