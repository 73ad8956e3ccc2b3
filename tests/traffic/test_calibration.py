"""The performance model against the published rows: bounded error, the efficiencies are the fit, and the doc
states today's error on every row."""

from pathlib import Path

import pytest

from tpu_stacks.catalog.engine_traffic import TRAFFIC
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS
from tpu_stacks.catalog.tpu import GENERATIONS, slice_shape
from tpu_stacks.traffic.calibration import checks, fitted_efficiency, markdown_table
from tpu_stacks.traffic.model import ENGINE_EFFICIENCY

CALIBRATED = sorted(name for name, record in TRAFFIC.items() if record.calibrated)
"""The engines whose efficiency is fitted to published rows (an uncalibrated one borrows its number: SGLang-JAX)."""

DOC = Path(__file__).resolve().parents[2] / "docs" / "sizing-for-traffic.md"
ERROR_BOUND = 0.50
"""Every shipped row within +-50%: the model is a roofline with one number per engine, not a simulator."""


def test_enough_sourced_rows_across_generations_and_engines():
    assert len(MEASUREMENTS) >= 4
    assert len({row.generation for row in MEASUREMENTS}) >= 2
    assert {row.engine for row in MEASUREMENTS} == set(CALIBRATED)
    for row in MEASUREMENTS:
        assert row.source.startswith("https://github.com/")
        lookup_model(row.model)  # a catalogue model: the model can describe it
        assert slice_shape(row.generation, row.topology).chips == row.chips
        assert (row.batch is None) == (row.batch_cap is not None)


@pytest.mark.parametrize("index", range(len(MEASUREMENTS)))
def test_every_row_is_within_the_error_bound(index):
    check = checks()[index]
    assert abs(check.error) <= ERROR_BOUND, f"{check.row.model} {check.row.weight_dtype}: {check.error:+.0%}"


@pytest.mark.parametrize("engine", CALIBRATED)
def test_each_engine_efficiency_is_the_fit_on_its_rows(engine):
    assert fitted_efficiency(engine) == pytest.approx(ENGINE_EFFICIENCY[engine], abs=0.01)


def test_a_wrong_efficiency_would_be_caught(monkeypatch):
    monkeypatch.setitem(ENGINE_EFFICIENCY, "vllm", ENGINE_EFFICIENCY["vllm"] * 2)
    vllm = [c for c in checks() if c.row.engine == "vllm"]
    assert all(c.error > ERROR_BOUND for c in vllm)


def test_the_doc_states_todays_error_on_every_row():
    text = DOC.read_text(encoding="utf-8")
    assert markdown_table() in text, "regenerate: python -m tpu_stacks.traffic.calibration"
    for check in checks():
        assert f"{check.error:+.0%}" in text


def test_every_generation_names_the_source_of_its_performance_figures():
    for gen in GENERATIONS:
        assert gen.performance_source.startswith("[D-")
        assert f"bf16 {gen.peak_bf16_flops / 1e12:g} TFLOP/s" in gen.performance_source
        assert f"HBM {gen.hbm_bandwidth_bytes_per_s / 1e9:g} GB/s" in gen.performance_source
        if gen.peak_int8_ops is not None:
            assert f"int8 {gen.peak_int8_ops / 1e12:g} TOPS" in gen.performance_source
