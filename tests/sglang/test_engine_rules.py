"""sglang/engine.py's two rules on their own: the model classes the pinned SGLang-JAX serves (refused otherwise, with
a did-you-mean for a near miss) and the dtype it holds a model in at `--dtype auto`.

Outside source: the sglang-jax 0.0.1.post1 wheel's model registry (sgl_jax/srt/models/: `EntryClass =
QWenLMHeadModel` qwen.py:450, `Qwen3ForCausalLM` qwen3.py:519, `Qwen3MoeForCausalLM` qwen3_moe.py:542; ledger rows
sglang.model.qwen, sglang.model.qwen3, sglang.model.qwen3-moe) and its `_STR_DTYPE_TO_JAX_DTYPE` table (ledger:
sglang.dtype.names)."""

from __future__ import annotations

import pytest

from tpu_stacks.catalog.model_shape import ModelArchitecture
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.errors import UserError
from tpu_stacks.sglang.engine import _served_dtype, check_architecture

QWEN3 = lookup_model("Qwen/Qwen3-30B-A3B").architecture
SERVED = "QWenLMHeadModel, Qwen3ForCausalLM, Qwen3MoeForCausalLM"  # the registry's three EntryClass names


def _as(architecture: str | None, **update: object) -> ModelArchitecture:
    return QWEN3.model_copy(update={"architecture": architecture, **update})


@pytest.mark.parametrize("architecture", [None, "QWenLMHeadModel", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"])
def test_the_served_classes_and_an_unknown_one_pass(architecture: str | None) -> None:
    """A config without `architectures` is not refused here (nothing says it is not one of the three)."""
    check_architecture(_as(architecture), "sglang.model", "org/m")


def test_another_class_is_refused_with_the_three_it_serves() -> None:
    """Gemma 3 is near none of the three: no did-you-mean."""
    with pytest.raises(UserError) as caught:
        check_architecture(_as("Gemma3ForConditionalGeneration"), "sglang.model", "org/m")
    assert str(caught.value) == (
        "sglang.model: 'org/m' is a Gemma3ForConditionalGeneration (config.json architectures[0]): sglang-jax 0.0.1.post1 serves only "
        f"{SERVED}; serve it with vllm, or pick a Qwen/Qwen3 model"
    )


@pytest.mark.parametrize(
    "architecture", ["LlamaForCausalLM", "MistralForCausalLM", "Qwen3NextForCausalLM", "Qwen2ForCausalLM"]
)
def test_another_family_sharing_for_causal_lm_is_no_misspelling(architecture: str) -> None:
    """A Llama model is not a misspelt Qwen3 (difflib gives 0.69 for the shared `ForCausalLM`, over its default
    cutoff of 0.6 that named Qwen3ForCausalLM here before): the refusal lists what is served, suggests none. Nor is
    Qwen2.5's Qwen2ForCausalLM (Qwen/Qwen2.5-7B-Instruct's config.json) a misspelt Qwen3ForCausalLM, though one
    letter apart (0.94): its digit names another version, which a slip of the keyboard does not make."""
    with pytest.raises(UserError) as caught:
        check_architecture(_as(architecture), "sglang.model", "org/m")
    assert str(caught.value).endswith(f"serves only {SERVED}; serve it with vllm, or pick a Qwen/Qwen3 model")


def test_a_near_miss_is_named() -> None:
    with pytest.raises(UserError) as caught:
        check_architecture(_as("Qwen3ForCausalLm"), "sglang.model", "org/m")
    assert str(caught.value).endswith(
        "; did you mean a Qwen3ForCausalLM model? serve it with vllm, or pick a Qwen/Qwen3 model"
    )


@pytest.mark.parametrize(
    ("torch_dtype", "served"),
    [
        ("bfloat16", "bf16"),
        ("float16", "fp16"),
        ("half", "fp16"),
        ("float32", "fp32"),
        ("float", "fp32"),
        (None, "fp32"),
    ],
)
def test_auto_keeps_the_configs_dtype_and_fp32_without_one(torch_dtype: str | None, served: str) -> None:
    """ledger: sglang.dtype.auto-keeps-config, sglang.dtype.fp32-without-one."""
    assert _served_dtype(_as("Qwen3ForCausalLM", config_torch_dtype=torch_dtype)) == served


def test_a_quantized_checkpoint_keeps_the_sizings_bf16() -> None:
    """A quantized checkpoint is not sized by `torch_dtype` (an fp32 config would double a bf16 model): the sizing's
    default, bf16 (`ModelArchitecture.serving_dtype`'s fallback)."""
    assert _served_dtype(_as("Qwen3ForCausalLM", quantized_dtype="int8", config_torch_dtype="float32")) == "bf16"
