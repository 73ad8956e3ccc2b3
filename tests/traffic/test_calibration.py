"""The performance model against the published rows it is fitted on: the catalogue's efficiencies are the fit,
every row's in-sample and leave-one-out error is in the doc, and the model's parts (chunked prefill, queueing,
dtypes, KV capacity, uncalibrated pairs) behave as stated."""

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from tpu_stacks.catalog.engine_traffic import TRAFFIC
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, row_model
from tpu_stacks.catalog.tpu import GENERATIONS, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.traffic import TrafficTarget, evaluate_slice
from tpu_stacks.traffic.calibration import checks, fit_all, markdown_table
from tpu_stacks.traffic.fit import predict
from tpu_stacks.traffic.model import Workload, calibration, kv_capacity, md1_wait, operating_point

DOC = Path(__file__).resolve().parents[2] / "docs" / "sizing-for-traffic.md"
ERROR_BOUND = 0.50
"""Every fitting row within +-50% in sample."""


@cache
def _checks():
    return tuple(checks())


@cache
def _fits():
    return fit_all()


def test_every_row_is_sourced_and_in_exactly_one_calibration():
    fitted = [name for traffic in TRAFFIC.values() for c in traffic.calibrations for name in c.rows]
    assert sorted(fitted) == sorted(row.id for row in MEASUREMENTS)
    for row in MEASUREMENTS:
        assert row.source.startswith("https://github.com/")
        assert row_model(row).architecture.attention is not None
        assert slice_shape(row.generation, row.topology).chips == row.chips
        assert (row.batch is None) == (row.batch_cap is not None)


def test_every_row_is_within_the_error_bound():
    for check in _checks():
        assert abs(check.error) <= ERROR_BOUND, f"{check.row.id}: {check.error:+.0%}"


def test_each_calibration_is_the_fit_on_its_rows():
    for engine, traffic in TRAFFIC.items():
        for held in traffic.calibrations:
            fitted = _fits()[(engine, held.generation, held.implementation)]
            assert (held.weights, held.kv, held.compute) == pytest.approx(
                (fitted.weights, fitted.kv, fitted.compute), abs=0.011
            ), f"{engine} {held.generation}: refit gives {fitted}"


def test_a_wrong_calibration_would_be_caught():
    held = TRAFFIC["jetstream"].calibrations[0]
    wrong = replace(held, weights=held.weights / 2, kv=held.kv / 2, compute=held.compute / 2)
    row = next(r for r in MEASUREMENTS if r.id == held.rows[0])
    right_error = predict(row, held)[1] / row.output_tokens_per_second - 1
    wrong_error = predict(row, wrong)[1] / row.output_tokens_per_second - 1
    assert abs(wrong_error) > abs(right_error) + 0.2


def test_the_doc_states_todays_fit_and_leave_one_out_on_every_row():
    text = DOC.read_text(encoding="utf-8")
    assert markdown_table() in text, "regenerate: python -m tpu_stacks.traffic.calibration"
    multi = [c for c in _checks() if len(c.calibration.rows) > 1]
    assert multi and all(c.loo_error is not None for c in multi)


def test_every_generation_names_the_source_of_its_performance_figures():
    for gen in GENERATIONS:
        assert gen.performance_source.startswith("[D-")
        assert f"bf16 {gen.peak_bf16_flops / 1e12:g} TFLOP/s" in gen.performance_source
        assert f"HBM {gen.hbm_bandwidth_bytes_per_s / 1e9:g} GB/s" in gen.performance_source
        if gen.peak_int8_ops is not None:
            assert f"int8 {gen.peak_int8_ops / 1e12:g} TOPS" in gen.performance_source
        if gen.peak_fp8_flops is not None:
            assert f"fp8 {gen.peak_fp8_flops / 1e12:g} TFLOP/s" in gen.performance_source


def test_vllm_on_v4_has_no_calibration_and_is_refused_in_one_line():
    with pytest.raises(UserError) as refused:
        calibration("vllm", "v4")
    assert "\n" not in str(refused.value) and "no calibration for vllm on v4" in str(refused.value)
    candidate = evaluate_slice(
        lookup_model("llama-3-8b"), slice_shape("v4", "2x2x1"), TrafficTarget(output_tokens_per_second=1000)
    )
    assert not candidate.meets and "no calibration for vllm on v4" in candidate.why


def test_a_borrowed_calibration_is_flagged_in_the_figure():
    candidate = evaluate_slice(
        lookup_model("llama-3-8b"), slice_shape("v5e", "2x2"), TrafficTarget(output_tokens_per_second=1000)
    )
    assert "FLAGGED: no published row on v5e" in candidate.source
    own = evaluate_slice(
        lookup_model("llama-3-8b"), slice_shape("v6e", "2x2"), TrafficTarget(output_tokens_per_second=1000)
    )
    assert "no published row on" not in own.source  # v6e's own (flagged only for its implementation)


def test_a_dense_model_on_a_calibration_fitted_only_on_moe_rows_is_flagged():
    """vLLM's tpu7x fit rests on Qwen3-Coder 480B-A35B rows only: a dense model there says so, the MoE model not."""
    target = TrafficTarget(output_tokens_per_second=1000)
    dense = evaluate_slice(lookup_model("llama-3-8b"), slice_shape("tpu7x", "2x2x1"), target)
    assert "FLAGGED: " in dense.source and "efficiencies fitted only on mixture-of-experts rows" in dense.source
    moe = next(row for row in MEASUREMENTS if row.generation == "tpu7x")
    own = evaluate_slice(
        row_model(moe), slice_shape("tpu7x", "2x2x1"), target, weight_dtype="fp8", kv_dtype="fp8", measurements=()
    )
    assert "fitted only on" not in own.source


MODEL = lookup_model("llama-3.1-70b")


def _point(generation="tpu7x", topology="2x2x1", batch=64, **settings):
    workload = Workload(engine="vllm", input_tokens=1000, output_tokens=1000, **settings)
    return operating_point(MODEL, slice_shape(generation, topology), workload, batch)


def test_w8a8_fp8_runs_at_the_fp8_peak_and_weight_only_does_not():
    weight_only = _point(weight_dtype="fp8", kv_dtype="fp8")
    w8a8 = _point(weight_dtype="fp8", kv_dtype="fp8", activation_dtype="fp8")
    assert w8a8.ttft_ms < weight_only.ttft_ms  # the prompt's matmuls run at twice the peak
    assert w8a8.output_tokens_per_second > weight_only.output_tokens_per_second
    # v6e has no fp8 figure: W8A8 fp8 gains only the halved weight bytes there, like weight-only
    on_v6e = [_point("v6e", "2x4", weight_dtype="fp8", activation_dtype=act) for act in (None, "fp8")]
    assert on_v6e[0].output_tokens_per_second == pytest.approx(on_v6e[1].output_tokens_per_second)


def test_prefill_is_chunked_by_the_step_budget():
    small, large = _point(batched_tokens=512), _point(batched_tokens=4096)
    assert small.ttft_ms > large.ttft_ms  # three chunks against one
    assert small.ttft_p99_ms >= small.ttft_ms


def test_md1_queue():
    assert md1_wait(0.5, 1.0, None) == pytest.approx(0.5)  # rho S / (2 (1 - rho))
    assert md1_wait(0.5, 1.0, 0.5) == 0.0  # half the arrivals find the server idle
    assert md1_wait(0.5, 1.0, 0.99) > md1_wait(0.9, 1.0, 0.5) > 0
    assert md1_wait(1.0, 1.0, 0.5) == float("inf")


def test_kv_capacity_follows_the_engines_memory_fraction():
    shape = slice_shape("v6e", "2x4")
    workload = Workload(engine="vllm", input_tokens=1000, output_tokens=1000)
    assert kv_capacity(MODEL, shape, replace(workload, memory_fraction=0.98)) > kv_capacity(MODEL, shape, workload)
