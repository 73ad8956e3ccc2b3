"""catalog/hf_config.py's rules at their edges: which layers a window covers, the rope-scaled context, the quantized
dtypes, the dense layers of a mixture of experts and the boundaries of each refusal.

Each expected value comes from the rule's own source, named in the test: transformers' configuration and modeling
classes (which layers are sliding, which MLPs are sparse), vLLM's `_get_and_verify_max_len` (vllm-tpu 0.29.0,
vllm/config/model.py) for the context, the quantization libraries' config keys.
"""

import json

import pytest

from tpu_stacks.catalog.hf_config import (
    architecture_from_config,
    max_context,
    quantized_dtype,
    text_config,
    total_size,
)
from tpu_stacks.catalog.model_catalogue import CONFIG_DIR
from tpu_stacks.errors import UserError

QWEN25_7B = json.loads((CONFIG_DIR / "Qwen/Qwen2.5-7B-Instruct/config.json").read_text())
QWEN3_MOE = json.loads((CONFIG_DIR / "Qwen/Qwen3-30B-A3B/config.json").read_text())
GEMMA2_9B = json.loads((CONFIG_DIR / "google/gemma-2-9b/config.json").read_text())
MISTRAL = {**QWEN25_7B, "model_type": "mistral", "use_sliding_window": None, "max_window_layers": None}
"""Qwen2.5-7B's shape as a Mistral config: `sliding_window` alone means every layer is windowed."""


def parse(config: dict):
    return architecture_from_config(config, name="acme/test", source="test")


def window(config: dict) -> tuple[int | None, int]:
    attention = parse(config).attention
    return attention.sliding_window, attention.windowed_layers


# --- which layers a window covers ---


def test_no_window_means_no_windowed_layer():
    assert window(QWEN25_7B) == (None, 0)  # use_sliding_window: false
    assert window({**MISTRAL, "sliding_window": None}) == (None, 0)


def test_a_window_of_zero_is_no_window_and_a_negative_one_is_refused():
    """`sliding_window: 0` is what some exporters write for "none"; a window of one token is still a window."""
    assert window({**MISTRAL, "sliding_window": 0}) == (None, 0)
    assert window({**MISTRAL, "sliding_window": 1}) == (1, 28)
    with pytest.raises(UserError, match=r"^test: sliding_window: -1 is not a whole number of tokens"):
        parse({**MISTRAL, "sliding_window": -1})


def test_layer_types_decide_and_no_sliding_layer_means_no_window():
    """transformers' per-layer `layer_types`: a window applies only to `sliding_attention` layers; an empty list says
    nothing, so the window covers every layer as Mistral's does."""
    full = ["full_attention"] * 28
    assert window({**MISTRAL, "sliding_window": 4096, "layer_types": full}) == (None, 0)
    assert window({**MISTRAL, "sliding_window": None, "layer_types": ["sliding_attention"] * 28}) == (None, 0)
    assert window({**MISTRAL, "sliding_window": 4096, "layer_types": []}) == (4096, 28)


def test_gemma2_windows_the_even_layers_so_an_odd_count_rounds_up():
    """transformers Gemma2Config: `layer_types` is sliding where `(i + 1) % 2` is true, layers 0, 2, 4...: 42 layers
    have 21 sliding ones, 3 layers have 2."""
    assert window(GEMMA2_9B) == (4096, 21)
    assert window({**GEMMA2_9B, "num_hidden_layers": 3}) == (4096, 2)


def test_gemma3_keeps_every_sixth_layer_global():
    """transformers Gemma3TextConfig: a layer is sliding where `(i + 1) % sliding_window_pattern` is true, so of
    Gemma 3 27B's 62 layers (pattern 6) 10 are global and 52 windowed; a pattern of 1 makes every layer global."""
    gemma3 = {**GEMMA2_9B, "model_type": "gemma3_text", "num_hidden_layers": 62, "sliding_window": 1024}
    assert window({**gemma3, "sliding_window_pattern": 6}) == (1024, 52)
    assert window({**gemma3, "sliding_window_pattern": 1}) == (1024, 0)
    assert window({**gemma3, "sliding_window_pattern": 0}) == (1024, 62)  # no pattern: the window on every layer


def test_qwen2_windows_the_layers_from_max_window_layers_on():
    """transformers Qwen2Config: with `use_sliding_window`, layer i is sliding when `i >= max_window_layers`; a
    max_window_layers beyond the layer count leaves none windowed."""
    qwen = {**QWEN25_7B, "use_sliding_window": True, "sliding_window": 4096}
    assert window({**qwen, "max_window_layers": 20}) == (4096, 8)
    assert window({**qwen, "max_window_layers": 40}) == (4096, 0)


# --- the context, as vLLM derives it ---


def test_no_length_key_is_no_context():
    config = {key: value for key, value in QWEN25_7B.items() if key != "max_position_embeddings"}
    assert max_context(config) == (None, "")


def test_a_length_of_one_token_is_a_length():
    assert max_context({**QWEN25_7B, "max_position_embeddings": 1}) == (1, "max_position_embeddings")


def test_the_rope_factor_scales_down_as_well_as_up_and_a_zero_factor_is_ignored():
    """vLLM multiplies the length by `factor` whatever its size (0.5 halves it); a factor of 0 is no scaling."""
    half = {**QWEN25_7B, "rope_scaling": {"factor": 0.5, "rope_type": "linear"}}
    assert max_context(half) == (16384, "max_position_embeddings x rope_scaling.factor 0.5 (linear)")
    zero = {**QWEN25_7B, "rope_scaling": {"factor": 0, "rope_type": "linear"}}
    assert max_context(zero) == (32768, "max_position_embeddings")


def test_only_yarn_scales_the_original_length():
    """vLLM: `if rope_type == "yarn": derived_max_model_len = rope_scaling["original_max_position_embeddings"]`,
    then times the factor; another rope type scales `max_position_embeddings` even when an original is given."""
    yarn = {"factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "yarn"}
    assert max_context({**QWEN25_7B, "rope_scaling": yarn}) == (
        32768,
        "rope_scaling.original_max_position_embeddings x rope_scaling.factor 4 (yarn)",
    )
    dynamic = {**yarn, "rope_type": "dynamic"}
    assert max_context({**QWEN25_7B, "rope_scaling": dynamic})[0] == 131072
    bare_yarn = {"factor": 4.0, "rope_type": "yarn"}  # no original: max_position_embeddings is scaled
    assert max_context({**QWEN25_7B, "rope_scaling": bare_yarn})[0] == 131072


# --- quantization ---


@pytest.mark.parametrize(("flags", "dtype"), [({"load_in_4bit": True}, "int4"), ({"load_in_8bit": True}, "int8")])
def test_bitsandbytes_bits_come_from_its_load_flags(flags, dtype):
    """bitsandbytes writes no `bits`: `load_in_4bit` / `load_in_8bit` (transformers BitsAndBytesConfig)."""
    assert quantized_dtype({"quantization_config": {"quant_method": "bitsandbytes", **flags}}, "test") == dtype


def test_compressed_tensors_int4_weights():
    """compressed-tensors' W4A16 scheme: `config_groups.group_0.weights` of 4 int bits."""
    groups = {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}
    config = {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups}}
    assert quantized_dtype(config, "test") == "int4"


# --- a multimodal wrapper ---


def test_a_wrappers_top_level_keys_stay_beside_its_text_config():
    """A multimodal config (Gemma 3, Llava) keeps `quantization_config` and `architectures` at the top level and the
    decoder's shape under `text_config`: the decoder's keys are read over the top level's, not instead of them."""
    wrapper = {"quantization_config": {"quant_method": "fp8"}, "model_type": "wrapper", "text_config": {"a": 1}}
    assert text_config(wrapper) == {"quantization_config": {"quant_method": "fp8"}, "model_type": "wrapper", "a": 1}
    decoder = {key: value for key, value in QWEN25_7B.items() if key != "architectures"}
    fp8 = parse({"architectures": ["X"], "quantization_config": {"quant_method": "fp8"}, "text_config": decoder})
    assert fp8.quantized_dtype == "fp8"


# --- the shape's edges ---


def test_a_zero_width_is_refused():
    with pytest.raises(UserError, match=r"^test: hidden_size: 0 is not a positive whole number"):
        parse({**QWEN25_7B, "hidden_size": 0})


def test_a_plain_mlp_without_its_width_is_four_times_the_model_width():
    """transformers GPT2MLP: `inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size`."""
    gpt2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}
    assert parse(gpt2).d_ff == 3072


def test_the_class_is_the_first_architecture():
    assert parse({**QWEN25_7B, "architectures": ["Qwen2ForCausalLM", "Other"]}).architecture == "Qwen2ForCausalLM"


def test_decoder_sparse_step_makes_the_other_layers_dense():
    """transformers Qwen2MoeDecoderLayer: a layer is sparse when `(layer_idx + 1) % decoder_sparse_step == 0`, so a
    step of 2 over 48 layers leaves 24 dense."""
    assert parse({**QWEN3_MOE, "decoder_sparse_step": 2}).dense_layers == 24
    assert parse({**QWEN3_MOE, "decoder_sparse_step": 1}).dense_layers == 0


def test_every_layer_dense_is_refused():
    with pytest.raises(UserError, match="leaves no MoE layer of 48"):
        parse({**QWEN3_MOE, "first_k_dense_replace": 48})


@pytest.mark.parametrize(("metadata", "found"), [({"total_size": 0}, None), ({"total_size": 1}, 1)])
def test_a_total_size_counts_from_one_byte(metadata, found):
    assert total_size({"metadata": metadata}) == found


def test_one_kv_head_is_a_shape():
    """Multi-query attention written out: Gemma 2B's config.json says `num_key_value_heads: 1`."""
    assert parse({**QWEN25_7B, "num_key_value_heads": 1}).attention.kv_heads == 1


def test_compressed_tensors_sizes_the_weights_by_its_first_group():
    """llm-compressor writes the scheme of the Linear layers as `group_0`; a later group does
    not change what group_0's 4-bit int weights take (an fp8 group beside them)."""
    groups = {
        "group_0": {"weights": {"num_bits": 4, "type": "int"}},
        "group_1": {"weights": {"num_bits": 8, "type": "float"}},
    }
    config = {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups}}
    assert quantized_dtype(config, "test") == "int4"
