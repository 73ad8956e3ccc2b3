"""catalog/model_shape.py's arithmetic, each against a figure found apart from it: the dtypes' widths from their
names, the KV cache per token from the attention shape (2 x layers x KV heads x head_dim x bytes, [SB]
inference.md), the active parameters of a mixture of experts from the published total less the experts a token
skips, and the weight bytes a server holds from the checkpoint's own index.
"""

import re

import pytest
from pydantic import ValidationError

from tpu_stacks.catalog import models
from tpu_stacks.catalog.model_shape import BYTES_PER_DTYPE, Attention, ModelArchitecture, dtype_bytes
from tpu_stacks.errors import UserError

LLAMA3_8B = models.lookup_model("meta-llama/Meta-Llama-3-8B").architecture
GEMMA2_9B = models.lookup_model("google/gemma-2-9b").architecture
MIXTRAL = models.lookup_model("mistralai/Mixtral-8x7B-v0.1").architecture
QWEN3_MOE = models.lookup_model("Qwen/Qwen3-30B-A3B").architecture


@pytest.mark.parametrize("dtype", sorted(BYTES_PER_DTYPE))
def test_a_dtype_takes_the_bits_its_name_says(dtype):
    """fp32 is 32 bits, bf16 16, int4 4 (two values a byte): the width is in the name."""
    bits = int(re.search(r"\d+$", dtype).group())
    assert dtype_bytes(dtype) == bits / 8


def test_an_unknown_dtype_is_refused_naming_the_key():
    with pytest.raises(UserError, match=r"^vllm.dtype: 'fp6' is not a supported dtype; valid: fp32, bf16"):
        dtype_bytes("fp6", "vllm.dtype")


def test_kv_cache_per_token():
    """Llama 3 8B: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB a token; Qwen3-30B-A3B: 2 x 48 x 4
    x 128 x 2 = 96 KiB; an fp8 cache half of it."""
    assert LLAMA3_8B.kv_bytes_per_token() == 128 * 1024
    assert QWEN3_MOE.kv_bytes_per_token() == 96 * 1024
    assert LLAMA3_8B.kv_bytes_per_token("fp8") == 64 * 1024


def test_a_model_without_an_attention_shape_has_no_kv_figure():
    assert models.custom_model("acme/x", 7e9).architecture.kv_bytes_per_token() is None


def test_windowed_layers_hold_only_the_window():
    """Gemma 2 9B: 42 layers, 21 of them local with a 4096-token window, 8 KV heads of 256 (its config.json). At 8192
    tokens the global layers hold 8192 tokens, the local ones 4096; below the window every layer holds them all."""
    attention = GEMMA2_9B.attention
    per_token_per_layer = 2 * 2 * 256 * 8
    assert attention.kv_bytes(8192, 3, 2) == per_token_per_layer * (21 * 8192 + 21 * 4096) * 3
    assert attention.kv_bytes(1000, 1, 2) == per_token_per_layer * 42 * 1000


def test_active_parameters_are_the_total_less_the_experts_a_token_skips():
    """Mixtral 8x7B routes each token to 2 of 8 experts: its 46,702,792,704 parameters (the index, halved) less 6
    experts of 3 x 4096 x 14336 in each of 32 layers, the "12.9B active" of Mistral's announcement. Qwen3-30B-A3B:
    8 of 128 experts of 3 x 2048 x 768 in 48 layers, its model card's "3.3B activated"."""
    assert MIXTRAL.active_params == 46_702_792_704 - 32 * 6 * 3 * 4096 * 14336
    assert QWEN3_MOE.active_params == 30_532_122_624 - 48 * 120 * 3 * 2048 * 768
    assert LLAMA3_8B.active_params == LLAMA3_8B.params


def test_a_declared_count_is_the_count():
    custom = models.custom_model("acme/x", 7e9, layers=32, kv_heads=8, head_dim=128).architecture
    assert custom.params == custom.active_params == 7_000_000_000


def _with_index(total_size: int, checkpoint: str, quantized: str | None = None) -> ModelArchitecture:
    return LLAMA3_8B.model_copy(
        update={"weight_bytes": total_size, "checkpoint_dtype": checkpoint, "quantized_dtype": quantized}
    )


def test_the_weights_a_server_holds():
    """The served dtype decides: the files' bytes in their own dtype, scaled to the dtype vLLM serves (bf16 for an
    fp32 checkpoint), and any other dtype from the parameter count (Llama 3 8B: 8,030,261,248)."""
    bf16 = _with_index(16_060_522_496, "bf16")
    assert bf16.weights("bf16") == (
        16_060_522_496,
        "the bf16 checkpoint's bytes (model.safetensors.index.json total_size)",
    )
    fp32 = _with_index(32_121_044_992, "fp32")
    assert fp32.weights("bf16") == (
        16_060_522_496,
        "the fp32 checkpoint's bytes (model.safetensors.index.json total_size) x 2/4, served in bf16",
    )
    assert fp32.weights_bytes("fp32") == 32_121_044_992
    assert bf16.weights("int8") == (8_030_261_248, "8,030,261,248 params x int8")
    assert LLAMA3_8B.weights_bytes("int4") == 4_015_130_624


def test_the_served_dtype_is_the_quantized_one_else_bf16():
    assert LLAMA3_8B.serving_dtype == "bf16"
    assert _with_index(8_500_000_000, "fp8", "fp8").serving_dtype == "fp8"


def test_same_weights_ignores_names_and_context_but_not_the_dtype():
    """Llama 3 8B and Llama 3.1 8B: one shape, 8k and 128k contexts; an fp8 copy is another set of weights."""
    llama31 = models.lookup_model("meta-llama/Llama-3.1-8B-Instruct").architecture
    assert LLAMA3_8B.same_weights(llama31) and llama31.same_weights(LLAMA3_8B)
    assert not LLAMA3_8B.same_weights(LLAMA3_8B.model_copy(update={"quantized_dtype": "fp8"}))
    assert not LLAMA3_8B.same_weights(GEMMA2_9B)


def test_the_hugging_face_id_is_the_first():
    assert LLAMA3_8B.hf_id == "meta-llama/Meta-Llama-3-8B"
    assert models.custom_model("acme/x", 7e9).architecture.hf_id is None


def test_the_smallest_attention_shape_is_one_of_each():
    one = Attention(layers=1, kv_heads=1, head_dim=1, query_heads=1, sliding_window=1, windowed_layers=0)
    assert one.kv_bytes(1, 1, 2) == 2 * 2
    for field in ("layers", "kv_heads", "head_dim", "query_heads", "sliding_window"):
        with pytest.raises(ValidationError):
            Attention(**{"layers": 1, "kv_heads": 1, "head_dim": 1, field: 0})
    with pytest.raises(ValidationError):
        Attention(layers=1, kv_heads=1, head_dim=1, windowed_layers=-1)


def test_a_window_without_windowed_layers_windows_none():
    """A workload's annotations may carry a window without a count (`attention_extra`): no layer is taken as
    windowed, so the cache is the full one of every layer (2 x 2 bytes x 128 x 8 heads x 32 layers x 8192 tokens)."""
    custom = models.custom_model(
        "acme/x", 8e9, layers=32, kv_heads=8, head_dim=128, attention_extra={"sliding_window": 4096}
    ).architecture
    assert custom.attention.windowed_layers == 0
    assert custom.attention.kv_bytes(8192, 1, 2) == 2 * 2 * 128 * 8 * 32 * 8192


def test_a_shape_without_its_widths_names_the_model_when_counted():
    """A record with an attention shape but no widths (no d_model, d_ff, vocab) cannot be counted: the failure names
    it rather than a `None * int` deep in the formula."""
    bare = ModelArchitecture(name="acme/bare", display_name="bare", attention=LLAMA3_8B.attention, source="test")
    with pytest.raises(AssertionError, match="acme/bare"):
        _ = bare.params
