"""`slo:` in the vLLM and JetStream sections: replicas sized by the real traffic model on the stack's slice,
refusals in one line before any resource, and the prediction the workload's annotations carry.

Expected counts are not typed here: each test asks the traffic model (`evaluate_slice`) for the same slice and
target and checks the plan followed it, with targets chosen so the answer differs from the defaults."""

import math
from pathlib import Path
from typing import get_args

import pytest

from tests.clients import CLIENTS
from tpu_stacks.catalog.throughput_measurements import SHAREGPT_INPUT_TOKENS, SHAREGPT_OUTPUT_TOKENS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import parse_section
from tpu_stacks.jetstream.plan import plan_jetstream
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.objects import annotations as keys
from tpu_stacks.slo.plan import EngineSettings, replica_range, slo_replicas
from tpu_stacks.traffic import TrafficTarget, evaluate_slice
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import AutoscalingSpec, VllmSpec

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")
JETSTREAM_CLUSTER = ClusterSpec(project="proj", location="us-west4-a")
LLAMA_8B = "meta-llama/Llama-3.1-8B"
LLAMA_70B = "meta-llama/Llama-3.1-70B"


def vllm(model=LLAMA_8B, **spec):
    section = {"model": model, "sourceRanges": CLIENTS, **spec}
    return plan_vllm(parse_section(VllmSpec, section, "vllm"), CLUSTER, True, False)


def jetstream(**spec):
    section = {"model": "google/gemma-7b-it", **spec}
    return plan_jetstream(parse_section(JetStreamSpec, section, "jetstream"), JETSTREAM_CLUSTER, True)


def expected(decided, engine, max_batch, batched_tokens=None, async_scheduling=None, **target):
    """The traffic model's own answer for the plan's slice (what the plan must have followed); `batched_tokens`: the
    step budget the engine is told (a vLLM plan's `--max-num-batched-tokens`), `async_scheduling` its switch."""
    return evaluate_slice(
        decided.model,
        decided.shape,
        TrafficTarget(**target),
        engine=engine,
        weight_dtype=decided.request.weight_dtype,
        kv_dtype=decided.request.kv_dtype,
        max_model_len=decided.request.context,
        max_batch=max_batch,
        batched_tokens=batched_tokens,
        async_scheduling=async_scheduling,
    )


def one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# -- vLLM ---------------------------------------------------------------------------------------------------------


def test_without_a_maximum_the_slo_sets_the_hpa_range_and_the_pool():
    decided = vllm(slo={"outputTokensPerSecond": 5000})
    answer = expected(decided, "vllm", 128, decided.spec.max_num_batched_tokens, output_tokens_per_second=5000)
    assert answer.meets and answer.replicas > 2  # not the default maximum: the target moved it
    assert (decided.spec.replicas.min, decided.spec.replicas.max) == (1, answer.replicas)
    assert (decided.pool.autoscaling_min, decided.pool.autoscaling_max) == (1, answer.replicas)
    assert decided.autoscales  # min 1 < max R: the HPA exists
    assert decided.slo.replicas == answer.replicas
    assert decided.slo.replica_output_tokens_per_second == answer.per_replica.output_tokens_per_second


def test_more_traffic_needs_more_replicas_on_the_same_slice():
    low, high = vllm(slo={"outputTokensPerSecond": 2000}), vllm(slo={"outputTokensPerSecond": 8000})
    assert low.shape == high.shape  # the target never changes the slice the memory sizing chose
    assert low.spec.replicas.max < high.spec.replicas.max


def test_a_minimum_above_the_need_is_kept_and_becomes_the_maximum():
    decided = vllm(slo={"outputTokensPerSecond": 500}, replicas={"min": 3})
    assert decided.slo.replicas < 3
    assert (decided.spec.replicas.min, decided.spec.replicas.max) == (3, 3)
    assert not decided.autoscales


def test_a_users_maximum_that_carries_the_target_is_kept():
    need = vllm(slo={"outputTokensPerSecond": 5000}).slo.replicas
    decided = vllm(slo={"outputTokensPerSecond": 5000}, replicas={"min": 2, "max": need + 3})
    assert (decided.spec.replicas.min, decided.spec.replicas.max) == (2, need + 3)


def test_a_users_maximum_below_the_need_is_refused_naming_it():
    need = vllm(slo={"outputTokensPerSecond": 5000}).slo.replicas
    with pytest.raises(UserError) as error:
        vllm(slo={"outputTokensPerSecond": 5000}, replicas={"max": need - 1})
    text = one_line(error)
    assert text.startswith(f"vllm.replicas.max: {need - 1} replicas carry ")
    assert f"below the slo's 5000: the target needs {need}; set it to {need} or more" in text


def test_a_latency_limit_no_load_can_meet_is_refused_with_the_size_command():
    with pytest.raises(UserError) as error:
        vllm(LLAMA_70B, slo={"outputTokensPerSecond": 5000, "ntpotMs": 1})
    text = one_line(error)
    assert text.startswith("vllm.slo.ntpotMs: 1.0 cannot be met by one replica of v6e 2x4 at any load")
    assert (
        "`tpu-stacks size meta-llama/Llama-3.1-70B --output-tokens-per-second 5000 --ntpot-ms 1 "
        "--input-tokens 1800 --output-tokens 128 --engine vllm --context 4096 --batch 128 "
        "--max-num-batched-tokens 512`" in text
    )  # the stack's context, sequence cap and step budget: without them `size` models its own defaults


def test_an_impossible_time_to_first_token_names_ttft():
    with pytest.raises(UserError) as error:
        vllm(LLAMA_70B, slo={"outputTokensPerSecond": 5000, "ntpotMs": 200, "ttftMs": 1})
    assert one_line(error).startswith("vllm.slo.ttftMs: 1.0 cannot be met by one replica of v6e 2x4")


def test_a_target_beyond_64_replicas_is_refused():
    with pytest.raises(UserError) as error:
        vllm(slo={"outputTokensPerSecond": 900000})
    text = one_line(error)
    assert text.startswith("vllm.slo.outputTokensPerSecond: 900000.0 needs ")
    assert "more than the 64 one stack serves" in text


def test_requests_longer_than_the_context_are_refused():
    with pytest.raises(UserError) as error:
        vllm(slo={"outputTokensPerSecond": 1000, "inputTokens": 4000, "outputTokens": 200}, maxModelLen=4096)
    assert one_line(error).startswith("vllm.slo.inputTokens: '4000 + 200 tokens' is a longer request than the 4096")


def test_request_lengths_change_the_answer():
    """Long prompts cost prefill: the same output rate needs more replicas (why inputTokens is a setting)."""
    chat = vllm(slo={"outputTokensPerSecond": 3000, "ntpotMs": 40, "inputTokens": 200, "outputTokens": 200})
    rag = vllm(slo={"outputTokensPerSecond": 3000, "ntpotMs": 40, "inputTokens": 3500, "outputTokens": 200})
    assert rag.spec.replicas.max > chat.spec.replicas.max


@pytest.mark.parametrize(
    ("slo", "message"),
    [
        ({"outputTokensPerSecond": -5}, "vllm.slo.outputTokensPerSecond: -5 is not accepted"),
        (
            {"outputTokensPerSecond": 100, "ntpot": 5},
            "vllm.slo.ntpot: 5 is not a known setting; did you mean 'ntpotMs'?",
        ),
        ({"ntpotMs": 5}, "vllm.slo.outputTokensPerSecond is required"),
        ({"outputTokensPerSecond": True}, "vllm.slo.outputTokensPerSecond: True is a boolean, not a number"),
    ],
)
def test_bad_slo_values_are_refused_in_one_line(slo, message):
    with pytest.raises(UserError) as error:
        vllm(slo=slo)
    assert one_line(error).startswith(message)


def test_the_prediction_is_in_the_annotations():
    from tpu_stacks.vllm.pod import workload_annotations

    decided = vllm(slo={"outputTokensPerSecond": 5000, "ntpotMs": 80, "ttftMs": 3000})
    notes = workload_annotations(decided)
    assert notes[keys.MODEL] == LLAMA_8B  # the sizing contract is still there
    assert notes[keys.SLO_OUTPUT_TOKENS_PER_SECOND] == "5000"
    assert (notes[keys.SLO_NTPOT_MS], notes[keys.SLO_TTFT_MS]) == ("80", "3000")
    assert (notes[keys.SLO_INPUT_TOKENS], notes[keys.SLO_OUTPUT_TOKENS]) == ("1800", "128")
    assert notes[keys.SLO_REPLICAS] == str(decided.spec.replicas.max)
    assert float(notes[keys.SLO_REPLICA_OUTPUT_TOKENS_PER_SECOND]) == pytest.approx(
        decided.slo.replica_output_tokens_per_second, abs=0.01
    )
    assert notes[keys.SLO_BASIS] == decided.slo.basis and notes[keys.SLO_SOURCE] == decided.slo.source
    assert all(isinstance(value, str) for value in notes.values())  # Kubernetes annotations are strings


def test_no_slo_no_annotations_and_the_defaults_stay():
    from tpu_stacks.vllm.pod import workload_annotations

    decided = vllm()
    assert decided.slo is None and (decided.spec.replicas.min, decided.spec.replicas.max) == (1, 2)
    assert not [key for key in workload_annotations(decided) if "/slo-" in key]


# -- JetStream ------------------------------------------------------------------------------------------------------

SHAREGPT = {"inputTokens": SHAREGPT_INPUT_TOKENS, "outputTokens": SHAREGPT_OUTPUT_TOKENS}


def test_jetstream_replicas_and_pool_nodes_come_from_the_slo():
    decided = jetstream(slo={"outputTokensPerSecond": 10000, **SHAREGPT})
    answer = expected(
        decided,
        "jetstream",
        decided.request.batch,
        output_tokens_per_second=10000,
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
    )
    assert answer.replicas > 2 and decided.spec.replicas == answer.replicas  # not the default 2
    assert (decided.pool.autoscaling_min, decided.pool.autoscaling_max) == (0, answer.replicas)  # from 0
    assert decided.slo.basis == answer.basis


def test_a_jetstream_target_one_replica_carries_gets_one_replica():
    """A small target is one replica (the default of 2 is not a floor under `slo`): the pool scales 0 to 1."""
    decided = jetstream(slo={"outputTokensPerSecond": 10, **SHAREGPT})
    answer = expected(
        decided,
        "jetstream",
        decided.request.batch,
        output_tokens_per_second=10,
        input_tokens=SHAREGPT_INPUT_TOKENS,
        output_tokens=SHAREGPT_OUTPUT_TOKENS,
    )
    assert answer.replicas == 1 == decided.spec.replicas == decided.slo.replicas
    assert (decided.pool.autoscaling_min, decided.pool.autoscaling_max) == (0, 1)


def test_jetstream_replicas_below_the_need_are_refused():
    need = jetstream(slo={"outputTokensPerSecond": 10000, **SHAREGPT}).slo.replicas
    with pytest.raises(UserError) as error:
        jetstream(slo={"outputTokensPerSecond": 10000, **SHAREGPT}, replicas=need - 1)
    text = one_line(error)
    assert text.startswith(f"jetstream.replicas: {need - 1} replicas carry ")
    assert f"the target needs {need}; set it to {need} or more" in text


def test_jetstream_impossible_latency_is_refused():
    with pytest.raises(UserError) as error:
        jetstream(slo={"outputTokensPerSecond": 1000, "ttftMs": 1})
    text = one_line(error)
    assert text.startswith("jetstream.slo.ttftMs: 1.0 cannot be met by one replica of v5e 2x4 at any load")
    # the tutorial's JetStream server: --max_cache_length 2048, --batch_size 32 (the spec's defaults)
    assert "--engine jetstream --context 2048 --batch 32`" in text


def test_jetstream_requests_must_fit_the_cache():
    """The traffic model's default request (1800 + 128 tokens) does not fit a 1024-token cache."""
    with pytest.raises(UserError) as error:
        jetstream(slo={"outputTokensPerSecond": 1000}, maxCacheLength=1024)
    assert one_line(error).startswith(
        "jetstream.slo.inputTokens: '1800 + 128 tokens' is a longer request than the 1024"
    )


def test_jetstream_annotations_are_on_the_deployment_plan():
    decided = jetstream(slo={"outputTokensPerSecond": 10000, **SHAREGPT})
    notes = decided.slo.annotations()
    assert notes[keys.SLO_REPLICAS] == str(decided.spec.replicas)
    assert notes[keys.SLO_BASIS] in ("measured", "model")


def test_replica_range_rule():
    """The one rule both engines share, on a prediction from the real model."""
    prediction = vllm(slo={"outputTokensPerSecond": 5000}).slo
    need = prediction.replicas
    assert replica_range("k", prediction, 1, None) == (1, need)
    assert replica_range("k", prediction, need + 2, None) == (need + 2, need + 2)
    assert replica_range("k", prediction, 1, need) == (1, need)
    with pytest.raises(UserError, match=r"^k: "):
        replica_range("k", prediction, 1, need - 1)


def test_slo_replicas_is_the_one_rule_every_engine_asks():
    """What both plans ask (slo/plan.py `slo_replicas`), asked directly as a third engine would: the same prediction
    the vLLM plan made, the range by `replica_range`, a too small maximum refused under the key the engine names."""
    decided = vllm(slo={"outputTokensPerSecond": 5000})
    settings = EngineSettings.of(
        decided.request, "vllm", decided.spec.max_num_seqs, decided.spec.max_num_batched_tokens
    )
    ask = dict(minimum=1)
    prediction, low, high = slo_replicas(
        "vllm",
        decided.spec.slo,
        decided.request,
        decided.shape,
        settings,
        replicas_key="toy.replicas",
        maximum=None,
        **ask,
    )
    assert prediction == decided.slo
    assert (low, high) == (1, prediction.replicas) == (decided.spec.replicas.min, decided.spec.replicas.max)
    with pytest.raises(UserError, match=r"^toy\.replicas: "):
        slo_replicas(
            "vllm",
            decided.spec.slo,
            decided.request,
            decided.shape,
            settings,
            replicas_key="toy.replicas",
            maximum=prediction.replicas - 1,
            **ask,
        )


# -- GIQ profiles ---------------------------------------------------------------------------------------------------

FIXTURE = Path(__file__).with_name("giq_profiles.json")
"""A FetchProfiles response in the proto's JSON shape (int64 `units` as a string); the figures are invented for
the test: they only have to differ from the traffic model's."""


def test_a_profile_replaces_the_model_for_the_slice_it_covers():
    slo = {"outputTokensPerSecond": 5000, "ntpotMs": 30}
    # the fixture covers v6e 1x1: pinned here, since without a topology the slo picks the cheapest slice
    modelled = vllm(slo=slo, topology="1x1")
    profiled = vllm(slo={**slo, "profiles": str(FIXTURE)}, topology="1x1")
    assert modelled.slo.basis == "model" and profiled.slo.basis == "profile"
    # The fixture's best point within 30 ms NTPOT carries 700 tokens/s (its 1100 tokens/s point takes 45 ms).
    assert profiled.slo.replica_output_tokens_per_second == 700
    assert profiled.spec.replicas.max == math.ceil(5000 / 700) != modelled.spec.replicas.max
    assert profiled.slo.source.startswith("GIQ profile vllm v0.0.0-fixture meta-llama/Llama-3.1-8B")


def test_a_profile_of_another_slice_changes_nothing():
    slo = {"outputTokensPerSecond": 5000, "ntpotMs": 50, "profiles": str(FIXTURE)}
    assert vllm(LLAMA_70B, slo=slo).slo.basis == "model"  # the fixture covers 8B on v6e 1x1 only


def test_an_unreadable_profiles_file_is_refused_under_the_sections_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short relative path: a long one is elided in the line (errors.shorten)
    with pytest.raises(UserError) as error:
        vllm(slo={"outputTokensPerSecond": 5000, "profiles": "missing.json"})
    assert one_line(error).startswith("vllm.slo.profiles: 'missing.json' cannot be read")


# -- the HPA's signal under a latency limit ---------------------------------------------------------------------

LATENCY = {"outputTokensPerSecond": 5000, "ntpotMs": 50, "ttftMs": 2000}


def test_a_latency_limit_caps_the_batch_and_sets_the_waiting_target():
    decided = vllm(LLAMA_70B, slo=LATENCY)
    slo = decided.slo
    assert slo.batch < 128  # below the default maxNumSeqs: the cap is the limit's, not the default
    assert decided.spec.max_num_seqs == slo.batch and f"--max-num-seqs={slo.batch}" in decided.engine_args()
    slot_ms = slo.output_tokens * slo.replica_ntpot_ms / slo.batch
    assert decided.spec.autoscaling.target == max(1, int((2000 - slo.replica_ttft_ms) // slot_ms)) != 10
    looser = vllm(LLAMA_70B, slo={**LATENCY, "ttftMs": 6000})
    assert looser.spec.autoscaling.target > decided.spec.autoscaling.target  # more TTFT budget: a longer queue


def test_the_users_batch_cap_and_hpa_target_win():
    decided = vllm(LLAMA_70B, slo=LATENCY, maxNumSeqs=100, autoscaling={"target": 4})
    assert decided.spec.max_num_seqs == 100 and decided.spec.autoscaling.target == 4


def test_without_a_latency_limit_the_engine_and_hpa_settings_stay():
    decided = vllm(LLAMA_70B, slo={"outputTokensPerSecond": 5000})
    assert decided.spec.max_num_seqs == 128 and decided.spec.autoscaling.target == 10


def test_a_cache_metric_keeps_its_default_target():
    """Only a waiting-requests target is a queue length; the cache metric's target is a fraction."""
    (cache,) = [m for m in get_args(AutoscalingSpec.model_fields["metric"].annotation) if m != "num_requests_waiting"]
    decided = vllm(LLAMA_70B, slo=LATENCY, autoscaling={"metric": cache})
    assert decided.spec.autoscaling.target == AutoscalingSpec.model_fields["target"].default


@pytest.mark.parametrize(
    ("value", "text"), [(0.001, "0.001"), (0.004, "0.004"), (0.0049, "0.0049"), (80.0, "80"), (1234.567, "1234.57")]
)
def test_an_annotated_number_is_never_rounded_to_zero(value, text):
    """Two decimals at most, but a positive limit below 0.005 keeps its digits: `0` would read as a zero target."""
    notes = keys.for_slo({keys.SLO_NTPOT_MS: value}, {keys.SLO_REPLICA_NTPOT_MS: value})
    assert notes == {keys.SLO_NTPOT_MS: text, keys.SLO_REPLICA_NTPOT_MS: text}


def test_no_async_scheduling_in_extra_args_spares_each_request_the_queued_step():
    """vLLM 0.29.0 schedules asynchronously unless told `--no-async-scheduling` (ledger:
    vllm.async-scheduling.default-on, vllm.args.boolean-switches): a request then waits for the step running, not
    for one more already queued. The plan reads the switch from extraArgs and predicts with it, as `size` would."""
    target = {"outputTokensPerSecond": 3000}
    default, off = vllm(slo=target), vllm(slo=target, extraArgs=["--no-async-scheduling"])
    on = vllm(slo=target, extraArgs=["--async-scheduling"])
    assert on.slo.replica_ttft_ms == default.slo.replica_ttft_ms  # on is the pinned build's default
    assert off.slo.replica_ttft_ms < default.slo.replica_ttft_ms
    assert off.slo.replica_ttft_p99_ms < default.slo.replica_ttft_p99_ms
    assert off.slo.replica_output_tokens_per_second == default.slo.replica_output_tokens_per_second
    answer = expected(off, "vllm", 128, off.spec.max_num_batched_tokens, False, output_tokens_per_second=3000)
    assert answer.per_replica.ttft_ms == pytest.approx(off.slo.replica_ttft_ms)
