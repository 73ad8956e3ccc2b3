"""slo/plan.py's small rules on hand-made predictions and candidates: which key a missed limit names, when the
engine's batch is capped, the HPA's waiting target, and the boundaries of the request length and the replica
count (each value below is worked out by hand in its test, so no traffic-model number is pinned here)."""

from types import SimpleNamespace

import pytest

from tests.clients import CLIENTS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.inputs.field_rules import LARGEST_REPLICAS
from tpu_stacks.inputs.validation import parse_section
from tpu_stacks.slo.plan import SloPrediction, _missed_limit, latency_batch, waiting_target
from tpu_stacks.slo.spec import SloSpec
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec


def prediction(**changes) -> SloPrediction:
    """One replica at batch 10: NTPOT 10 ms, TTFT 50 ms, 100 output tokens a request (a slot frees every
    100 x 10 / 10 = 100 ms)."""
    fields = {
        "output_tokens_per_second": 1000.0,
        "ntpot_ms": 20.0,
        "ttft_ms": 250.0,
        "input_tokens": 500,
        "output_tokens": 100,
        "replicas": 1,
        "replica_output_tokens_per_second": 1000.0,
        "replica_input_tokens_per_second": 5000.0,
        "replica_ntpot_ms": 10.0,
        "replica_ttft_ms": 50.0,
        "batch": 10,
        "basis": "model",
        "source": "hand-made",
    }
    return SloPrediction(**{**fields, **changes})


def test_the_batch_is_capped_when_either_latency_limit_is_set():
    assert latency_batch(prediction()) == 10
    assert latency_batch(prediction(ttft_ms=None)) == 10  # NTPOT only
    assert latency_batch(prediction(ntpot_ms=None)) == 10  # TTFT only
    assert latency_batch(prediction(ntpot_ms=None, ttft_ms=None)) is None  # a rate alone caps nothing


def test_the_waiting_target_is_the_queue_that_still_starts_within_the_ttft_limit():
    # (250 - 50) ms of budget over a slot every 100 ms: 2 requests may wait.
    assert waiting_target(prediction()) == 2
    assert waiting_target(prediction(ttft_ms=1050.0)) == 10  # 1000 / 100
    # (120 - 50) / 100 = 0.7: no whole request, but an HPA target of 0 never rests, so 1.
    assert waiting_target(prediction(ttft_ms=120.0)) == 1
    assert waiting_target(prediction(ttft_ms=None)) is None  # no TTFT limit: no queue length follows
    assert waiting_target(prediction(batch=None)) is None  # a profile's point says no batch


def _slo(**limits) -> SloSpec:
    return SloSpec(output_tokens_per_second=1000, **limits)


@pytest.mark.parametrize(
    ("binding", "limits", "key", "value"),
    [
        ("ttft-target", {"ttft_ms": 200, "ntpot_ms": 30}, "vllm.slo.ttftMs", 200),
        ("ntpot-target", {"ttft_ms": 200, "ntpot_ms": 30}, "vllm.slo.ntpotMs", 30),
        ("ttft-target", {"ntpot_ms": 30}, "vllm.topology", "2x4"),  # no TTFT limit given: not the user's key
        ("kv-capacity", {"ntpot_ms": 30}, "vllm.topology", "2x4"),
        ("kv-capacity", {"ttft_ms": 200}, "vllm.topology", "2x4"),
    ],
)
def test_the_missed_limit_is_the_one_binding_and_given_else_the_slice(binding, limits, key, value):
    candidate = SimpleNamespace(binding_limit=binding, topology="2x4")
    assert _missed_limit("vllm", _slo(**limits), candidate) == (key, value)


def vllm(**section):
    spec = parse_section(VllmSpec, {"model": "meta-llama/Llama-3.1-8B", "sourceRanges": CLIENTS, **section}, "vllm")
    return plan_vllm(spec, ClusterSpec(project="proj", location="us-central1-b"), True, False)


def test_a_request_exactly_as_long_as_the_context_is_served():
    lengths = {"outputTokensPerSecond": 1000, "outputTokens": 200}
    assert vllm(maxModelLen=4096, slo={**lengths, "inputTokens": 3896}).slo.input_tokens == 3896
    with pytest.raises(UserError, match=r"^vllm\.slo\.inputTokens: '3897 \+ 200 tokens' is a longer request"):
        vllm(maxModelLen=4096, slo={**lengths, "inputTokens": 3897})


def test_exactly_the_largest_replica_count_is_served_and_one_more_is_refused():
    """Without a latency limit a replica runs its largest batch whatever the target, so its rate is one number:
    64 times it needs exactly 64 replicas (a power of two: the product and the quotient are exact)."""
    rate = vllm(slo={"outputTokensPerSecond": 1000}).slo.replica_output_tokens_per_second
    largest = vllm(slo={"outputTokensPerSecond": LARGEST_REPLICAS * rate}, replicas={"max": LARGEST_REPLICAS})
    assert largest.slo.replicas == LARGEST_REPLICAS
    with pytest.raises(UserError, match=rf"needs {LARGEST_REPLICAS + 1} replicas"):
        vllm(slo={"outputTokensPerSecond": (LARGEST_REPLICAS + 0.5) * rate})


def test_the_slice_choice_and_the_prediction_take_one_set_of_engine_settings():
    """`slo_shape` (which slice) and `predict` (how many replicas) ask the traffic model about the same engine
    settings: one EngineSettings, not two copies of five keyword parameters that could drift apart."""
    import inspect

    from tpu_stacks.slo import plan as slo_plan

    for function in (slo_plan.predict, slo_plan.slo_shape, slo_plan.slo_replicas):
        parameters = inspect.signature(function).parameters
        assert "settings" in parameters, function.__name__
        assert not {"weight_dtype", "kv_dtype", "context", "max_batch", "batched_tokens"} & set(parameters)
    settings = slo_plan.EngineSettings(
        "vllm", "bf16", "bf16", context=4096, max_batch=128, batched_tokens=512, async_scheduling=False
    )
    assert settings.traffic_arguments() == {
        "engine": "vllm",
        "weight_dtype": "bf16",
        "kv_dtype": "bf16",
        "max_model_len": 4096,
        "max_batch": 128,
        "batched_tokens": 512,
        "async_scheduling": False,
    }
