"""Which model classes an engine can serve, and the one-line refusal of a model it cannot.

vLLM TPU: `engine_architectures.toml`, generated from the pinned wheels by scripts/engine_architectures.py
(tpu-inference's JAX models, then vLLM's own text-generation models it falls back to). JetStream-PyTorch names its
models one by one (jetstream/models.py). Saxml serves the model paths its server has (the test model). An engine
declared in its workload's folder brings its own check (SGLang-JAX: sglang/engine.py).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.model_shape import ModelArchitecture
from tpu_stacks.catalog.upstream import text
from tpu_stacks.errors import UserError

ARCHITECTURES_FILE = Path(__file__).parent / "engine_architectures.toml"


@cache
def vllm_architectures() -> dict[str, object]:
    """The `[vllm]` table: pins, sources, and the `jax` and `pytorch` class lists."""
    return tomllib.loads(ARCHITECTURES_FILE.read_text())["vllm"]


def vllm_serves(architecture: str) -> bool:
    table = vllm_architectures()
    return architecture in table["jax"] or architecture in table["pytorch"]  # type: ignore[operator]


TYPO_CUTOFF = 0.9
"""How alike (difflib's ratio) a config.json class must be to a served one to be named as its likely spelling: a
case or one- or two-letter slip (`Qwen2ForCausalLm`, `Qwen3MoeForCausalLLM`), not another family that shares
`ForCausalLM` (a Llama model is no misspelt Qwen3, at 0.69: the message lists what is served instead)."""


def _version(name: str) -> str:
    """A class name's digits: the family's version (`Qwen2`, `Qwen3`, `Phi4`, `Ernie4_5`)."""
    return "".join(c for c in name if c.isdigit())


def likely_class(architecture: str, served: Sequence[str]) -> str | None:
    """The served class a config.json's `architectures[0]` is most likely a misspelling of, if any: one of the same
    version only, as a class one digit apart is another release of the family (Qwen2.5's Qwen2ForCausalLM is 0.94
    like Qwen3ForCausalLM), not a slip."""
    same = [name for name in served if _version(name) == _version(architecture)]
    close = difflib.get_close_matches(architecture, same, n=1, cutoff=TYPO_CUTOFF)
    return close[0] if close else None


def check_vllm_architecture(model: ModelArchitecture, key: str, value: str) -> None:
    """Refuse a config.json whose `architectures[0]` the pinned vLLM TPU has no class for (a model without one,
    sized from a parameter count, is not judged here)."""
    architecture = model.architecture
    if architecture is None or vllm_serves(architecture):
        return
    table = vllm_architectures()
    known = [*table["jax"], *table["pytorch"]]  # type: ignore[misc]
    close = likely_class(architecture, known)
    raise UserError(
        key,
        value,
        f"is a {architecture} (config.json architectures[0]): vllm-tpu {table['vllm_tpu']} has no class for it",
        (f"did you mean a {close} model? " if close else "")
        + "catalog/engine_architectures.toml lists the classes it serves",
    )


VLLM_IMPLEMENTATIONS = {
    "flax_nnx": "tpu-inference's own JAX model (flax_nnx)",
    "vllm": "vLLM's PyTorch model through tpu-inference's torchax (MODEL_IMPL_TYPE=vllm)",
    "torch_xla": "vLLM's PyTorch model on its PyTorch/XLA backend (before tpu-inference)",
}
"""The model implementations a vLLM TPU row or stack can have run, as calibrations are keyed
(catalog/engine_traffic.py): the first two are tpu-inference's MODEL_IMPL_TYPE values (ledger:
tpu-inference.model-impl.vllm-torchax); the third is the backend tpu-inference replaced, which a published row of an
older vLLM ran and the pinned build cannot."""


def vllm_implementation(model: ModelArchitecture, setting: str | None = None) -> str | None:
    """The implementation the pinned vLLM TPU runs `model` with, as tpu-inference 0.29.0 decides it: the server's
    MODEL_IMPL_TYPE, `auto` when unset (ledger: tpu-inference.model-impl.default; no stack sets it,
    vllm/engine_env.py); `auto` resolves by the architecture, vLLM's PyTorch model for the classes it prefers and
    its own JAX model for the rest (ledger: tpu-inference.model-impl.auto-resolves, tpu-inference.model-impl.auto-rule,
    tpu-inference.model-impl.vllm-preferred); a class its JAX registry lacks falls back to vLLM's PyTorch model
    (ledger: tpu-inference.model-impl.jax-fallback). None when config.json names no class (a model sized from a
    parameter count): which one would run is unknown. Pipeline parallelism above 1 also sends a few classes to
    the PyTorch model (model_loader.py `_PP_DISABLED_MODELS`); sizing never picks it, so it is not read here. So
    does the Run:ai streamer load format for a JAX class without a weight loader (Qwen3, DeepSeek V3; ledger:
    tpu-inference.model-impl.runai-streamer); the rule here is the default load format's (ledger:
    vllm.load-format.default), which no stack changes."""
    architecture = model.architecture
    if architecture is None:
        return None
    table = vllm_architectures()
    impl = setting or text("tpu-inference.model-impl.default")
    if impl == "auto":
        impl = "vllm" if architecture in table["vllm_preferred"] else "flax_nnx"  # type: ignore[operator]
    if impl == "flax_nnx" and architecture not in table["jax"]:  # type: ignore[operator]
        return "vllm"
    return impl


ARCHITECTURE_CHECKS = {"vllm": check_vllm_architecture}
"""Per engine, the refusal of a model class its pinned release cannot serve (an engine without one judges none); a
workload folder's engine declares its own (`EngineDeclaration.check_architecture`)."""


def architecture_checks() -> dict[str, Callable[[ModelArchitecture, str, str], None]]:
    """This module's checks, then each workload folder's engine's (catalog/engines/declared.py)."""
    declared = {d.name: d.check_architecture for d in declarations() if d.check_architecture is not None}
    return {**ARCHITECTURE_CHECKS, **declared}


def check_architecture(engine: str, model: ModelArchitecture, key: str, value: str) -> None:
    """The engine's own refusal of `model`'s class, where the catalogue has one for it."""
    check = architecture_checks().get(engine)
    if check is not None:
        check(model, key, value)


def check_context(model: ModelArchitecture, context: int, key: str, fix: str | None = None) -> None:
    """Refuse a context longer than the model takes (every engine: the server would refuse it after the slice is up;
    vLLM's `_get_and_verify_max_len` raises on a max_model_len above the derived length)."""
    if model.max_context is not None and context > model.max_context:
        raise UserError(
            key,
            context,
            f"is beyond {model.hf_id or model.name}'s context of {model.max_context:,} tokens "
            f"({model.max_context_how})",
            fix or f"set {key.rsplit('.', 1)[-1]} to at most {model.max_context}",
        )
