"""vLLM's speculative decoding as its arguments give it, whether the TPU backend runs it, and what it does to async
scheduling: one rule for a stack's `vllm.extraArgs` (vllm/plan.py) and a server the policy pack reads
(tpu_policies/slo.py). Why: a speculative config vLLM or tpu-inference refuses stops the server only once its pod
starts, and one that turns async scheduling off changes the latency the plan predicts.

vLLM 0.29.0 reads `--speculative-config` (`-sc`) as JSON (ledger: vllm.flag.speculative-config,
vllm.flag.speculative-config-short, vllm.speculative.config-json; `` or `None`: none, ledger: vllm.args.json-none; a
value that does not parse stops the server, ledger: vllm.args.json-refused; JSON null: none),
`--speculative-config.KEY VALUE` (KEY dotted for a nested key) as one dict per flag, added back after every other
argument so that it replaces a JSON value (ledger: vllm.args.dotted-json), `--spec-method`, `--spec-model` and
`--spec-tokens` into it, each flag's last value (ledger: vllm.flag.spec-method, vllm.flag.spec-model,
vllm.flag.spec-tokens; with the same key as written in the JSON: refused at start, ledger:
vllm.speculative.spec-flags-exclusive), its keys with dashes read as underscores (ledger:
vllm.speculative.keys-dashes). The method, when not written, is custom_class for a dotted import path, ngram for the
model `ngram`, else draft_model (ledger: vllm.speculative.custom-class-path, vllm.speculative.ngram-model,
vllm.speculative.method-default); a model-specific MTP name (deepseek_mtp, ...) is run as mtp (ledger:
vllm.speculative.mtp-renamed); a name outside vLLM's methods stops the server (ledger:
vllm.speculative.method-validated, vllm.config.pydantic-dataclass) and is refused here. A draft model's name can make
it eagle, eagle3, dflash or dspark (ledger: vllm.speculative.detect-eagle, vllm.speculative.detect-eagle3,
vllm.speculative.detect-dflash, vllm.speculative.detect-dspark). What the draft's own config.json would decide
(medusa, mlp_speculator, mtp) is not read: a draft model is taken at its written method. The names come from the
ledger (serving/speculative_methods.py).

tpu-inference 0.29.0, which runs every vLLM stack here, builds a drafter only for ngram, dflash and what vLLM's
use_eagle() holds (eagle, eagle3, mtp, dflash, dspark; ledger: tpu-inference.speculative.runner-ngram,
tpu-inference.speculative.runner-dflash, tpu-inference.speculative.runner-eagle); any other method, draft_model
included, raises at start (ledger: tpu-inference.speculative.runner-refuses) and is refused here. Its assertion that
async scheduling goes with a use_eagle() method (ledger: tpu-inference.speculative.async-eagle-only) adds no refusal:
ngram, the one method it runs outside use_eagle(), has async scheduling off or refused by vLLM already, and dflash is
inside it and has an async path (ledger: vllm.speculative.use-eagle.dflash, tpu-inference.speculative.dflash-async).

Async scheduling, left unset, is turned off for a method outside EAGLE/MTP/DFlash, draft_model, ngram_gpu and DSpark
(ledger: vllm.async-scheduling.speculative-off) or with disable_padded_drafter_batch (ledger:
vllm.async-scheduling.padded-drafter-off, vllm.speculative.padded-drafter-default); given `--async-scheduling`, either
stops the server (ledger: vllm.async-scheduling.speculative-refused, vllm.async-scheduling.padded-drafter-refused).
The policy pack (no `section`) reads a configuration that stops the server as none: not its capacity rule's to say.
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
from tpu_stacks.serving.speculative_methods import (
    ASYNC_METHODS,
    CUSTOM_CLASS,
    DETECTED,
    DRAFT_MODEL,
    MTP,
    MTP_NAMES,
    NGRAM,
    REDETECTED,
    SYNC_METHODS,
    TPU_METHODS,
)

SPECULATIVE_CONFIG = text("vllm.flag.speculative-config")
SHORT = text("vllm.flag.speculative-config-short")
SPEC_FLAGS = {
    text("vllm.flag.spec-method"): "method",
    text("vllm.flag.spec-model"): "model",
    text("vllm.flag.spec-tokens"): "num_speculative_tokens",
}
"""`--spec-*` flags and the key of the speculative config each sets, in the order vLLM adds them."""
SPEC_KEYS = tuple(SPEC_FLAGS.values())
LAX_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
"""The strings pydantic's lax mode reads as true for a bool field, as vLLM's config dataclasses validate
`disable_padded_drafter_batch` (ledger: vllm.config.pydantic-dataclass; the strings:
https://docs.pydantic.dev/2.11/api/standard_library_types/#booleans)."""
_TPU_LIST = ", ".join(sorted(TPU_METHODS))


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
    dotted: dict[str, dict[str, Any]] = {}  # by the flag they are written under, in the order vLLM adds them back
    method_given: GivenFlag | None = None  # the argument that writes the method
    dotted_method: dict[str, GivenFlag] = {}
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
            except (ValueError, RecursionError):
                _refuse(
                    section,
                    given,
                    f"gives {SPECULATIVE_CONFIG} a value that is not JSON, which vLLM refuses at start",
                    f"write {SPECULATIVE_CONFIG}=" + '\'{"method": "...", "num_speculative_tokens": N}\'',
                )
                return None
            if parsed is None:  # JSON null: none, as vLLM reads it
                config, method_given = None, None
                continue
            if not isinstance(parsed, dict):
                _refuse(
                    section,
                    given,
                    f"gives {SPECULATIVE_CONFIG} JSON that is not an object",
                    f"write {SPECULATIVE_CONFIG}=" + '\'{"method": "...", "num_speculative_tokens": N}\'',
                )
                return None
            config = parsed
            method_given = given
        elif name.startswith((SPECULATIVE_CONFIG + ".", SHORT + ".")):
            last = given
            flag, *keys = name.split(".")
            _merge(dotted.setdefault(flag, {}), _nested(keys, _dotted_value(given.value or "")))
            if keys == ["method"]:
                dotted_method[flag] = given
    if dotted:  # added back after every other argument, one JSON value a flag: the last replaces the rest
        flag = list(dotted)[-1]
        config, method_given = dotted[flag], dotted_method.get(flag)
    spec_flags: dict[str, GivenFlag] = {}  # each `--spec-*` flag's last value (argparse keeps it)
    for given in flags:
        if given.name in SPEC_FLAGS and given.value is not None:
            spec_flags[SPEC_FLAGS[given.name]] = given
            last = given if last is None or given.argument > last.argument else last
    for key, given in sorted(spec_flags.items(), key=lambda item: SPEC_KEYS.index(item[0])):
        if config is not None and key in config:  # the key as written: vLLM compares before reading dashes
            _refuse(
                section,
                given,
                f"sets {key}, which {SPECULATIVE_CONFIG} also sets: vLLM refuses both at start",
                "set it in one of them",
            )
            return None
        config = {**(config or {}), key: given.value}
        if key == "method":
            method_given = given
    if config is None or last is None:
        return None
    config = {str(k).replace("-", "_"): v for k, v in config.items()}
    method, default = _method(config)
    named = method_given if method_given is not None and "method" in config else last
    if method not in ASYNC_METHODS | SYNC_METHODS:  # ledger: vllm.speculative.method-validated
        _refuse(
            section,
            named,
            f"names the speculative method {method!r}, which vLLM refuses at start (not one of its methods)",
            f"write one of {_TPU_LIST} (a model's own MTP method name, e.g. deepseek_mtp, is also read, as {MTP})",
        )
        return None
    if method not in TPU_METHODS:  # ledger: tpu-inference.speculative.runner-refuses
        _refuse(
            section,
            named,
            f"configures the speculative method {method}{default}, which tpu-inference (vLLM's TPU backend) does "
            "not run: the server stops at start",
            f"write a method among {_TPU_LIST}",
        )
        return None
    padded = _lax_true(config.get("disable_padded_drafter_batch"))
    return Speculation(method, padded, last)


def _lax_true(value: Any) -> bool:
    """True as pydantic's lax mode reads a bool field of vLLM's config (1, "yes", "on", ...)."""
    if isinstance(value, str):
        return value.strip().lower() in LAX_TRUE
    return isinstance(value, int | float) and value == 1


def _dotted_value(text: str) -> Any:
    """A dotted key's value as vLLM reads it: JSON, else the text (vLLM also reads `1k`-style numbers, which decide
    nothing here)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _nested(keys: list[str], value: Any) -> Any:
    """`a.b.c` = 1 as vLLM nests it: {"a": {"b": {"c": 1}}}."""
    for key in reversed(keys):
        value = {key: value}
    return value


def _merge(into: dict[str, Any], update: dict[str, Any]) -> None:
    """Dotted keys under one flag merged as vLLM merges them (a later value replaces an earlier one)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _method(config: dict[str, Any]) -> tuple[str, str]:
    """The method vLLM runs for this speculative config, as far as its text says, and, when vLLM chose it for the
    model given, why (else empty)."""
    method = config.get("method")
    model = config.get("model")
    model = model if isinstance(model, str) else None
    default = ""
    if method is None:
        if model is not None and _import_path(model):
            return CUSTOM_CLASS, " (vLLM's method for a model named by an import path)"
        if model in (NGRAM, f"[{NGRAM}]"):
            method = NGRAM
        else:
            method, default = DRAFT_MODEL, " (vLLM's method for a draft model given without one)"
    method = str(method)
    method = MTP if method in MTP_NAMES else method
    if method in REDETECTED and model is not None:
        for part, detected in DETECTED.items():
            if part in model.lower():
                return detected, ""
    return method, default


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
            f"{', '.join(sorted(ASYNC_METHODS & TPU_METHODS))}",
        )
        return given
    return False
