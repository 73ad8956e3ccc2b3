"""The model implementation a vLLM TPU calibration is keyed by, against tpu-inference 0.29.0's own source.

tpu-inference (the pinned vllm-tpu 0.29.0's backend) runs a model either through its own JAX class (`flax_nnx`) or
through vLLM's PyTorch class on torchax (`vllm`): MODEL_IMPL_TYPE, `auto` when unset (tpu_inference/envs.py line
257), resolves `auto` to `vllm` only for the four classes of `_VLLM_PREFERRED_ARCHITECTURES`
(tpu_inference/models/common/model_loader.py lines 57-61, rule at line 757), and a class its JAX registry
(`_get_model_architecture`, lines 93-110: Llama at 95, Qwen3 at 97, GptOss at 101; no Gemma 1-3, Mixtral or Qwen3
MoE) lacks falls back to vLLM's PyTorch class (line 674). The expectations below
are written from those lines, not from the code under test. The fitted rows' implementations are from their sources:
the Qwen3-Coder recipe sets `MODEL_IMPL_TYPE=vllm` (tpu-recipes 8f0a9d2, README lines 247-248); vLLM PR 16458 ran
the PyTorch/XLA backend that tpu-inference replaced. The judged Qwen3-32B recipe (21d9579, lines 239-250) sets none.
"""

from dataclasses import replace

import pytest

from tests.traffic.judge.evaluate import judge, model_of, rows
from tpu_stacks.catalog.engine_models import VLLM_IMPLEMENTATIONS, vllm_architectures, vllm_implementation
from tpu_stacks.catalog.engine_traffic import TRAFFIC
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, QWEN3_CODER_480B
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.catalog.upstream import text
from tpu_stacks.traffic import TrafficTarget, evaluate_slice
from tpu_stacks.traffic.model import calibration

VLLM_PREFERRED_AT_0_29_0 = {
    "GptOssForCausalLM",
    "Qwen3MoeForCausalLM",
    "KimiK25ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
}
"""model_loader.py lines 58-61 at tpu-inference 0.29.0."""


def _arch(name: str):
    return QWEN3_CODER_480B.model_copy(update={"name": name, "architecture": name})


def test_the_generated_preferred_list_is_tpu_inferences():
    assert set(vllm_architectures()["vllm_preferred"]) == VLLM_PREFERRED_AT_0_29_0


@pytest.mark.parametrize(
    ("architecture", "setting", "runs"),
    [
        ("Qwen3ForCausalLM", None, "flax_nnx"),  # in the JAX registry, not preferred: auto -> flax_nnx (line 757)
        ("LlamaForCausalLM", None, "flax_nnx"),
        ("Qwen2ForCausalLM", None, "flax_nnx"),
        ("Qwen3MoeForCausalLM", None, "vllm"),  # preferred (line 59)
        ("GptOssForCausalLM", None, "vllm"),  # preferred although the JAX registry holds it
        ("GemmaForCausalLM", None, "vllm"),  # no JAX class: flax_nnx falls back (line 674)
        ("Gemma2ForCausalLM", None, "vllm"),
        ("MixtralForCausalLM", None, "vllm"),
        ("LlamaForCausalLM", "vllm", "vllm"),  # MODEL_IMPL_TYPE=vllm is taken as it is
        ("GptOssForCausalLM", "flax_nnx", "flax_nnx"),  # and flax_nnx for a class the registry holds (line 101)
        ("GemmaForCausalLM", "flax_nnx", "vllm"),  # but not for one it lacks
        ("Qwen3MoeForCausalLM", "flax_nnx", "vllm"),  # the registry has Qwen3ForCausalLM, not the MoE class
        ("LlamaForCausalLM", "auto", "flax_nnx"),
    ],
)
def test_the_implementation_the_pinned_build_runs(architecture, setting, runs):
    assert vllm_implementation(_arch(architecture), setting) == runs


def test_a_model_without_a_class_has_no_known_implementation():
    assert vllm_implementation(QWEN3_CODER_480B.model_copy(update={"architecture": None})) is None


def test_the_catalogued_models_through_the_engine_record():
    record = TRAFFIC["vllm"]
    assert record.implementation_of(lookup_model("llama-3.1-70b").architecture) == "flax_nnx"
    assert record.implementation_of(lookup_model("Qwen/Qwen2.5-1.5B-Instruct").architecture) == "flax_nnx"
    assert record.implementation_of(lookup_model("gemma-7b").architecture) == "vllm"
    assert record.implementation_of(lookup_model("Qwen/Qwen3-30B-A3B").architecture) == "vllm"
    assert TRAFFIC["jetstream"].implementation_of(lookup_model("llama-3-8b").architecture) is None


def test_every_fitted_row_is_tagged_and_every_calibration_is_one_implementation():
    by_id = {row.id: row for row in MEASUREMENTS}
    for engine, traffic in TRAFFIC.items():
        for cal in traffic.calibrations:
            ran = {by_id[name].implementation for name in cal.rows}
            assert ran == {cal.implementation}, f"{engine} {cal.generation}: rows ran {ran}"
            if traffic.implementation is not None:
                assert cal.implementation in VLLM_IMPLEMENTATIONS
    assert by_id["vllm-v6e-llama3-8b"].implementation == "torch_xla"
    for row in MEASUREMENTS:
        if row.model == QWEN3_CODER_480B.name:  # MODEL_IMPL_TYPE=vllm in the recipe: what tpu-inference runs
            assert row.implementation == vllm_implementation(QWEN3_CODER_480B, "vllm") == "vllm"


def test_the_lookup_takes_the_calibration_of_the_implementation_the_model_runs():
    record = TRAFFIC["vllm"]
    tpu7x = next(c for c in record.calibrations if c.generation == "tpu7x")
    dense = replace(tpu7x, implementation="flax_nnx", weights=0.5, rows=())
    both = replace(record, calibrations=(*record.calibrations, dense))
    llama = lookup_model("llama-3.1-70b").architecture
    assert both.calibration("tpu7x", llama) == (dense, "")
    assert both.calibration("tpu7x", QWEN3_CODER_480B) == (tpu7x, "")
    assert both.calibration("tpu7x") == (tpu7x, "")  # no model: the generation's first (its own rows' check)


def test_a_model_whose_implementation_has_no_rows_is_flagged_in_one_line():
    record = TRAFFIC["vllm"]
    tpu7x = next(c for c in record.calibrations if c.generation == "tpu7x")
    found, flag = record.calibration("tpu7x", lookup_model("llama-3.1-70b").architecture)
    assert found == tpu7x
    assert flag == (
        "the pinned build runs LlamaForCausalLM as tpu-inference's own JAX model (flax_nnx), which no fitted row on tpu7x ran:"
        " efficiencies fitted on rows of vLLM's PyTorch model through tpu-inference's torchax (MODEL_IMPL_TYPE=vllm) used"
    )
    assert record.calibration("tpu7x", QWEN3_CODER_480B) == (tpu7x, "")
    found, flag = record.calibration("v5e", lookup_model("gemma-7b").architecture)  # borrowed, and another one
    assert found.generation == "v6e" and "\n" not in flag
    assert flag.startswith("no published row on v5e: efficiencies of v6e")
    assert flag.endswith(
        "; the pinned build runs GemmaForCausalLM as vLLM's PyTorch model through tpu-inference's torchax (MODEL_IMPL_TYPE=vllm), which no fitted row on v6e ran:"
        " efficiencies fitted on rows of vLLM's PyTorch model on its PyTorch/XLA backend (before tpu-inference) used"
    )
    unknown = QWEN3_CODER_480B.model_copy(update={"architecture": None})
    assert "unknown" in record.calibration("tpu7x", unknown)[1]


def test_the_figure_of_a_stand_in_calibration_says_so():
    target = TrafficTarget(output_tokens_per_second=1000)
    shape = slice_shape("tpu7x", "2x2x1")
    llama = evaluate_slice(lookup_model("llama-3.1-70b"), shape, target)
    assert (
        "FLAGGED:" in llama.source
        and "runs LlamaForCausalLM as tpu-inference's own JAX model (flax_nnx)" in llama.source
    )
    moe = evaluate_slice(lookup_model("Qwen/Qwen3-30B-A3B"), shape, target)
    assert "which no fitted row" not in moe.source


def test_the_judged_dense_qwen3_rows_are_flagged_not_silent():
    judged = [judge(row) for row in rows() if row["model"] == "Qwen/Qwen3-32B"]
    assert len(judged) == 3
    for j in judged:
        assert (
            "runs Qwen3ForCausalLM as tpu-inference's own JAX model (flax_nnx), which no fitted row on tpu7x ran"
            in j.flag
        )
    assert calibration("vllm", "tpu7x", model_of("Qwen/Qwen3-32B"))[1] == judged[0].flag


def test_the_architecture_rule_is_the_default_load_formats():
    """`auto` under `--load-format runai_streamer` sends a JAX class without a weight loader (Qwen3ForCausalLM) to
    vLLM's PyTorch model before the preferred list is read (model_loader.py lines 730-742; ledger:
    tpu-inference.model-impl.runai-streamer); the rule above is vLLM's default load format's, `auto` (vllm/config/
    load.py line 30; ledger: vllm.load-format.default)."""
    assert text("vllm.load-format.default") == "auto"
    assert vllm_implementation(_arch("Qwen3ForCausalLM")) == "flax_nnx"
