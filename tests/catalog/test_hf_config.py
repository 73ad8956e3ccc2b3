"""A Hugging Face config.json read into the model record: published counts, every shape feature, the refusals."""

import json

import pytest

from tpu_stacks.catalog import models
from tpu_stacks.catalog.engine_models import check_context, check_vllm_architecture, vllm_serves
from tpu_stacks.catalog.hf_config import architecture_from_config, max_context
from tpu_stacks.catalog.model_catalogue import CONFIG_DIR
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import ServingRequest, serving_memory

# id -> (published total, published active, the unit the publisher rounds to), in billions: Hugging Face model
# cards (safetensors parameter counts) and the Qwen3 / Qwen2.5 / Gemma reports.
PUBLISHED = {
    "meta-llama/Llama-3.1-8B-Instruct": (8.03, 8.03, 0.01),
    "meta-llama/Meta-Llama-3-8B": (8.03, 8.03, 0.01),
    "meta-llama/Llama-3.1-70B": (70.6, 70.6, 0.1),
    "meta-llama/Llama-3.1-405B": (406, 406, 1),
    "google/gemma-7b": (8.54, 8.54, 0.01),
    "google/gemma-2-9b": (9.24, 9.24, 0.01),
    "google/gemma-2-27b": (27.2, 27.2, 0.1),
    "mistralai/Mixtral-8x7B-v0.1": (46.7, 12.9, 0.1),
    "Qwen/Qwen2.5-1.5B-Instruct": (1.54, 1.54, 0.01),
    "Qwen/Qwen2.5-7B-Instruct": (7.61, 7.61, 0.01),
    "Qwen/Qwen3-30B-A3B": (30.5, 3.3, 0.1),
}
QWEN25_7B = json.loads((CONFIG_DIR / "Qwen/Qwen2.5-7B-Instruct/config.json").read_text())
QWEN3_MOE = json.loads((CONFIG_DIR / "Qwen/Qwen3-30B-A3B/config.json").read_text())


def parse(config: dict, **kw):
    return architecture_from_config(config, name="acme/test", source="test", **kw)


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_counts_match_the_published_counts(model_id):
    total, active, unit = PUBLISHED[model_id]
    arch = models.lookup_model(model_id).architecture
    assert abs(arch.params / 1e9 - total) < unit
    assert abs(arch.active_params / 1e9 - active) < unit


def test_every_catalogued_model_but_saxml_comes_from_a_config_json():
    from_code = [m.name for m in models.MODELS if not m.source.startswith("config.json: https://huggingface.co/")]
    assert from_code == ["saxml-lmcloudspmd175b32test"]
    assert all(m.architecture and vllm_serves(m.architecture) for m in models.MODELS if m.architecture)


def test_moe_experts_shared_experts_and_dense_layers():
    arch = parse(QWEN3_MOE)
    assert (arch.experts, arch.experts_per_token, arch.expert_d_ff) == (128, 8, 768)
    assert arch.qk_norm and not arch.qkv_bias and arch.attention.kv_heads == 4 and arch.attention.head_dim == 128
    shared = parse({**QWEN3_MOE, "shared_expert_intermediate_size": 4096})
    assert shared.params - arch.params == 48 * 3 * 2048 * 4096
    assert shared.active_params - arch.active_params == 48 * 3 * 2048 * 4096  # every token uses the shared expert
    deepseek_like = parse({**QWEN3_MOE, "n_shared_experts": 2})
    assert deepseek_like.shared_d_ff == 2 * 768
    dense_first = parse({**QWEN3_MOE, "mlp_only_layers": [0, 1]})
    assert arch.params - dense_first.params == 2 * (3 * 2048 * (128 * 768 - 6144) + 2048 * 128)
    mixtral = parse({**QWEN3_MOE, "num_experts": None, "num_local_experts": 8, "moe_intermediate_size": None})
    assert (mixtral.experts, mixtral.expert_d_ff) == (8, None)  # Mixtral: an expert is intermediate_size wide


def test_gqa_mqa_head_dim_and_tied_embeddings():
    base = {k: v for k, v in QWEN25_7B.items() if k != "num_key_value_heads"}
    assert parse(base).attention.kv_heads == 28  # no num_key_value_heads: one KV head per query head (MHA)
    assert parse({**base, "multi_query": True}).attention.kv_heads == 1  # MQA
    assert parse(QWEN25_7B).attention.head_dim == 3584 // 28
    assert parse({**QWEN25_7B, "head_dim": 256}).attention.head_dim == 256
    untied, tied = parse(QWEN25_7B), parse({**QWEN25_7B, "tie_word_embeddings": True})
    assert untied.params - tied.params == 152064 * 3584
    gemma = models.lookup_model("google/gemma-7b").architecture
    assert gemma.tied_embeddings  # Gemma's config.json omits the key: transformers' default is tied


def test_sliding_window_layers():
    assert parse(QWEN25_7B).attention.sliding_window is None  # use_sliding_window: false
    gemma2 = models.lookup_model("google/gemma-2-9b").architecture.attention
    assert (gemma2.sliding_window, gemma2.windowed_layers) == (4096, 21)
    mistral = parse({**QWEN25_7B, "use_sliding_window": None, "sliding_window": 4096, "model_type": "mistral"})
    assert mistral.attention.windowed_layers == 28
    types = ["sliding_attention"] * 20 + ["full_attention"] * 8
    listed = parse({**QWEN25_7B, "sliding_window": 1024, "layer_types": types, "use_sliding_window": None})
    assert (listed.attention.sliding_window, listed.attention.windowed_layers) == (1024, 20)
    assert listed.kv_bytes_per_token() == parse(QWEN25_7B).kv_bytes_per_token()  # one token fits any window


@pytest.mark.parametrize(
    "quantization,dtype",
    [
        ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8"),
        ({"quant_method": "gptq", "bits": 4}, "int4"),
        ({"quant_method": "awq", "bits": 4}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "int8"),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"}}},
            },
            "fp8",
        ),
        (
            {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int"}}}},
            "int8",
        ),
    ],
)
def test_quantization_config_sets_the_weight_dtype(quantization, dtype):
    arch = parse({**QWEN25_7B, "quantization_config": quantization})
    assert arch.quantized_dtype == arch.serving_dtype == dtype
    request = ServingRequest(model=models.ResolvedModel(id="q", architecture=arch), weight_dtype=arch.serving_dtype)
    from tpu_stacks.catalog.tpu import generation, slice_shape

    weights = serving_memory(request, slice_shape(generation("v6e"), "1x1")).part("weights")
    assert weights == int(arch.params * {"fp8": 1, "int8": 1, "int4": 0.5}[dtype])


def test_an_unknown_quantization_is_refused_in_one_line():
    with pytest.raises(UserError) as error:
        parse({**QWEN25_7B, "quantization_config": {"quant_method": "hqq", "bits": 3}})
    assert str(error.value).startswith("test: quantization_config.quant_method: 'hqq' stores weights")
    assert len(str(error.value).splitlines()) == 1


def test_a_nested_text_config_is_read():
    wrapper = {"architectures": ["Qwen2ForCausalLM"], "text_config": QWEN25_7B, "vision_config": {"hidden_size": 1}}
    assert parse(wrapper).params == parse(QWEN25_7B).params


def test_a_config_without_a_shape_is_refused_naming_the_key():
    with pytest.raises(UserError, match=r"^test: hidden_size is missing; give a Hugging Face config.json"):
        parse({"architectures": ["LlamaForCausalLM"]})


def test_context_is_the_rope_scaled_length():
    assert max_context(QWEN25_7B) == (32768, "max_position_embeddings")
    yarn = {**QWEN25_7B, "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}}
    assert max_context(yarn)[0] == 131072
    linear = {**QWEN25_7B, "rope_scaling": {"factor": 2.0, "rope_type": "linear"}}
    assert max_context(linear)[0] == 65536
    llama31 = models.lookup_model("meta-llama/Llama-3.1-8B-Instruct").architecture
    assert llama31.max_context == 131072  # llama3 rope: max_position_embeddings is already the long one
    assert models.lookup_model("meta-llama/Meta-Llama-3-8B").architecture.max_context == 8192


def test_a_context_beyond_the_model_is_refused_with_both_numbers():
    gemma = models.lookup_model("google/gemma-2-9b").architecture
    check_context(gemma, 8192, "vllm.maxModelLen")
    with pytest.raises(UserError) as error:
        check_context(gemma, 32768, "vllm.maxModelLen")
    assert str(error.value) == (
        "vllm.maxModelLen: 32768 is beyond google/gemma-2-9b's context of 8,192 tokens (max_position_embeddings); "
        "set maxModelLen to at most 8192"
    )


def test_an_architecture_vllm_cannot_serve_is_refused_in_one_line():
    check_vllm_architecture(parse(QWEN3_MOE), "vllm.model", "acme/test")
    with pytest.raises(UserError) as error:
        check_vllm_architecture(parse({**QWEN25_7B, "architectures": ["Qwen2ForCausalLm"]}), "vllm.model", "acme/x")
    message = str(error.value)
    assert message.startswith("vllm.model: 'acme/x' is a Qwen2ForCausalLm (config.json architectures[0]): vllm-tpu")
    assert "did you mean a Qwen2ForCausalLM model?" in message and len(message.splitlines()) == 1


def test_the_project_models_directory_and_a_model_config_path(tmp_path):
    folder = tmp_path / "models" / "acme" / "qwen-copy"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(QWEN25_7B))
    found = models.lookup_model("acme/qwen-copy", root=tmp_path)
    assert found.id == "acme/qwen-copy" and found.params == parse(QWEN25_7B).params
    assert not found.architecture.catalogued and found.architecture.weight_bytes is None
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 15_231_233_024}}))
    exact = models.lookup_model("acme/qwen-copy", root=tmp_path).architecture
    assert exact.weights_bytes("bf16") == 15_231_233_024  # the checkpoint's bytes, not params x 2
    assert exact.weights_bytes("int8") == exact.params  # another dtype: from the parameter count
    (tmp_path / "elsewhere.json").write_text(json.dumps(QWEN3_MOE))
    named = models.lookup_model("acme/moe", model_config="elsewhere.json", root=tmp_path)
    assert named.architecture.experts == 128
    with pytest.raises(UserError, match=r"^vllm.modelConfig: 'missing.json' does not exist under .*; give the path"):
        models.lookup_model("acme/moe", model_config="missing.json", config_key="vllm.modelConfig", root=tmp_path)
    with pytest.raises(UserError, match="is not in the model catalogue"):
        models.lookup_model("acme/absent", root=tmp_path)


@pytest.mark.parametrize(
    ("base", "change", "key", "problem"),
    [
        (QWEN25_7B, {"quantization_config": "fp8"}, "quantization_config", "is not an object"),
        (QWEN25_7B, {"architectures": "Qwen2ForCausalLM"}, "architectures", "is not a list"),
        (QWEN25_7B, {"sliding_window": "abc"}, "sliding_window", "is not a whole number of tokens"),
        (QWEN25_7B, {"num_key_value_heads": 5}, "num_key_value_heads", "does not divide the 28 query heads"),
        (QWEN3_MOE, {"moe_intermediate_size": "x"}, "moe_intermediate_size", "is not a positive whole number"),
        (QWEN3_MOE, {"mlp_only_layers": 5}, "mlp_only_layers", "is not a list of layer numbers"),
        (QWEN3_MOE, {"first_k_dense_replace": 99}, "first_k_dense_replace", "leaves no MoE layer of 48"),
        (QWEN3_MOE, {"num_experts_per_tok": 200}, "num_experts_per_tok", "is more than the 128 experts"),
    ],
)
def test_a_config_that_describes_no_servable_shape_is_one_line_naming_its_key(base, change, key, problem):
    """Each of these once ended in a Python traceback or a negative parameter count."""
    with pytest.raises(UserError) as raised:
        parse({**base, **change})
    line = str(raised.value)
    assert f": {key}:" in line and problem in line and "\n" not in line


def _fetched(tmp_path, config: dict, total_size: int):
    folder = tmp_path / "models" / "acme" / "copy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total_size}}))
    return models.lookup_model("acme/copy", root=tmp_path).architecture


def test_an_fp32_checkpoint_is_served_in_bf16_at_half_its_files_bytes(tmp_path):
    """Gemma 2's checkpoints are fp32 (`torch_dtype`): their index counts 4 bytes a parameter, the server holds 2."""
    fp32 = {**QWEN25_7B, "torch_dtype": "float32"}
    arch = _fetched(tmp_path, fp32, 30_462_466_048)
    assert (arch.checkpoint_dtype, arch.serving_dtype) == ("fp32", "bf16")
    assert arch.weights_bytes("bf16") == 15_231_233_024  # half the files, not all of them
    bytes_, how = arch.weights("bf16")
    assert how == "the fp32 checkpoint's bytes (model.safetensors.index.json total_size) x 2/4, served in bf16"
    memory = serving_memory(ServingRequest(model=models.lookup_model("acme/copy", root=tmp_path)), _shape())
    assert memory.part("weights") == bytes_ and [p.how for p in memory.parts if p.name == "weights"] == [how]
    # an engine that serves the checkpoint as it is (SGLang-JAX at --dtype auto, sglang/engine.py) holds every byte
    assert arch.weights("fp32") == (
        30_462_466_048,
        "the fp32 checkpoint's bytes (model.safetensors.index.json total_size)",
    )


def test_transformers_5_dtype_key_wins_over_torch_dtype_and_bf16_files_count_whole(tmp_path):
    arch = _fetched(tmp_path, {**QWEN25_7B, "dtype": "bfloat16", "torch_dtype": "float32"}, 15_231_233_024)
    assert arch.checkpoint_dtype == "bf16" and arch.weights_bytes("bf16") == 15_231_233_024


def test_a_checkpoint_of_no_known_dtype_is_sized_from_its_parameters(tmp_path):
    """Without a dtype the index's bytes cannot be turned into served bytes: parameters x 2, not a guess."""
    config = {key: value for key, value in QWEN25_7B.items() if key not in ("torch_dtype", "dtype")}
    arch = _fetched(tmp_path, config, 30_462_466_048)
    assert arch.checkpoint_dtype is None and arch.weights_bytes("bf16") == arch.params * 2


def test_a_quantized_checkpoint_counts_its_files_whatever_torch_dtype_says(tmp_path):
    """An fp8 checkpoint's config says `torch_dtype: bfloat16` (its unquantized parts); its files are what is served."""
    fp8 = {**QWEN25_7B, "torch_dtype": "bfloat16", "quantization_config": {"quant_method": "fp8"}}
    arch = _fetched(tmp_path, fp8, 8_000_000_000)
    assert (arch.checkpoint_dtype, arch.serving_dtype) == ("fp8", "fp8") and arch.weights_bytes("fp8") == 8_000_000_000


def _shape():
    from tpu_stacks.catalog.tpu import generation, slice_shape

    return slice_shape(generation("v6e"), "2x2")


@pytest.mark.parametrize("key", ["max_position_embeddings", "seq_length"])
def test_an_integral_float_length_is_a_length(key):
    """Some exporters write `32768.0`; vLLM takes it, and it was silently ignored (no context limit at all)."""
    config = {key: value for key, value in QWEN25_7B.items() if key != "max_position_embeddings"}
    assert max_context({**config, key: 32768.0}) == (32768, key)
    assert parse({**config, key: 32768.0}).max_context == 32768
    yarn = {**QWEN25_7B, "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768.0, "type": "yarn"}}
    assert max_context(yarn)[0] == 131072


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"max_position_embeddings": 32768.5}, "test: max_position_embeddings: 32768.5 is not a whole number"),
        ({"max_position_embeddings": True}, "test: max_position_embeddings: True is not a whole number"),
        ({"max_position_embeddings": 0}, "test: max_position_embeddings: 0 is not a whole number"),
        ({"max_position_embeddings": "32k"}, "test: max_position_embeddings: '32k' is not a whole number"),
        (
            {"rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 4096.5, "type": "yarn"}},
            "test: rope_scaling.original_max_position_embeddings: 4096.5 is not a whole number",
        ),
    ],
)
def test_a_length_that_is_not_a_whole_number_is_refused_in_one_line(config, said):
    with pytest.raises(UserError) as caught:
        parse({**QWEN25_7B, **config})
    message = str(caught.value)
    assert message.startswith(said) and message.endswith("of tokens above 0; fix the config.json"), message


@pytest.mark.parametrize("metadata", [[], "big", {"total_size": True}, {"total_size": -1}, {}])
def test_an_index_without_a_usable_total_size_leaves_the_parameter_count(tmp_path, metadata):
    """`metadata` that is not an object was an AttributeError traceback; no usable size is no exact size."""
    folder = tmp_path / "models" / "acme" / "copy"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(QWEN25_7B))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": metadata}))
    arch = models.lookup_model("acme/copy", root=tmp_path).architecture
    assert arch.weight_bytes is None and arch.weights_bytes("bf16") == arch.params * 2
