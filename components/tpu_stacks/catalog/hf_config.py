"""A Hugging Face `config.json` read into a `ModelArchitecture`: the one path every model takes.

What is read, key by key (the names `transformers`' configuration classes give them):
- shape: `hidden_size`, `num_hidden_layers`, `num_attention_heads`, `num_key_value_heads` (GQA/MQA; absent means
  one KV head per query head), `head_dim` (else hidden_size / heads), `intermediate_size`, `vocab_size`,
  `tie_word_embeddings` (transformers' PretrainedConfig defaults it to true: Gemma's config omits it);
- mixture of experts: `num_experts` (Qwen) or `num_local_experts` (Mixtral) or `n_routed_experts` (DeepSeek),
  `num_experts_per_tok`, `moe_intermediate_size` (one expert's width), shared experts
  (`shared_expert_intermediate_size`, or `n_shared_experts` x moe_intermediate_size), dense layers of an MoE
  model (`mlp_only_layers`, `first_k_dense_replace`);
- windowed attention: `layer_types` (transformers' per-layer list), Gemma 2's alternating local layers, Gemma 3's
  `sliding_window_pattern`, Qwen's `use_sliding_window` switch, else `sliding_window` on every layer (Mistral);
- `quantization_config`: fp8 (`quant_method` fp8, fbgemm_fp8, or compressed-tensors float weights), int8 / int4
  (gptq, awq, bitsandbytes, compressed-tensors int weights);
- a multimodal wrapper's decoder under `text_config`; the class under `architectures[0]`;
- the longest context, as vLLM derives it (vllm-tpu 0.29.0, vllm/config/model.py `_get_and_verify_max_len`): the
  smallest of the length keys present, times `rope_scaling.factor` unless the rope type is llama3, su or longrope
  (whose `max_position_embeddings` is already the long one) or the model is Gemma 3; yarn scales
  `original_max_position_embeddings`. A length is a whole number of tokens, written as an integer or as an
  integral float (`32768.0`); anything else is refused;
- the checkpoint's dtype, `dtype` (transformers 5) or `torch_dtype`: what a safetensors index's `total_size` is
  counted in, so the weights a server holds in another dtype are scaled from it (`ModelArchitecture.weights`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tpu_stacks.catalog.model_shape import Attention, Dtype, ModelArchitecture
from tpu_stacks.catalog.upstream import text
from tpu_stacks.errors import MISSING, UserError

TORCH_DTYPE_KEY = text("transformers-sglang.config.torch-dtype")
"""transformers 4's config.json key for the checkpoint's dtype: the only one an engine pinned to transformers 4.55
reads (SGLang-JAX; ledger: transformers-sglang.config.torch-dtype)."""

LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
"""The keys vLLM reads a model's length from (vllm-tpu 0.29.0, vllm/transformers_utils/model_arch_config_convertor.py
and vllm/config/model.py): the smallest present wins."""
UNSCALED_ROPE = ("su", "longrope", "llama3")
"""Rope types whose `max_position_embeddings` already is the scaled length (vLLM does not multiply them)."""
PLAIN_MLP = ("gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "gpt_bigcode", "starcoder2", "phi", "mpt")
"""model_type values whose MLP is two matrices (up, down), not the gated three (gate, up, down)."""
QKV_BIAS = ("qwen2", "qwen2_moe")
"""Qwen2's q, k and v projections carry biases whatever `attention_bias` says (transformers' modeling_qwen2)."""
QK_NORM = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2")
"""Models with an RMSNorm over each query and key head (`q_norm`, `k_norm`)."""
FOUR_NORMS = ("gemma2", "gemma3", "gemma3_text")
"""Pre- and post-norms around attention and the MLP: four norms a layer."""


def _problem(source: str, key: str, value: Any, problem: str, fix: str) -> UserError:
    return UserError(f"{source}: {key}", value, problem, fix)


def _int(config: dict[str, Any], source: str, *keys: str, default: int | None = None) -> int:
    for key in keys:
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise _problem(source, key, value, "is not a positive whole number", "fix the config.json")
        return value
    if default is not None:
        return default
    raise _problem(source, keys[0], MISSING, "is missing", "give a Hugging Face config.json of a decoder-only model")


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The decoder's keys: a multimodal wrapper's `text_config` over the top level, else the top level."""
    inner = config.get("text_config")
    if isinstance(inner, dict):
        return {**{k: v for k, v in config.items() if k != "text_config"}, **inner}
    return config


def quantized_dtype(config: dict[str, Any], source: str) -> Dtype | None:
    """The weight dtype `quantization_config` stores, or None for an unquantized checkpoint."""
    quant = config.get("quantization_config")
    if not quant:
        return None
    if not isinstance(quant, dict):
        raise _problem(source, "quantization_config", quant, "is not an object", "fix the config.json")
    method = str(quant.get("quant_method", "")).lower()
    if method in ("fp8", "fbgemm_fp8"):
        return "fp8"
    bits = quant.get("bits") or quant.get("w_bit")
    kind = "int"
    if method == "bitsandbytes":
        bits = 4 if quant.get("load_in_4bit") else 8 if quant.get("load_in_8bit") else None
    elif method == "compressed-tensors":
        weights = [group.get("weights") or {} for group in (quant.get("config_groups") or {}).values()]
        bits = weights[0].get("num_bits") if weights else None
        kind = str(weights[0].get("type", "int")) if weights else "int"
    if bits == 8:
        return "fp8" if kind == "float" else "int8"
    if bits == 4 and kind == "int":
        return "int4"
    raise _problem(
        source,
        "quantization_config.quant_method",
        method or None,
        f"stores weights tpu-stacks cannot size ({bits or 'unknown'} bits)",
        "use a bf16, fp8, int8 or int4 (gptq, awq, bitsandbytes, compressed-tensors) checkpoint",
    )


CHECKPOINT_DTYPES: dict[str, Dtype] = {
    "float32": "fp32",
    "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
}
"""config.json's `dtype` / `torch_dtype` names (torch's, as transformers writes them) of an unquantized checkpoint."""


def checkpoint_dtype(raw: dict[str, Any], config: dict[str, Any], quantized: Dtype | None) -> Dtype | None:
    """The dtype the checkpoint's files hold: a quantized checkpoint's, else config.json's `dtype` (transformers 5's
    name) or `torch_dtype` (before it), the top level's first as vLLM reads it (ledger: vllm.dtype.from-config);
    None when neither names a dtype of CHECKPOINT_DTYPES (its files are then sized from the parameter count)."""
    if quantized is not None:
        return quantized
    for document in (raw, config):
        for key in ("dtype", "torch_dtype"):
            value = document.get(key)
            if isinstance(value, str) and value.removeprefix("torch.") in CHECKPOINT_DTYPES:
                return CHECKPOINT_DTYPES[value.removeprefix("torch.")]
    return None


def _length(config: dict[str, Any], source: str, key: str, shown: str | None = None) -> int | None:
    """A length key's tokens: a whole number above 0, written as an integer or as an integral float (`32768.0`, which
    some exporters write and vLLM takes); None when absent; a one-line UserError (naming `shown`, the key as written
    in the file) for anything else."""
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        problem = "is not a whole number of tokens above 0"
        raise _problem(source, shown or key, config.get(key), problem, "fix the config.json")
    return value


def max_context(config: dict[str, Any], source: str = "config.json") -> tuple[int | None, str]:
    """The longest context the model takes and how it was derived (vLLM's rule, module docstring)."""
    lengths = {key: _length(config, source, key) for key in LENGTH_KEYS}
    present = {key: length for key, length in lengths.items() if length is not None}
    if not present:
        return None, ""
    key = min(present, key=lambda k: present[k])
    length, how = present[key], key
    rope_key = "rope_scaling" if config.get("rope_scaling") else "rope_parameters"
    rope = config.get(rope_key)
    model_type = str(config.get("model_type", ""))
    if isinstance(rope, dict) and "gemma3" not in model_type:
        rope_type = rope.get("rope_type") or rope.get("type") or "default"
        factor = rope.get("factor")
        if rope_type not in UNSCALED_ROPE and isinstance(factor, int | float) and factor > 0:
            original_key = f"{rope_key}.original_max_position_embeddings"
            original = _length(rope, source, "original_max_position_embeddings", original_key)
            if rope_type == "yarn" and original is not None:
                length, how = original, "rope_scaling.original_max_position_embeddings"
            length, how = int(length * factor), f"{how} x rope_scaling.factor {factor:g} ({rope_type})"
    return length, how


def _windowed_layers(config: dict[str, Any], source: str, layers: int) -> tuple[int | None, int]:
    """(window, windowed layers) of the attention: (None, 0) when every layer attends globally."""
    window = config.get("sliding_window")
    layer_types = config.get("layer_types")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 0):
        raise _problem(source, "sliding_window", window, "is not a whole number of tokens", "fix the config.json")
    if isinstance(layer_types, list) and layer_types:
        windowed = sum(1 for kind in layer_types if kind == "sliding_attention")
        return (window, windowed) if window and windowed else (None, 0)
    if not isinstance(window, int) or window <= 0 or config.get("use_sliding_window") is False:
        return None, 0
    model_type = str(config.get("model_type", ""))
    if model_type == "gemma2":  # even layers local, odd global (transformers' modeling_gemma2)
        return window, (layers + 1) // 2
    pattern = config.get("sliding_window_pattern")
    if isinstance(pattern, int) and pattern > 0:  # Gemma 3: every pattern-th layer global
        return window, layers - layers // pattern
    if config.get("use_sliding_window") and isinstance(config.get("max_window_layers"), int):
        return window, max(0, layers - config["max_window_layers"])
    return window, layers


def _experts(config: dict[str, Any], source: str, layers: int) -> dict[str, int]:
    experts = _int(config, source, "num_experts", "num_local_experts", "n_routed_experts", default=1)
    if experts == 1:
        return {}
    expert_d_ff = _int(config, source, "moe_intermediate_size", default=0)
    shared = _int(config, source, "shared_expert_intermediate_size", default=0)
    if not shared and expert_d_ff:
        shared = _int(config, source, "n_shared_experts", default=0) * expert_d_ff
    only = config.get("mlp_only_layers") or []
    if not isinstance(only, list):
        raise _problem(source, "mlp_only_layers", only, "is not a list of layer numbers", "fix the config.json")
    dense = len(only) or _int(config, source, "first_k_dense_replace", default=0)
    step = config.get("decoder_sparse_step")
    if not dense and isinstance(step, int) and step > 1:
        dense = layers - layers // step
    if dense >= layers:
        raise _problem(
            source, "first_k_dense_replace", dense, f"leaves no MoE layer of {layers}", "fix the config.json"
        )
    per_token = _int(config, source, "num_experts_per_tok", "moe_topk")
    if per_token > experts:
        raise _problem(
            source, "num_experts_per_tok", per_token, f"is more than the {experts} experts", "fix the config.json"
        )
    return {
        "experts": experts,
        "experts_per_token": per_token,
        **({"expert_d_ff": expert_d_ff} if expert_d_ff else {}),
        "shared_d_ff": shared,
        "dense_layers": dense,
    }


def architecture_from_config(
    raw: dict[str, Any],
    *,
    name: str,
    source: str,
    display_name: str | None = None,
    hf_ids: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    gated: bool = False,
    catalogued: bool = False,
    weight_bytes: int | None = None,
) -> ModelArchitecture:
    """The model a config.json describes; UserError (naming the file and key) for one it cannot describe."""
    if not isinstance(raw, dict):
        raise _problem(source, "(top level)", type(raw).__name__, "is not a JSON object", "give a config.json")
    config = text_config(raw)
    architectures = raw.get("architectures") or config.get("architectures") or []
    if not isinstance(architectures, list):
        raise _problem(source, "architectures", architectures, "is not a list", 'write ["<ModelClass>"]')
    model_type = str(config.get("model_type", ""))
    d = _int(config, source, "hidden_size", "n_embd", "d_model")
    layers = _int(config, source, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(config, source, "num_attention_heads", "n_head")
    kv_default = 1 if config.get("multi_query") else heads
    kv_heads = _int(config, source, "num_key_value_heads", "n_head_kv", "num_kv_heads", default=kv_default)
    if heads % kv_heads:
        raise _problem(
            source, "num_key_value_heads", kv_heads, f"does not divide the {heads} query heads", "fix the config.json"
        )
    head_dim = _int(config, source, "head_dim", default=d // heads)
    window, windowed = _windowed_layers(config, source, layers)
    context, how = max_context(config, source)
    tied = raw.get("tie_word_embeddings", config.get("tie_word_embeddings", True))
    quantized = quantized_dtype(config, source)
    return ModelArchitecture(
        name=name,
        display_name=display_name or name,
        hf_ids=hf_ids,
        aliases=aliases,
        attention=Attention(
            layers=layers,
            kv_heads=kv_heads,
            head_dim=head_dim,
            query_heads=heads,
            sliding_window=window,
            windowed_layers=windowed,
        ),
        d_model=d,
        d_ff=_int(config, source, "intermediate_size", "ffn_dim", "n_inner", default=4 * d),
        vocab=_int(config, source, "vocab_size"),
        tied_embeddings=bool(tied),
        gated_mlp=model_type not in PLAIN_MLP,
        **_experts(config, source, layers),
        qkv_bias=bool(config.get("attention_bias")) or model_type in QKV_BIAS,
        qk_norm=model_type in QK_NORM,
        norms_per_layer=4 if model_type in FOUR_NORMS else 2,
        gated=gated,
        architecture=str(architectures[0]) if architectures else None,
        max_context=context,
        max_context_how=how,
        quantized_dtype=quantized,
        weight_bytes=weight_bytes,
        checkpoint_dtype=checkpoint_dtype(raw, config, quantized),
        config_torch_dtype=raw[TORCH_DTYPE_KEY] if isinstance(raw.get(TORCH_DTYPE_KEY), str) else None,
        catalogued=catalogued,
        source=source,
    )


def read_json(path: Path, key: str) -> dict[str, Any]:
    """A JSON file as a dict, or a UserError on `key` naming the file."""
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(key, str(path), "does not exist", "give the path of a config.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(key, str(path), f"is not readable JSON ({error})", "give a config.json") from None
    if not isinstance(document, dict):
        raise UserError(key, str(path), "is not a JSON object", "give a config.json")
    return document


def total_size(index: dict[str, Any]) -> int | None:
    """A safetensors index's `metadata.total_size` (the checkpoint's exact bytes, in its own dtype), when present."""
    metadata = index.get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    return int(total) if isinstance(total, int | float) and not isinstance(total, bool) and total > 0 else None


def index_total_size(path: Path) -> int | None:
    """model.safetensors.index.json's `metadata.total_size` (`total_size`), when the file is there."""
    if not path.is_file():
        return None
    return total_size(read_json(path, str(path)))
