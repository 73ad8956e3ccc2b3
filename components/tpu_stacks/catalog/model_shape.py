"""A decoder-only transformer's shape, the one record every model is sized from.

Every model, catalogued or the user's own, becomes a `ModelArchitecture` by one path: its Hugging Face
`config.json` read by `catalog/hf_config.py` (the Saxml test model, which has no config.json, is the one
record written in code: `catalog/model_catalogue.py`). The parameter count is computed from the shape with
the standard formulas (attention with its biases and norms, a gated or plain MLP, routed and shared experts,
norms, embeddings); tests pin it to the published counts. `params` and `active_params` are the names the
sizing, the traffic model and `size --json` read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.errors import UserError

Dtype = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
BYTES_PER_DTYPE: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
DEFAULT_KV_DTYPE = "bf16"
"""The KV cache's dtype when nothing says otherwise: a request's, and `tpu-stacks size` without `--kv-dtype`."""


def dtype_bytes(dtype: str, key: str = "dtype") -> float:
    """Bytes one value of `dtype` takes (int4 packs two values per byte)."""
    if dtype not in BYTES_PER_DTYPE:
        raise UserError(key, dtype, "is not a supported dtype", f"valid: {', '.join(BYTES_PER_DTYPE)}")
    return BYTES_PER_DTYPE[dtype]


class Attention(BaseModel):
    """The attention shape that sets the KV cache: layers x KV heads x head dim per token."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    query_heads: int | None = Field(default=None, gt=0)
    sliding_window: int | None = Field(default=None, gt=0)
    """Tokens a windowed (local) layer keeps; None when every layer attends globally."""
    windowed_layers: int = Field(default=0, ge=0)

    def kv_bytes(self, tokens_per_sequence: int, sequences: int, kv_dtype_bytes: float) -> int:
        """KV bytes = 2 (K and V) x bytes x head_dim x kv_heads x tokens, per layer ([SB] inference.md)."""
        per_token_per_layer = 2 * kv_dtype_bytes * self.head_dim * self.kv_heads
        global_layers = self.layers - self.windowed_layers
        windowed_tokens = min(tokens_per_sequence, self.sliding_window or tokens_per_sequence)
        tokens = global_layers * tokens_per_sequence + self.windowed_layers * windowed_tokens
        return int(per_token_per_layer * tokens * sequences)


WEIGHTS_FIELDS = {
    "attention",
    "d_model",
    "d_ff",
    "vocab",
    "tied_embeddings",
    "gated_mlp",
    "experts",
    "experts_per_token",
    "expert_d_ff",
    "shared_d_ff",
    "dense_layers",
    "qkv_bias",
    "qk_norm",
    "norms_per_layer",
    "declared_params",
    "quantized_dtype",
}
"""What makes two records the same model for a measurement: everything but names, context and provenance."""


class ModelArchitecture(BaseModel):
    """A decoder-only transformer as sizing knows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    display_name: str
    hf_ids: tuple[str, ...] = ()
    """Hugging Face repo ids (the first is the canonical one)."""
    aliases: tuple[str, ...] = ()
    attention: Attention | None
    d_model: int | None = None
    d_ff: int | None = None
    """The dense MLP's width (`intermediate_size`)."""
    vocab: int | None = None
    tied_embeddings: bool = False
    gated_mlp: bool = True
    experts: int = 1
    """Routed experts per MoE layer (`num_experts` / `num_local_experts`); 1 for a dense model."""
    experts_per_token: int = 1
    expert_d_ff: int | None = None
    """One routed expert's MLP width (`moe_intermediate_size`; `intermediate_size` when absent, as Mixtral)."""
    shared_d_ff: int = 0
    """The shared experts' MLP width, all of them together (every token uses them)."""
    dense_layers: int = 0
    """Layers of an MoE model whose MLP is dense (`mlp_only_layers`, `first_k_dense_replace`)."""
    qkv_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    declared_params: int | None = None
    """For a custom model: the parameter count as the user gives it (the shape may be missing)."""
    gated: bool = False
    """Hugging Face requires an accepted licence and a token to download the weights."""
    mesh_devices: int | None = None
    """A model config whose ICI mesh is fixed (Saxml's ICI_MESH_SHAPE) runs on exactly this many devices."""
    architecture: str | None = None
    """`architectures[0]` of config.json: the class the engine's model registry must hold."""
    max_context: int | None = None
    """The longest context the model takes: `max_position_embeddings`, or the rope-scaled length."""
    max_context_how: str = ""
    """How `max_context` was derived (shown in the refusal of a longer context)."""
    quantized_dtype: Dtype | None = None
    """The weight dtype of a quantized checkpoint (`quantization_config`): fp8, int8 or int4."""
    weight_bytes: int | None = None
    """Exact checkpoint bytes (model.safetensors.index.json's metadata.total_size), when fetched: the files' size in
    `checkpoint_dtype`, not what a server holds (see `weights`)."""
    checkpoint_dtype: Dtype | None = None
    """The dtype the checkpoint's files hold: `quantized_dtype`, else config.json's `dtype` (`torch_dtype` before
    transformers 5); None when config.json names none the sizing knows."""
    config_torch_dtype: str | None = None
    """config.json's top-level `torch_dtype` as written (transformers 4's key; None when absent): what an engine whose
    pinned transformers reads only that key serves at `--dtype auto` (SGLang-JAX, sglang/engine.py)."""
    catalogued: bool = False
    """Shipped with tpu-stacks (catalog/hf_configs); a user's config.json is not, and its shape travels in the
    workload's annotations so the policy pack judges the same model."""
    source: str

    @property
    def params(self) -> int:
        """Total parameters: declared, or computed from the shape."""
        if self.declared_params is not None:
            return self.declared_params
        return self._params(self.experts)

    @property
    def active_params(self) -> int:
        """Parameters used per token (differs from `params` only for mixture-of-experts)."""
        if self.declared_params is not None:
            return self.declared_params
        return self._params(self.experts_per_token)

    @property
    def serving_dtype(self) -> Dtype:
        """The weight dtype a server loads: the quantized checkpoint's, else bf16 (vLLM's `--dtype auto` serves an
        fp32 checkpoint in bf16, the TPU platform's first dtype: ledger: vllm.dtype.auto-downcasts-fp32,
        vllm.dtype.platform-default; an fp16 one in fp16, the same two bytes). SGLang-JAX keeps the config's dtype
        instead (sglang/engine.py `SGLANG_DTYPES`); each engine's rule is catalog/engines/dtypes.py's."""
        return self.quantized_dtype or "bf16"

    def weights(self, dtype: str, key: str = "weight_dtype") -> tuple[int, str]:
        """Weight bytes in `dtype` and how they were found. The served dtype decides the bytes: the checkpoint's exact
        size counts when the server holds the weights in the files' own dtype, or in the dtype vLLM serves
        (`serving_dtype`) scaled from the files' (an fp32 checkpoint served in bf16 takes half its files' bytes; one
        served as it is, as SGLang-JAX does, all of them); any other dtype, or files of an unknown dtype, from the
        parameter count. The one place the rule is written: sizing and `models fetch` both read it here."""
        if self.weight_bytes is not None and self.checkpoint_dtype is not None and dtype == self.checkpoint_dtype:
            return self.weight_bytes, f"the {dtype} checkpoint's bytes (model.safetensors.index.json total_size)"
        if self.weight_bytes is not None and self.checkpoint_dtype is not None and dtype == self.serving_dtype:
            scaled = int(self.weight_bytes * dtype_bytes(dtype, key) / dtype_bytes(self.checkpoint_dtype))
            how = (
                f"the {self.checkpoint_dtype} checkpoint's bytes (model.safetensors.index.json total_size)"
                f" x {dtype_bytes(dtype, key):g}/{dtype_bytes(self.checkpoint_dtype):g}, served in {dtype}"
            )
            return scaled, how
        return int(self.params * dtype_bytes(dtype, key)), f"{self.params:,} params x {dtype}"

    def weights_bytes(self, dtype: str, key: str = "weight_dtype") -> int:
        """Weight bytes in `dtype` (`weights`)."""
        return self.weights(dtype, key)[0]

    def _params(self, experts: int) -> int:
        attention = self.attention
        assert attention and attention.query_heads and self.d_model and self.d_ff and self.vocab, self.name
        d = self.d_model
        q_width = attention.query_heads * attention.head_dim
        kv_width = attention.kv_heads * attention.head_dim
        attn = d * q_width + 2 * d * kv_width + q_width * d
        if self.qkv_bias:
            attn += q_width + 2 * kv_width
        if self.qk_norm:
            attn += 2 * attention.head_dim
        matrices = 3 if self.gated_mlp else 2
        dense_mlp = matrices * d * self.d_ff
        if self.experts > 1:
            routed = matrices * d * (self.expert_d_ff or self.d_ff) * experts
            moe_mlp = routed + matrices * d * self.shared_d_ff + d * self.experts
        else:
            moe_mlp = dense_mlp
        sparse_layers = attention.layers - self.dense_layers
        norms = self.norms_per_layer * d
        layers = attention.layers * (attn + norms) + sparse_layers * moe_mlp + self.dense_layers * dense_mlp
        embeddings = self.vocab * d * (1 if self.tied_embeddings else 2)
        return layers + embeddings + d

    def same_weights(self, other: ModelArchitecture) -> bool:
        """Whether `other` holds the same weights shape: the same layers, widths, experts and dtype, whatever its name
        or context (Llama 3 8B and Llama 3.1 8B: a measurement of one is a measurement of the other)."""
        return self.model_dump(include=WEIGHTS_FIELDS) == other.model_dump(include=WEIGHTS_FIELDS)

    @property
    def hf_id(self) -> str | None:
        return self.hf_ids[0] if self.hf_ids else None

    def kv_bytes_per_token(self, kv_dtype: str = DEFAULT_KV_DTYPE) -> int | None:
        """KV cache for one token of one sequence, or None when the attention shape is unknown."""
        if self.attention is None:
            return None
        return self.attention.kv_bytes(1, 1, dtype_bytes(kv_dtype))
