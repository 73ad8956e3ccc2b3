"""A GIQ profile's operating points against the latency limits (traffic/evidence.py `from_profile`), by hand.

GIQ's profiles report, per load, the output tokens per second and the latencies measured at it (NTPOT, TTFT); a
point is usable when every latency the target limits is measured and within its limit, and the busiest usable one
is what a replica serves (docs/sizing-for-traffic.md). The points below are made up so that each rule decides
alone; no traffic model is involved, so a refit of traffic/model.py leaves these answers alone.
"""

from __future__ import annotations

from tpu_stacks.traffic.evidence import from_profile
from tpu_stacks.traffic.profiles import Profile, ProfilePoint
from tpu_stacks.traffic.target import TrafficTarget


def _profile(*points: ProfilePoint) -> Profile:
    return Profile("m", "vLLM", "", "tpu-v6e-slice", "2x4", "ct6e-standard-8t", 8, tuple(points))


QUIET = ProfilePoint(queries_per_second=1.0, output_tokens_per_second=300.0, ntpot_ms=20.0, ttft_ms=400.0)
SLOW_FIRST_TOKEN = ProfilePoint(queries_per_second=2.0, output_tokens_per_second=600.0, ntpot_ms=25.0, ttft_ms=950.0)
"""Within an NTPOT limit of 30 ms but 50 ms over a TTFT limit of 900 ms."""


def test_a_point_that_breaks_only_the_ttft_limit_is_not_used():
    """The busier point meets NTPOT (25 <= 30) and breaks TTFT (950 > 900): the quieter one serves, and what stops
    the busier one is the TTFT limit."""
    target = TrafficTarget(output_tokens_per_second=1000, ntpot_ms=30, ttft_ms=900, input_tokens=1000)
    served = from_profile(_profile(QUIET, SLOW_FIRST_TOKEN), target, "giq")
    assert served.per_replica.output_tokens_per_second == 300.0
    assert served.per_replica.ttft_ms == 400.0
    assert served.limit == "ttft-target"
    # input tokens per second: 1 query a second x the target's 1000-token prompts
    assert served.per_replica.input_tokens_per_second == 1000.0


def test_with_only_a_ttft_limit_a_point_over_it_is_refused_and_the_limit_named():
    target = TrafficTarget(output_tokens_per_second=1000, ttft_ms=900)
    served = from_profile(_profile(SLOW_FIRST_TOKEN), target, "giq")
    assert served.per_replica.output_tokens_per_second is None
    assert served.limit == "ttft-target"
    assert served.why == "no operating point of the GIQ profile meets the latency limits"


def test_with_only_an_ntpot_limit_the_ttft_does_not_matter():
    """No TTFT limit: the busier point (950 ms to the first token) is used, and nothing busier is measured."""
    target = TrafficTarget(output_tokens_per_second=1000, ntpot_ms=30)
    served = from_profile(_profile(QUIET, SLOW_FIRST_TOKEN), target, "giq")
    assert served.per_replica.output_tokens_per_second == 600.0
    assert served.limit is None
    assert served.measured == ("output_tokens_per_second", "ntpot_ms", "ttft_ms")


def test_a_point_without_a_measured_ntpot_meets_no_ntpot_limit():
    unmeasured = ProfilePoint(queries_per_second=2.0, output_tokens_per_second=600.0, ntpot_ms=None, ttft_ms=100.0)
    target = TrafficTarget(output_tokens_per_second=1000, ntpot_ms=30)
    served = from_profile(_profile(QUIET, unmeasured), target, "giq")
    assert served.per_replica.output_tokens_per_second == 300.0
    assert served.limit == "ntpot-target"
    nothing = from_profile(_profile(unmeasured), target, "giq")
    assert (nothing.per_replica.output_tokens_per_second, nothing.limit) == (None, "ntpot-target")


def test_a_point_without_queries_per_second_derives_no_input_rate():
    no_rate = ProfilePoint(queries_per_second=None, output_tokens_per_second=300.0, ntpot_ms=20.0, ttft_ms=400.0)
    served = from_profile(_profile(no_rate), TrafficTarget(output_tokens_per_second=1000, ntpot_ms=30), "giq")
    assert served.per_replica.input_tokens_per_second is None
    assert served.measured == ("output_tokens_per_second", "ntpot_ms", "ttft_ms")
