"""vLLM's speculative decoding as its arguments give it, and what it does to async scheduling: one rule for a stack's
`vllm.extraArgs` (vllm/plan.py) and a server the policy pack reads (tpu_policies/slo.py).

vLLM 0.29.0 reads `--speculative-config` (`-sc`) as JSON (ledger: vllm.flag.speculative-config,
vllm.flag.speculative-config-short, vllm.speculative.config-json; `` or `None`: none, ledger: vllm.args.json-none; a
value that does not parse stops the server, ledger: vllm.args.json-refused), `--speculative-config.KEY VALUE` as a
dict that replaces it (ledger: vllm.args.dotted-json), `--spec-method`, `--spec-model` and `--spec-tokens` into it
(ledger: vllm.flag.spec-method, vllm.flag.spec-model, vllm.flag.spec-tokens; with the same key in the JSON: refused at
start, ledger: vllm.speculative.spec-flags-exclusive), its keys with dashes read as underscores (ledger:
vllm.speculative.keys-dashes). The method, when not written, is custom_class for a dotted import path, ngram for the
model `ngram`, else draft_model (ledger: vllm.speculative.custom-class-path, vllm.speculative.ngram-model,
vllm.speculative.method-default); a model-specific MTP name, which vLLM renames mtp (ledger:
vllm.speculative.mtp-renamed), is refused here with that fix, as is any name the plan does not know;
a draft model's name can make it eagle, eagle3, dflash or dspark (ledger: vllm.speculative.detect-eagle,
vllm.speculative.detect-eagle3, vllm.speculative.detect-dflash, vllm.speculative.detect-dspark). What the draft's own
config.json would decide (medusa, mlp_speculator, mtp) is not read: a draft model is taken at its written method.

Async scheduling, left unset, is turned off for a method outside EAGLE/MTP/DFlash, draft_model, ngram_gpu and DSpark
(ledger: vllm.async-scheduling.speculative-off) or with disable_padded_drafter_batch (ledger:
vllm.async-scheduling.padded-drafter-off, vllm.speculative.padded-drafter-default); given `--async-scheduling`, either
stops the server (ledger: vllm.async-scheduling.speculative-refused, vllm.async-scheduling.padded-drafter-refused).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tpu_stacks.catalog.engine_traffic import ASYNC_SCHEDULING
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.upstream import text
from tpu_stacks.errors import UserError
from tpu_stacks.serving.engine_flags import GivenFlag, given_flags, switch_given

SPECULATIVE_CONFIG = text("vllm.flag.speculative-config")
SHORT = text("vllm.flag.speculative-config-short")
SPEC_FLAGS = {
    text("vllm.flag.spec-method"): "method",
    text("vllm.flag.spec-model"): "model",
    text("vllm.flag.spec-tokens"): "num_speculative_tokens",
}
"""`--spec-*` flags and the key of the speculative config each sets."""

ASYNC_METHODS = frozenset(
    {
        text("vllm.speculative.async-method.eagle"),
        text("vllm.speculative.async-method.eagle3"),
        text("vllm.speculative.async-method.extract-hidden-states"),
        text("vllm.speculative.async-method.mtp"),
        text("vllm.speculative.async-method.dflash"),
        text("vllm.speculative.async-method.ngram-gpu"),
        text("vllm.speculative.async-method.dspark"),
        text("vllm.speculative.async-method.draft-model"),
    }
)
"""Methods with which vLLM schedules asynchronously (and accepts `--async-scheduling`)."""
SYNC_METHODS = frozenset(
    {
        text("vllm.speculative.method.ngram"),
        text("vllm.speculative.method.medusa"),
        text("vllm.speculative.method.mlp-speculator"),
        text("vllm.speculative.method.suffix"),
        text("vllm.speculative.method.custom-class"),
    }
)
"""The rest of vLLM's speculative methods: async scheduling off, `--async-scheduling` refused."""
NGRAM = text("vllm.speculative.method.ngram")
DRAFT_MODEL = text("vllm.speculative.method-default")
MTP = text("vllm.speculative.mtp-renamed")
CUSTOM_CLASS = text("vllm.speculative.method.custom-class")
DETECTED = {
    text("vllm.speculative.detect-eagle"): text("vllm.speculative.async-method.eagle"),
    text("vllm.speculative.detect-eagle3"): text("vllm.speculative.async-method.eagle3"),
    text("vllm.speculative.detect-dflash"): text("vllm.speculative.async-method.dflash"),
    text("vllm.speculative.detect-dspark"): text("vllm.speculative.async-method.dspark"),
}
"""A draft model's name part and the method vLLM then runs (the first that matches)."""
REDETECTED = frozenset(
    {DRAFT_MODEL, MTP, text("vllm.speculative.method.medusa"), text("vllm.speculative.method.mlp-speculator")}
)
"""Methods vLLM detects again from a draft model given beside them."""


@dataclass(frozen=True)
class Speculation:
    """The speculative decoding a server's arguments configure: the method vLLM runs and whether async scheduling
    works with it; `given` is the argument that configures it (the last one read)."""

    method: str
    padded_drafter_off: bool
    given: GivenFlag

    @property
    def supports_async(self) -> bool:
        return self.method in ASYNC_METHODS and not self.padded_drafter_off


def _where(section: str | None, given: GivenFlag) -> str:
    return f"{section}.extraArgs[{given.argument}]" if section is not None else f"argument {given.argument}"


def _refuse(section: str | None, given: GivenFlag, problem: str, fix: str) -> None:
    if section is not None:
        raise UserError(_where(section, given), given.written, problem, fix)


def speculation(arguments: Sequence[Any], engine: EngineVersion, section: str | None = None) -> Speculation | None:
    """The speculative decoding `arguments` configure, as vLLM reads them (None: none). With `section` (a stack's
    `<section>.extraArgs`) a configuration vLLM refuses at start is refused here in one line; without it (the pack
    reading a server) such a configuration is read as none."""
    known = (SPECULATIVE_CONFIG, SHORT, *SPEC_FLAGS)
    flags = given_flags(arguments, engine, known=known)
    config: dict[str, Any] | None = None
    last: GivenFlag | None = None
    dotted: dict[str, Any] = {}
    for given in flags:
        name = given.name
        if name in (SPECULATIVE_CONFIG, SHORT):
            last = given
            value = given.value if given.value is not None else ""
            if value in ("", "None"):
                config = None
                continue
            try:
                parsed = json.loads(value)
            except ValueError:
                _refuse(
                    section,
                    given,
                    f"gives {SPECULATIVE_CONFIG} a value that is not JSON, which vLLM refuses at start",
                    f"write {SPECULATIVE_CONFIG}=" + '\'{"method": "...", "num_speculative_tokens": N}\'',
                )
                return None
            if not isinstance(parsed, dict):
                _refuse(
                    section,
                    given,
                    f"gives {SPECULATIVE_CONFIG} JSON that is not an object",
                    f"write {SPECULATIVE_CONFIG}=" + '\'{"method": "...", "num_speculative_tokens": N}\'',
                )
                return None
            config = parsed
        elif name.startswith(SPECULATIVE_CONFIG + ".") or name.startswith(SHORT + "."):
            last = given
            key = name.split(".", 1)[1].split(".", 1)[0]
            try:
                dotted[key] = json.loads(given.value or "")
            except ValueError:
                dotted[key] = given.value
    if dotted:  # appended after every other argument: it replaces a whole JSON value
        config = dotted
    for given in flags:
        key = SPEC_FLAGS.get(given.name)
        if key is None or given.value is None:
            continue
        if config is not None and any(k.replace("-", "_") == key for k in config):
            _refuse(
                section,
                given,
                f"sets {key}, which {SPECULATIVE_CONFIG} also sets: vLLM refuses both at start",
                "set it in one of them",
            )
            return None
        config = {**(config or {}), key: given.value}
        last = given
    if config is None or last is None:
        return None
    config = {str(k).replace("-", "_"): v for k, v in config.items()}
    method = _method(config)
    if method not in ASYNC_METHODS | SYNC_METHODS:
        known_methods = ", ".join(sorted(ASYNC_METHODS | SYNC_METHODS))
        _refuse(
            section,
            last,
            f"names the speculative method {method!r}, not one the plan reads ({known_methods})",
            f"write one of them (a model's own MTP method: {MTP}, which vLLM renames it to)",
        )
        return None
    padded = config.get("disable_padded_drafter_batch") in (True, "true", "True")
    return Speculation(method, padded, last)


def _method(config: dict[str, Any]) -> str:
    """The method vLLM runs for this speculative config, as far as its text says."""
    method = config.get("method")
    model = config.get("model")
    model = model if isinstance(model, str) else None
    if method is None:
        if model is not None and _import_path(model):
            return CUSTOM_CLASS
        method = NGRAM if model in (NGRAM, f"[{NGRAM}]") else DRAFT_MODEL
    method = str(method)
    if method == f"[{NGRAM}]":
        method = NGRAM
    if method in REDETECTED and model is not None:
        for part, detected in DETECTED.items():
            if part in model.lower():
                return detected
    return method


def _import_path(model: str) -> bool:
    """vLLM's test for a custom proposer's import path."""
    if model.startswith(("http://", "https://", "file://")) or "/" in model:
        return False
    parts = model.split(".")
    return len(parts) >= 2 and all(part.isidentifier() for part in parts)


def async_scheduling(arguments: Sequence[Any], engine: EngineVersion, section: str | None = None) -> bool | None:
    """Whether the server schedules asynchronously, as far as its arguments decide (None: left to the build's
    default): the last `--async-scheduling`/`--no-async-scheduling`, and, unset, off with a speculative method that
    does not support it. With `section`, `--async-scheduling` beside such a method is refused, as vLLM refuses it."""
    given = switch_given(arguments, ASYNC_SCHEDULING, engine, section)
    found = speculation(arguments, engine, section)
    if found is None or given is False or found.supports_async:
        return given
    if given:
        why = (
            "disable_padded_drafter_batch"
            if found.method in ASYNC_METHODS
            else f"the speculative method {found.method}"
        )
        _refuse(
            section,
            found.given,
            f"configures {why}, with which vLLM refuses --async-scheduling at start",
            f"leave out --async-scheduling (vLLM then schedules synchronously), or use a method among "
            f"{', '.join(sorted(ASYNC_METHODS))}",
        )
        return given
    return False
