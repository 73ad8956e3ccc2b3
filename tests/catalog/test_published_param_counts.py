"""The catalogue's parameter counts to the parameter, against the checkpoints' own safetensors indexes.

tests/catalog/test_hf_config.py compares each count with the model card's rounded figure (8.03B, 9.24B), which a
missing norm, bias or QK-norm (a few hundred thousand parameters) never moves. A bf16 checkpoint's
`model.safetensors.index.json` states its exact bytes in `metadata.total_size`, two a parameter: the index of each
model below, as published on Hugging Face (https://huggingface.co/<id>/blob/main/model.safetensors.index.json), halved.
Every shape rule of catalog/model_shape.py (`_params`) and every key catalog/hf_config.py reads into it (norms per
layer, Qwen2's q/k/v biases, Qwen3's QK norms, tied embeddings, routed experts and their router) moves these.
"""

import pytest

from tpu_stacks.catalog import models
from tpu_stacks.catalog.hf_config import architecture_from_config
from tpu_stacks.catalog.model_shape import ModelArchitecture

INDEX_TOTAL_SIZE = {
    "meta-llama/Meta-Llama-3-8B": 16_060_522_496,
    "meta-llama/Llama-3.1-8B-Instruct": 16_060_522_496,
    "meta-llama/Llama-3.1-70B": 141_107_412_992,
    "google/gemma-2-9b": 18_483_411_968,
    "Qwen/Qwen2.5-1.5B-Instruct": 3_087_428_608,
    "Qwen/Qwen2.5-7B-Instruct": 15_231_233_024,
    "mistralai/Mixtral-8x7B-v0.1": 93_405_585_408,
    "Qwen/Qwen3-30B-A3B": 61_064_245_248,
}
"""bf16 bytes of each checkpoint (`metadata.total_size`); Qwen3-30B-A3B's is its Instruct-2507 release's, the same
shape (config.json alike but for the context)."""


@pytest.mark.parametrize("model_id", sorted(INDEX_TOTAL_SIZE))
def test_the_count_is_the_checkpoints_bf16_bytes_halved(model_id):
    architecture: ModelArchitecture = models.lookup_model(model_id).architecture
    assert architecture.params * 2 == INDEX_TOTAL_SIZE[model_id]


def test_the_features_each_count_rests_on():
    """What makes each model's count exact, so a failure above points at the rule: Gemma 2's four norms a layer
    (transformers modeling_gemma2: input, post-attention, pre- and post-feedforward layernorms), Qwen2's q/k/v biases
    (modeling_qwen2: `bias=True` on q_proj, k_proj, v_proj), Qwen3's QK norms (modeling_qwen3 `q_norm`, `k_norm`)."""
    gemma2 = models.lookup_model("google/gemma-2-9b").architecture
    qwen2 = models.lookup_model("Qwen/Qwen2.5-7B-Instruct").architecture
    qwen3 = models.lookup_model("Qwen/Qwen3-30B-A3B").architecture
    llama = models.lookup_model("meta-llama/Meta-Llama-3-8B").architecture
    assert (gemma2.norms_per_layer, llama.norms_per_layer) == (4, 2)
    assert qwen2.qkv_bias and not qwen2.qk_norm and not llama.qkv_bias
    assert qwen3.qk_norm and not qwen3.qkv_bias


def test_an_attention_bias_the_config_declares_is_counted():
    """A Llama-style config with `attention_bias: true` (transformers LlamaAttention: q/k/v/o `bias=config.
    attention_bias`) carries q/k/v biases although its model_type is not Qwen2's."""
    config = models.lookup_model("meta-llama/Meta-Llama-3-8B").architecture
    assert config.architecture == "LlamaForCausalLM"
    raw = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
        "attention_bias": True,
    }
    biased = architecture_from_config(raw, name="acme/biased", source="test")
    plain = architecture_from_config({**raw, "attention_bias": False}, name="acme/plain", source="test")
    assert biased.qkv_bias and not plain.qkv_bias
    assert plain.params == config.params
    assert biased.params - plain.params == 32 * (4096 + 2 * 1024)  # q (32 x 128) and k, v (8 x 128) biases a layer


def test_the_measured_rows_own_model_to_the_parameter():
    """Qwen3-Coder 480B-A35B, the one row model written in code (catalog/throughput_measurements.py): Hugging Face's
    model API gives its bf16 safetensors parameter count as 480,154,875,392
    (https://huggingface.co/api/models/Qwen/Qwen3-Coder-480B-A35B-Instruct `safetensors.parameters.BF16`). The record left out Qwen3's QK norms: 62 x 2 x 128 short."""
    from tpu_stacks.catalog.throughput_measurements import QWEN3_CODER_480B

    assert QWEN3_CODER_480B.params == 480_154_875_392


def test_a_dense_model_is_one_expert_that_every_token_uses():
    """The record's meaning of a dense model (ModelArchitecture.experts: "1 for a dense model"), no shared expert
    and no dense-only layer, as a config.json without expert keys gives it."""
    llama = models.lookup_model("meta-llama/Meta-Llama-3-8B").architecture
    assert (llama.experts, llama.experts_per_token, llama.shared_d_ff, llama.dense_layers) == (1, 1, 0, 0)
