"""The model catalogue: the names a stack's `model` and `tpu-stacks size` accept, and the shape behind each.

Every model is a Hugging Face config.json read by one parser (catalog/hf_config.py): the catalogued ones ship in
catalog/hf_configs (catalogue.toml lists them), a user's own is found under the project's `models/<org>/<name>/`
(`tpu-stacks models fetch`) or at the path a workload's `modelConfig` names. The Saxml test model, which has no
config.json, is the one record written in code (catalog/model_catalogue.py). Parameter counts are computed from the
shapes (catalog/model_shape.py) and tests pin them to the published counts. A model with no config at all is sized
from a parameter count with `custom_model`.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.model_catalogue import SAXML_175B_TEST, catalogued_models, from_file, project_config
from tpu_stacks.catalog.model_shape import BYTES_PER_DTYPE, Attention, Dtype, ModelArchitecture, dtype_bytes
from tpu_stacks.errors import MISSING, UserError

__all__ = [
    "BYTES_PER_DTYPE",
    "MODELS",
    "SAXML_175B_TEST",
    "Attention",
    "Dtype",
    "ModelArchitecture",
    "ResolvedModel",
    "custom_model",
    "dtype_bytes",
    "lookup_model",
]

MODELS: tuple[ModelArchitecture, ...] = catalogued_models()


class ResolvedModel(BaseModel):
    """A catalogue model as the user named it: the id they gave and the shape behind it."""

    model_config = ConfigDict(frozen=True)

    id: str
    architecture: ModelArchitecture

    @property
    def params(self) -> int:
        return self.architecture.params

    @property
    def active_params(self) -> int:
        """Parameters one token reads (a mixture of experts: its routed and shared experts only)."""
        return self.architecture.active_params

    @property
    def params_text(self) -> str:
        """`7.62B params`, or for a mixture of experts `30.53B params (3.35B active per token)`: the one wording of
        the size a model's summary line gives (`size --tpu`, and `size` across generations)."""
        active = f" ({self.active_params / 1e9:.2f}B active per token)" if self.active_params != self.params else ""
        return f"{self.params / 1e9:.2f}B params{active}"

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


def lookup_model(
    name: str,
    key: str = "model",
    model_config: str | Path | None = None,
    config_key: str = "modelConfig",
    root: Path | None = None,
) -> ResolvedModel:
    """The model `name` stands for: the config.json `model_config` names (relative to `root`, the working directory),
    else a catalogued model by Hugging Face id, Saxml path or alias (case-insensitive), else the project's
    `models/<org>/<name>/config.json`. Refusals name `key` (the model) or `config_key` (the file)."""
    base = root or Path.cwd()
    if model_config is not None:
        path = Path(model_config)
        if not (path if path.is_absolute() else base / path).is_file():  # the path as the user wrote it
            raise UserError(
                config_key, str(model_config), f"does not exist under {base}", "give the path of a config.json"
            )
        return ResolvedModel(
            id=str(name), architecture=from_file(str(name), path if path.is_absolute() else base / path, config_key)
        )
    wanted = str(name).strip().lower()
    for model in MODELS:
        for candidate in accepted_names(model):
            if wanted == candidate.lower():
                return ResolvedModel(id=_display_id(model, candidate), architecture=model)
    found = project_config(str(name).strip(), base)
    if found is not None:
        return ResolvedModel(id=str(name).strip(), architecture=from_file(str(name).strip(), found, key))
    close = closest_model_name(str(name))
    raise UserError(
        key,
        name,
        "is not in the model catalogue",
        (f"did you mean '{close}'? " if close else "")
        + "any Hugging Face model: `tpu-stacks models fetch ORG/NAME`, or give its config.json as "
        + config_key,
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
    attention_extra: dict[str, int] | None = None,
) -> ResolvedModel:
    """A model the catalogue does not know: a parameter count and, optionally, its attention shape
    (`attention_extra`: query_heads, sliding_window and windowed_layers, as a workload's annotations carry them).
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
        attention = Attention(layers=layers, kv_heads=kv_heads, head_dim=head_dim, **(attention_extra or {}))
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
