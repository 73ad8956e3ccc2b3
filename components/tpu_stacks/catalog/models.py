"""The model catalogue: transformer shapes that decide how much TPU memory a model needs.

Shapes come from the models' configs ([MT] MaxText model configs,
[SAX]/[PAX] for the Saxml test model). Parameter counts are computed from the shapes with the
standard formulas (attention, gated or plain MLP times experts, norms, embeddings), and tests pin
them to the published counts. Users may describe a model of their own with `custom_model`.
"""

from __future__ import annotations

import difflib
import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.errors import MISSING, UserError

Dtype = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
BYTES_PER_DTYPE: dict[str, float] = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


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


class ModelArchitecture(BaseModel):
    """A decoder-only transformer as the catalogue knows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    display_name: str
    hf_ids: tuple[str, ...] = ()
    """Hugging Face repo ids (the first is the canonical one)."""
    aliases: tuple[str, ...] = ()
    attention: Attention | None
    d_model: int | None = None
    d_ff: int | None = None
    vocab: int | None = None
    tied_embeddings: bool = False
    gated_mlp: bool = True
    experts: int = 1
    experts_per_token: int = 1
    norms_per_layer: int = 2
    declared_params: int | None = None
    """For a custom model: the parameter count as the user gives it (the shape may be missing)."""
    gated: bool = False
    """Hugging Face requires an accepted licence and a token to download the weights."""
    mesh_devices: int | None = None
    """A model config whose ICI mesh is fixed (Saxml's ICI_MESH_SHAPE) runs on exactly this many devices."""
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

    def _params(self, experts: int) -> int:
        attention = self.attention
        assert attention and attention.query_heads and self.d_model and self.d_ff and self.vocab, self.name
        d = self.d_model
        q_width = attention.query_heads * attention.head_dim
        kv_width = attention.kv_heads * attention.head_dim
        attn = d * q_width + 2 * d * kv_width + q_width * d
        mlp = (3 if self.gated_mlp else 2) * d * self.d_ff * experts
        router = d * self.experts if self.experts > 1 else 0
        per_layer = attn + mlp + router + self.norms_per_layer * d
        embeddings = self.vocab * d * (1 if self.tied_embeddings else 2)
        return attention.layers * per_layer + embeddings + d

    @property
    def hf_id(self) -> str | None:
        return self.hf_ids[0] if self.hf_ids else None

    def kv_bytes_per_token(self, kv_dtype: str = "bf16") -> int | None:
        """KV cache for one token of one sequence, or None when the attention shape is unknown."""
        if self.attention is None:
            return None
        return self.attention.kv_bytes(1, 1, dtype_bytes(kv_dtype))


def _llama(
    name: str, display: str, layers: int, d: int, q: int, ff: int, hf_ids: tuple[str, ...], aliases: tuple[str, ...]
) -> ModelArchitecture:
    return ModelArchitecture(
        name=name,
        display_name=display,
        hf_ids=hf_ids,
        aliases=aliases,
        attention=Attention(layers=layers, kv_heads=8, head_dim=128, query_heads=q),
        d_model=d,
        d_ff=ff,
        vocab=128256,
        gated=True,
        source="[MT] src/maxtext/configs/models/llama*.yml",
    )


MODELS: tuple[ModelArchitecture, ...] = (
    _llama(
        "llama-3-8b",
        "Llama 3 8B",
        32,
        4096,
        32,
        14336,
        (
            "meta-llama/Meta-Llama-3-8B",
            "meta-llama/Meta-Llama-3-8B-Instruct",
            "meta-llama/Llama-3.1-8B",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        ("llama3-8b", "llama-3.1-8b", "llama3.1-8b"),
    ),
    _llama(
        "llama-3.1-70b",
        "Llama 3.1 70B",
        80,
        8192,
        64,
        28672,
        (
            "meta-llama/Llama-3.1-70B",
            "meta-llama/Llama-3.1-70B-Instruct",
            "meta-llama/Meta-Llama-3.1-70B",
            "meta-llama/Meta-Llama-3.1-70B-Instruct",
            "meta-llama/Meta-Llama-3-70B",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
        ("llama3.1-70b", "llama3-70b", "llama-3-70b", "llama3.3-70b"),
    ),
    _llama(
        "llama-3.1-405b",
        "Llama 3.1 405B",
        126,
        16384,
        128,
        53248,
        ("meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B"),
        ("llama3.1-405b", "llama-405b"),
    ),
    ModelArchitecture(
        name="gemma-7b",
        display_name="Gemma 7B",
        hf_ids=("google/gemma-7b", "google/gemma-7b-it"),
        aliases=("gemma7b", "gemma-7b-it"),
        attention=Attention(layers=28, kv_heads=16, head_dim=256, query_heads=16),
        d_model=3072,
        d_ff=24576,
        vocab=256128,  # MaxText's padded vocabulary; matches the Gemma report's 786,825,216 embedding params
        tied_embeddings=True,
        gated=True,
        source="[MT] gemma-7b.yml; Gemma tech report parameter split",
    ),
    ModelArchitecture(
        name="gemma-2-9b",
        display_name="Gemma 2 9B",
        hf_ids=("google/gemma-2-9b", "google/gemma-2-9b-it"),
        aliases=("gemma2-9b",),
        attention=Attention(
            layers=42, kv_heads=8, head_dim=256, query_heads=16, sliding_window=4096, windowed_layers=21
        ),
        d_model=3584,
        d_ff=14336,
        vocab=256128,
        tied_embeddings=True,
        norms_per_layer=4,  # pre- and post-norms around attention and MLP
        gated=True,
        source="[MT] gemma2-9b.yml",
    ),
    ModelArchitecture(
        name="gemma-2-27b",
        display_name="Gemma 2 27B",
        hf_ids=("google/gemma-2-27b", "google/gemma-2-27b-it"),
        aliases=("gemma2-27b",),
        attention=Attention(
            layers=46, kv_heads=16, head_dim=128, query_heads=32, sliding_window=4096, windowed_layers=23
        ),
        d_model=4608,
        d_ff=36864,
        vocab=256128,
        tied_embeddings=True,
        norms_per_layer=4,
        gated=True,
        source="[MT] gemma2-27b.yml",
    ),
    ModelArchitecture(
        name="mixtral-8x7b",
        display_name="Mixtral 8x7B",
        hf_ids=("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
        aliases=("mixtral8x7b",),
        attention=Attention(layers=32, kv_heads=8, head_dim=128, query_heads=32),
        d_model=4096,
        d_ff=14336,
        vocab=32000,
        experts=8,
        experts_per_token=2,
        gated=True,
        source="[MT] mixtral-8x7b.yml",
    ),
    ModelArchitecture(
        name="saxml-lmcloudspmd175b32test",
        display_name="Saxml LmCloudSpmd175B32Test (175B test model)",
        aliases=(
            "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
            "LmCloudSpmd175B32Test",
            "saxml-175b",
            "175b-test",
        ),
        attention=Attention(layers=96, kv_heads=96, head_dim=128, query_heads=96),
        d_model=12288,
        d_ff=49152,
        vocab=32000,  # default of TransformerLmSpmdAdafactor [PAX]
        tied_embeddings=True,
        gated_mlp=False,
        mesh_devices=32,  # ICI_MESH_SHAPE = [1, 1, 32] [SAX]
        source="[SAX] lm_cloud.py (LmCloudSpmd175B32Test -> LmCloudSpmd175B), [PAX] model_params.py",
    ),
    ModelArchitecture(
        name="qwen2.5-1.5b-instruct",
        display_name="Qwen2.5 1.5B Instruct (open weights, no token needed)",
        hf_ids=("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B"),
        aliases=("qwen2.5-1.5b",),
        attention=Attention(layers=28, kv_heads=2, head_dim=128, query_heads=12),
        d_model=1536,
        d_ff=8960,
        vocab=151936,
        tied_embeddings=True,
        source="config.json of Qwen/Qwen2.5-1.5B-Instruct on Hugging Face (q/k/v biases not counted: 0.1M)",
    ),
    ModelArchitecture(
        name="qwen3-4b",
        display_name="Qwen3 4B (open weights, no token needed)",
        hf_ids=("Qwen/Qwen3-4B",),
        attention=Attention(layers=36, kv_heads=8, head_dim=128, query_heads=32),
        d_model=2560,
        d_ff=9728,
        vocab=151936,
        tied_embeddings=True,
        source="config.json of Qwen/Qwen3-4B on Hugging Face (hidden_size 2560, intermediate_size 9728, 36 layers, "
        "32 heads, 8 KV heads, head_dim 128, vocab 151936, tie_word_embeddings true; its per-head q/k norms, "
        "256 weights a layer, not counted)",
    ),
)

SAXML_175B_TEST = "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test"


class ResolvedModel(BaseModel):
    """A catalogue model as the user named it: the id they gave and the shape behind it."""

    model_config = ConfigDict(frozen=True)

    id: str
    architecture: ModelArchitecture

    @property
    def params(self) -> int:
        return self.architecture.params

    def require_token(self, hf_token_given: bool) -> None:
        """Refuse a gated model without a Hugging Face token (the component's secret input `hf_token`): the
        server could not download it once the slice is up. The one rule the serving engines (vLLM,
        JetStream) share. The error names the input a library user writes; a stack file's program names
        its config key instead (stacks/workload_stack.py)."""
        if self.architecture.gated and not hf_token_given:
            raise UserError(
                "hf_token",
                MISSING,
                f"is required: {self.id} is gated on Hugging Face",
                "give the Hugging Face token as a secret input (hf_token, hfToken in other languages): "
                'pulumi.Output.secret(...) or config.require_secret("hfToken")',
            )


def accepted_names(model: ModelArchitecture) -> list[str]:
    """Every name `model` answers to: its catalogue name, Hugging Face ids and aliases (Saxml paths)."""
    return [model.name, *model.hf_ids, *model.aliases]


def _display_id(model: ModelArchitecture, matched: str) -> str:
    """The id to show: the Hugging Face id the name stands for, else the Saxml path, else the name."""
    if matched in model.hf_ids or matched.startswith("saxml."):
        return matched
    for hf_id in model.hf_ids:
        if hf_id.lower().rsplit("/", 1)[-1] == matched.lower():
            return hf_id
    paths = [alias for alias in model.aliases if alias.startswith("saxml.")]
    return model.hf_id or (paths[0] if paths else matched)


def model_names() -> list[str]:
    """Every name a catalogue model answers to (for error messages and docs)."""
    return [name for model in MODELS for name in accepted_names(model)]


def lookup_model(name: str, key: str = "model") -> ResolvedModel:
    """Find a model by Hugging Face id, Saxml path or alias (case-insensitive)."""
    wanted = str(name).strip().lower()
    for model in MODELS:
        for candidate in accepted_names(model):
            if wanted == candidate.lower():
                return ResolvedModel(id=_display_id(model, candidate), architecture=model)
    close = closest_model_name(str(name))
    raise UserError(
        key,
        name,
        "is not in the model catalogue",
        (f"did you mean '{close}'? " if close else "")
        + "`tpu-stacks models` lists them; size another with `tpu-stacks size --params N`",
    )


def closest_model_name(name: str) -> str | None:
    """The catalogue name nearest to `name` (case-insensitive, difflib's ratio of at least 0.6), for a
    "did you mean" in the error line; listing all of them made a 1,300-character line."""
    names = {candidate.lower(): candidate for candidate in model_names()}
    close = difflib.get_close_matches(name.strip().lower(), list(names), n=1)
    return names[close[0]] if close else None


def custom_model(
    name: str,
    params: float,
    layers: int | None = None,
    kv_heads: int | None = None,
    head_dim: int | None = None,
    key: str = "model",
    *,
    params_key: str | None = None,
    shape_key: str | None = None,
) -> ResolvedModel:
    """A model the catalogue does not know: a parameter count and, optionally, its attention shape.
    Refusals name `params_key` / `shape_key` when the user wrote those (`--params`, `--layers`), else the
    setting under `key` (`model.params`)."""
    if not params or params <= 0:
        raise UserError(
            params_key or f"{key}.params", params, "is not a positive parameter count", "give e.g. 7e9 or 7B"
        )
    shape_given = [layers, kv_heads, head_dim]
    attention = None
    if any(v is not None for v in shape_given):
        if not (
            isinstance(layers, int)
            and isinstance(kv_heads, int)
            and isinstance(head_dim, int)
            and min(layers, kv_heads, head_dim) > 0
        ):
            raise UserError(
                shape_key or f"{key}.attention",
                shape_given,
                "is incomplete",
                "give layers, kv_heads and head_dim together (all positive)",
            )
        attention = Attention(layers=layers, kv_heads=kv_heads, head_dim=head_dim)
    architecture = ModelArchitecture(
        name=name, display_name=name, attention=attention, declared_params=int(params), source="user supplied"
    )
    return ResolvedModel(id=name, architecture=architecture)


def parse_param_count(text: str, key: str = "params") -> int:
    """`'7B'`, `'70b'`, `'350M'` or `'7e9'` -> parameters."""
    raw = str(text).strip().lower().replace("_", "")
    scale = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}.get(raw[-1:], 1.0)
    number = raw[:-1] if raw[-1:] in "kmbt" else raw
    try:
        value = float(number) * scale
    except ValueError:
        raise UserError(key, text, "is not a parameter count", "write e.g. 7B, 350M or 7e9") from None
    if not math.isfinite(value) or value <= 0 or value > 1e15:
        raise UserError(key, text, "is not a positive parameter count", "write e.g. 7B, 350M or 7e9")
    if value < 1:  # `0.5` meant 0.5B: a bare number counts parameters
        raise UserError(key, text, "is less than one parameter", "write the unit: 0.5B is half a billion")
    return int(value)
