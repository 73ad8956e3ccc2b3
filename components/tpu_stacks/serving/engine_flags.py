"""A server's flags read as its own parser reads them: one reader for a stack's `extraArgs` and the policy pack.

A stack passes its own flags first and the user's `extraArgs` after them, and the engine's argparse keeps the last
value of a flag. So a flag in `extraArgs` that the stack also writes from one of its keys (`--max-model-len` from
`vllm.maxModelLen`) silently replaces it: the slice was sized, the memory checked and the traffic predicted for the
key's value, and the server runs another. Such a flag is refused here, naming the key to set instead (MaxText's
settings likewise: raytrain/plan.py). A flag the stack does not write but the memory model reads (`--dtype`,
`--kv-cache-dtype`, `--quantization`) is read into the sizing instead (`served_dtypes`), by the engine's own dtype
rule (catalog/engines/dtypes.py), as the policy pack reads a server it did not plan (tpu_policies/engine_args.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_stacks.catalog.engines import dtype_rule
from tpu_stacks.catalog.engines.record import EngineVersion, Flag, Meaning
from tpu_stacks.catalog.model_shape import ModelArchitecture
from tpu_stacks.errors import UserError


def split_argument(part: Any) -> list[str]:
    """One container argument as the tokens a shell would give (a string with spaces split; not a string: none)."""
    if not isinstance(part, str):
        return []
    if " " not in part.strip():
        return [part]
    try:
        return shlex.split(part)
    except ValueError:
        return part.split()


@dataclass(frozen=True)
class GivenFlag:
    """A flag as written: its name as the engine reads it, its value (None: a switch, no value follows), and the
    argument it came from."""

    argument: int
    name: str
    value: str | None
    written: str = ""
    """The flag and its value as the user wrote them (`--port 9000`, across two arguments or in one)."""


def given_flags(
    arguments: Sequence[Any], engine: EngineVersion | None = None, known: Collection[str] = ()
) -> list[GivenFlag]:
    """Every flag in `arguments`, as argparse reads a container's arguments (Kubernetes passes them without a shell:
    split a shell string first, `split_argument`): `--flag=value`, `--flag value`, `-q value` and `-qvalue`, a
    negative number taken as a value. For an engine whose parser reads underscores as dashes (its record's
    `underscored_flags`: vLLM's, ledger: vllm.args.underscores-as-dashes), the names are read that way too, up to a
    name's first `.` (a JSON argument's key path keeps its own). Neither engine's parser turns argparse's
    abbreviations off, so a name that only begins one of `known` (the engine's sizing flags and `known`) is read as
    it: `--max-model` is `--max-model-len` to vLLM and `--context` `--context-length` to SGLang-JAX (ledger:
    vllm.args.abbreviations, sglang.args.abbreviations)."""
    names = {*known, *(engine_names(engine) if engine is not None else ())}
    tokens = [(index, part) for index, part in enumerate(arguments) if isinstance(part, str)]
    found: list[GivenFlag] = []
    for position, (index, token) in enumerate(tokens):
        if not token.startswith("-") or NEGATIVE_NUMBER.fullmatch(token):
            continue
        name, eq, after = token.partition("=")
        value: str | None = after
        short = name[:2]
        if not eq and not name.startswith("--") and len(name) > 2 and short in names and name not in names:
            name, value, eq = short, name[2:], "attached"  # `-qfp8`: a short option with its value
        if not eq:
            following = tokens[position + 1][1] if position + 1 < len(tokens) else ""
            taken = following and (not following.startswith("-") or NEGATIVE_NUMBER.fullmatch(following))
            value = following if taken else None
        written = token if value is None or eq else f"{token} {value}"
        if engine is not None and engine.underscored_flags and name.startswith("--"):
            head, dot, rest = name[2:].partition(".")
            name = "--" + head.replace("_", "-") + dot + rest
        found.append(GivenFlag(index, _unabbreviated(name, names), value, written))
    return found


NEGATIVE_NUMBER = re.compile(r"-\d+(\.\d*)?")
"""argparse reads `-1` after a flag as its value, not as a flag (neither engine declares an option like a number)."""


def engine_names(engine: EngineVersion) -> set[str]:
    """The flag names (and other spellings) the engine's record declares."""
    return {name for flag in engine.flags for name in (flag.name, *flag.aliases)}


def _unabbreviated(name: str, names: Collection[str]) -> str:
    """`name` as argparse reads it against `names`: itself, or the one long name it begins (more than one: argparse
    refuses it as ambiguous, and so it is left as written)."""
    if not name.startswith("--") or name in names or "." in name:
        return name
    begun = [known for known in names if known.startswith(name)]
    return begun[0] if len(begun) == 1 else name


def flag_values(tokens: Sequence[Any], engine: EngineVersion) -> dict[str, str]:
    """Each flag's value (a switch's: `true`); the last occurrence wins, as argparse does."""
    return {flag.name: "true" if flag.value is None else flag.value for flag in given_flags(tokens, engine)}


def flag_value(arguments: Sequence[Any], flag: str, engine: EngineVersion | None = None) -> str | None:
    """The value of `flag`'s last occurrence in a server's arguments (None: absent, or given no value), its name
    read as `engine`'s parser reads it (None: as written)."""
    value = None
    for given in given_flags(arguments, engine, known=(flag,)):  # an abbreviation argparse takes for it too
        if given.name == flag:
            value = given.value
    return value


def spelled_out(arguments: Sequence[Any], engine: EngineVersion, known: Collection[str] = ()) -> list[Any]:
    """`arguments` with each long flag argparse would take for one of `known` (or the engine's record) written in
    full (`--tensor-parallel=2` -> `--tensor-parallel-size=2`), values and positions kept: for readers of the
    written text (serving/parallel_flags.py), which match full spellings only."""
    spelled = list(arguments)
    for given in given_flags(arguments, engine, known=known):
        token = spelled[given.argument]
        head, eq, tail = token.partition("=")
        if head.startswith("--") and given.name != head and given.name.startswith(head):
            spelled[given.argument] = given.name + eq + tail
    return spelled


def switch_given(
    arguments: Sequence[Any], name: str, engine: EngineVersion | None = None, section: str | None = None
) -> bool | None:
    """An on/off flag as argparse's BooleanOptionalAction reads it (vLLM's bool settings, ledger:
    vllm.args.boolean-switches): the last of `--name` (True) and `--no-name` (False) given, under any abbreviation
    argparse takes for them, or None when neither is. It takes no value: the argument after it is not its (argparse
    leaves it to a positional), and `--name=false` stops the server, so in `<section>.extraArgs` it is refused;
    without `section` (a Serve config's engine_kwargs written as flags, `--name=false`) the value is read."""
    negative = "--no-" + name.removeprefix("--")
    found = None
    for given in given_flags(arguments, engine, known=(name, negative)):
        if given.name not in (name, negative):
            continue
        attached = "=" in given.written.split(" ", 1)[0]
        if attached and section is not None:
            raise UserError(
                f"{section}.extraArgs[{given.argument}]",
                given.written,
                "gives a value to a switch, which the server refuses at start",
                f"write {name} or {negative}",
            )
        if given.name == negative:
            found = False
        else:
            found = not attached or (given.value or "").lower() not in ("false", "0")
    return found


def given_value(flags: Mapping[str, str], flag: Flag, default: str | None = None) -> str | None:
    """The flag's value under its name, else under an alias, else `default`."""
    if flag.name in flags:
        return flags[flag.name]
    return next((flags[alias] for alias in flag.aliases if alias in flags), default)


def engine_flag(engine: EngineVersion, meaning: Meaning) -> Flag:
    """The engine's flag of this meaning (the catalogue declares every one a reader asks for)."""
    found = engine.flag(meaning)
    if found is None:
        raise ValueError(f"{engine.engine} {engine.version} declares no {meaning} flag")
    return found


@dataclass(frozen=True)
class ServedDtypes:
    """The weights' and the KV cache's dtypes a server's flags give, or why the memory model cannot size them (and
    the flag that says so)."""

    weight: str | None
    kv: str | None
    problem: str | None = None
    flag: Flag | None = None


def served_dtypes(engine: EngineVersion, flags: Mapping[str, str], architecture: ModelArchitecture) -> ServedDtypes:
    """`--dtype`, `--quantization` and `--kv-cache-dtype` (each engine's flags of those meanings) by the engine's
    dtype rule; without them, what the engine does when told nothing."""
    rule = dtype_rule(engine)
    if rule is None:
        return ServedDtypes(None, None, f"{engine.engine} {engine.version} declares no dtype rule")
    dtype, kv_dtype, quantization = (engine_flag(engine, m) for m in ("weight_dtype", "kv_dtype", "quantization"))
    weight = rule.weight(given_value(flags, dtype, dtype.default) or "", architecture)
    method = given_value(flags, quantization)
    if method is not None:
        weight = rule.quantization.get(method.lower())
        if weight is None:
            known = ", ".join(rule.quantization) or "none"
            problem = f"{quantization.name} {method} is not one the memory model sizes ({known})"
            return ServedDtypes(None, None, problem, quantization)
    kv_flag = given_value(flags, kv_dtype, kv_dtype.default) or ""
    kv = rule.kv_cache(kv_flag, weight) if weight is not None else None
    if weight is None or kv is None:
        shown = f"{dtype.name}/{kv_dtype.name} {flags.get(dtype.name)}/{kv_flag}"
        return ServedDtypes(None, None, f"{shown} is not sizable", dtype if weight is None else kv_dtype)
    return ServedDtypes(weight, kv)


@dataclass(frozen=True)
class Written:
    """A flag the stack writes: the key it writes it from (None: a value of the stack's own) and the value (None: the
    key leaves the engine's own choice, which any value in extraArgs would replace)."""

    key: str | None
    value: str | None
    why: str = ""
    """For a value of the stack's own, what depends on it."""
    switch: bool = False
    """A switch (argparse's store_true: given or not, `value` "true" or "false"), which takes no `=value`."""


def check_extra_args_form(section: str, extra_args: Sequence[str]) -> None:
    """Refuse an extraArgs entry that is a flag and its value in one argument (`--kv-cache-dtype fp8`): Kubernetes
    passes container arguments without a shell, and argparse takes an argument holding a space for a positional
    (CPython's Lib/argparse.py, `_parse_optional`: "if it contains a space, it was meant to be a positional"), so
    the server would not apply it while a reader that split it would size it."""
    for index, entry in enumerate(extra_args):
        head = entry.split("=", 1)[0]
        if entry.startswith("-") and " " in head.strip():
            flag, _, value = entry.strip().partition(" ")
            raise UserError(
                f"{section}.extraArgs[{index}]",
                entry,
                "is a flag and its value in one argument, which the server takes for a positional (no shell splits it)",
                f"write {flag}={value.strip()}, or the flag and its value as two entries",
            )


def _same(given: str, written: str) -> bool:
    """The same value as the engine reads it: the same text, the same integer, or the same fraction (`0.80` is
    `0.8`)."""
    if given == written:
        return True
    if written.lstrip("-").isdigit():  # an integer flag: vLLM's int() refuses `4096.0`
        return given.lstrip("-").isdigit() and int(given) == int(written)
    try:
        return float(given) == float(written)
    except ValueError:
        return False


def check_written_flags(
    section: str, extra_args: Sequence[str], engine: EngineVersion, written: Mapping[str, Written]
) -> None:
    """Refuse a flag in `<section>.extraArgs` that the stack writes (by its name or an alias the engine's record
    declares) with another value, in one line naming the key to set instead."""
    names = dict(written)
    for flag in engine.flags:
        for alias in flag.aliases:
            if flag.name in written:
                names.setdefault(alias, written[flag.name])
    for given in given_flags(extra_args, engine, known=names):
        stack = names.get(given.name)
        if stack is None:
            continue
        where = f"{section}.extraArgs[{given.argument}]"
        if stack.switch and "=" in given.written.split(" ", 1)[0]:
            raise UserError(
                where,
                given.written,
                "gives a value to a switch, which the server refuses at start",
                f"write {given.name} alone, or set {stack.key} instead",
            )
        value = "true" if stack.switch or given.value is None else given.value
        if stack.value is not None and _same(value, stack.value):
            continue
        if stack.key is None:
            raise UserError(
                where,
                given.written,
                f"sets {given.name}, which the stack fixes at {stack.value} ({stack.why})",
                "leave it out",
            )
        raise UserError(
            where,
            given.written,
            f"sets {given.name}, which the stack writes from {stack.key} ({stack.value or 'unset'}): the slice, its "
            "memory and its traffic were sized for the key's",
            f"set {stack.key} instead",
        )


def extra_args_dtypes(
    section: str, extra_args: Sequence[str], engine: EngineVersion, architecture: ModelArchitecture
) -> ServedDtypes:
    """The dtypes the server runs with once `<section>.extraArgs` are appended (its `--dtype`, `--quantization`,
    `--kv-cache-dtype`, else the engine's own choice), which the slice is sized in; one the memory model cannot size
    is refused, naming the argument."""
    dtypes = served_dtypes(engine, flag_values(extra_args, engine), architecture)
    if dtypes.problem is None:
        return dtypes
    names = {dtypes.flag.name, *dtypes.flag.aliases} if dtypes.flag is not None else set()
    last = [g for g in given_flags(extra_args, engine) if g.name in names][-1:]
    raise UserError(
        f"{section}.extraArgs[{last[0].argument}]" if last else f"{section}.extraArgs",
        last[0].written if last else " ".join(extra_args),
        dtypes.problem,
        "give a value the memory model sizes, or leave it out (the engine's own choice is sized)",
    )


def extra_args_number(section: str, extra_args: Sequence[str], engine: EngineVersion, meaning: Meaning) -> int | None:
    """The whole number `<section>.extraArgs` give the engine's flag of this meaning (its last value, under its name
    or an alias), None when they give none; anything but a whole number is refused, naming the argument."""
    flag = engine_flag(engine, meaning)
    names = {flag.name, *flag.aliases}
    given = [g for g in given_flags(extra_args, engine) if g.name in names]
    if not given:
        return None
    last = given[-1]
    if last.value is None or not last.value.lstrip("-").isdigit():
        raise UserError(
            f"{section}.extraArgs[{last.argument}]",
            last.written,
            f"gives {flag.name} no whole number",
            f"write {flag.name}=<tokens>, or leave it out",
        )
    return int(last.value)
