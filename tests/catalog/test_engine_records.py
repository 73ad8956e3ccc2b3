"""The engine records' answers where the shipped tables do not tell them apart: a rename vLLM made, a command that
marks no engine, an engine's calibration per generation (its own, borrowed, none), and which build bounds the slices
an engine deploys on."""

from tpu_stacks.catalog.engine_traffic import CATALOGUED_TRAFFIC, VLLM_CALIBRATIONS
from tpu_stacks.catalog.engines.record import CommandMarker, Served
from tpu_stacks.catalog.engines.traffic_record import EngineTraffic
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.tpu import generation, slice_shape

VLLM_TRAFFIC = CATALOGUED_TRAFFIC["vllm"]


def test_a_renamed_metric_names_its_new_name():
    """vLLM's V1 engine renamed `vllm:gpu_cache_usage_perc` to `vllm:kv_cache_usage_perc` (vllm/v1/metrics/loggers.py,
    the old name hidden from 0.10): a user's old HPA is told the new name."""
    renamed = VLLM.renamed_to("vllm:gpu_cache_usage_perc")
    assert renamed is not None and renamed.new == "vllm:kv_cache_usage_perc"


def test_a_marker_that_does_not_match_says_false():
    """`marks` is typed `-> bool`: a miss is False, whichever way the marker is written."""
    assert CommandMarker(contains="vllm serve").marks(["python", "-m", "other"]) is False
    assert CommandMarker(program="vllm", then="serve").marks(["vllm", "bench"]) is False


def test_a_generation_is_calibrated_on_its_own_rows_or_a_lenders_flagged_or_not_at_all():
    """vLLM's fits: v6e and tpu7x from their rows; v5e borrows v6e's (tpu-inference 0.29.0 serves it, no row
    measures it), flagged; v4 is served by no tpu-inference build and has none."""
    v6e, tpu7x = VLLM_CALIBRATIONS
    assert VLLM_TRAFFIC.calibration("v6e") == (v6e, "")
    assert VLLM_TRAFFIC.calibration("tpu7x") == (tpu7x, "")
    assert VLLM_TRAFFIC.calibration("v5e") == (
        v6e,
        "no published row on v5e: efficiencies of v6e (vLLM main 2025-04-11 (PyTorch/XLA)) used",
    )
    assert VLLM_TRAFFIC.calibration("v4") == (None, "no calibration for vllm on v4 (calibrated: v6e, tpu7x)")


def test_an_uncalibrated_reason_is_given_only_when_nothing_is_calibrated():
    """`uncalibrated` says why an engine has no fit at all; an engine with fits names the generations it has."""
    partly = EngineTraffic(
        sizing_engine="vllm",
        kv_cache="paged",
        builds=(VLLM,),
        calibrations=VLLM_CALIBRATIONS,
        uncalibrated="no row measures this build",
    )
    assert partly.calibration("v4") == (None, "no calibration for vllm on v4 (calibrated: v6e, tpu7x)")


def test_the_newest_build_bounds_the_single_host_slices():
    """`builds`: the last is the newest, whose served generations bound a single-host replica; an older build that
    served another generation does not."""
    older = VLLM.model_copy(update={"version": "older", "serves": (Served(generation="v5e", source="test"),)})
    newer = VLLM.model_copy(update={"serves": (Served(generation="v6e", source="test"),)})
    record = EngineTraffic(sizing_engine="vllm", kv_cache="paged", builds=(older, newer), calibrations=())
    assert record.deploys(slice_shape(generation("v6e"), "2x2"))
    assert not record.deploys(slice_shape(generation("v5e"), "2x4"))


def test_a_declaration_holds_the_versions_of_one_engine():
    """`EngineDeclaration.versions`: one engine's pinned records, oldest first, so its name is any of theirs."""
    from tpu_stacks.catalog.engines.declared import declarations

    for declared in declarations():
        assert {version.engine for version in declared.versions} == {declared.name}


def test_an_auto_kv_cache_holds_the_activations_dtype():
    """vLLM's `--kv-cache-dtype auto` "will use model data type" (vllm/config/cache.py CacheDType): the dtype the
    model computes in, which for int8/fp8/int4 weights is bf16 (QUANTIZED_WEIGHTS: the weights are dequantized to it)
    and otherwise the weights' own; a named cache dtype is that dtype, and an unknown one is not sized."""
    from tpu_stacks.catalog.engines.dtypes import QUANTIZED_WEIGHTS
    from tpu_stacks.catalog.engines.vllm import VLLM_DTYPES

    assert set(QUANTIZED_WEIGHTS) == {"int8", "fp8", "int4"}
    assert VLLM_DTYPES.kv_cache("auto", "int8") == VLLM_DTYPES.kv_cache("auto", "fp8") == "bf16"
    assert VLLM_DTYPES.kv_cache("auto", "fp32") == "fp32"
    assert VLLM_DTYPES.kv_cache("auto", "fp16") == "fp16"
    assert VLLM_DTYPES.kv_cache("fp8_e5m2", "bf16") == "fp8"
    assert VLLM_DTYPES.kv_cache("int4", "bf16") is None


def test_the_stacks_batched_tokens_default_is_the_documented_one():
    """docs/vllm.md's configuration table (written by hand) gives `maxNumBatchedTokens` a default of 512: what the
    stack passes as `--max-num-batched-tokens` and the traffic model's step for a workload that does not say."""
    import re
    from pathlib import Path

    from tpu_stacks.catalog.engines.vllm import STACK_BATCHED_TOKENS

    doc = (Path(__file__).parents[2] / "docs" / "vllm.md").read_text()
    documented = re.search(r"^\| `maxNumBatchedTokens` \| (\d+) \| `--max-num-batched-tokens` \|$", doc, re.M)
    assert documented and int(documented[1]) == STACK_BATCHED_TOKENS
