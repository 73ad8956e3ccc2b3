"""The one error type for a user's mistake: it names the key, the bad value and the fix.

Everything that validates user input (stack config, component args, CLI flags) raises
`UserError`; the CLI and the Pulumi program print its one line and exit 2, never a traceback.

The value is shown so a person can read it and nobody can steal it: values that look like secrets
(or sit under a key named like one) are redacted, long values are cut with their length, and
invisible or look-alike characters (U+2011 in `us‑central1‑b`) are shown as escapes. What looks like a
secret is `tpu_stacks.secrets`, the rule the policy pack applies too.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from tpu_stacks.secrets import REDACTED, redact, secret_key, secret_kind

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""The value of a setting that was not given at all."""

LONGEST_SHOWN = 80
"""Values longer than this (as shown) are cut, with their length: a 10,000-character value is not an error line."""


def looks_secret(text: str) -> bool:
    """Whether any part of `text` is shaped like a secret."""
    return secret_kind(text) is not None


def _invisible(char: str) -> bool:
    """Characters a reader cannot tell from ASCII or cannot see: every non-ASCII one in a project whose
    keys and values (names, zones, quantities, flags) are ASCII by rule."""
    return ord(char) > 127


def visible(text: str) -> str:
    """Non-ASCII characters as escapes, so `us\\u2011central1-b` cannot pass for `us-central1-b`."""
    return "".join(
        char if not _invisible(char) else f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"
        for char in text
    )


def _unusual_characters(value: Any) -> str:
    """` (contains U+2011 NON-BREAKING HYPHEN)` for the first non-ASCII character of a string value."""
    if not isinstance(value, str):
        return ""
    for char in value:
        if _invisible(char):
            name = unicodedata.name(char, "an unnamed character")
            return f" (contains U+{ord(char):04X} {name})"
    return ""


def shorten(shown: str, length: int | None = None) -> str:
    """Cut a shown value past LONGEST_SHOWN, saying how long it was."""
    if len(shown) <= LONGEST_SHOWN:
        return shown
    total = length if length is not None else len(shown)
    return f"{shown[: LONGEST_SHOWN - 20]}… ({total} characters)"


class _Shown:
    """A stand-in that prints as its text: what an error line shows for a value it must not print."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


AN_OUTPUT = _Shown("<an Output>")
"""How an error line shows a `pulumi.Output`: its value is not known when the line is written (and may be
a secret), and `str()` of an Output is only pulumi's warning text, not a value."""


def is_output(value: Any) -> bool:
    """Whether `value` is a Pulumi Output (told by its class, so this pure module needs no pulumi import)."""
    return any(cls.__module__ == "pulumi.output" and cls.__name__ == "Output" for cls in type(value).__mro__)


def printable(value: Any) -> Any:
    """`value` with every Output in it (inside lists and mappings too) replaced by `<an Output>`."""
    if is_output(value):
        return AN_OUTPUT
    if isinstance(value, dict):
        return {key: printable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable(item) for item in value]  # a plain list: a namedtuple takes no generator
    return value


SHOWN_UNDER_SECRET_KEYS = (None, "", "<set>", "<plain text>", "<missing>")
"""What a message may show under a secret's key: nothing given, or the marker that says one is given."""


def show(value: Any, key: str = "") -> str:
    """How a value appears in an error line: redacted, visible, short; an Output as `<an Output>`."""
    if secret_key(key) and value not in SHOWN_UNDER_SECRET_KEYS and not isinstance(value, bool):
        return REDACTED  # any value under a secret's key (text, a number, a mapping...) but the markers below
    value = printable(value)
    if value is AN_OUTPUT:
        return repr(value)
    shown = visible(redact(repr(value) if isinstance(value, str) else str(value)))  # repr escapes controls
    return shorten(shown, len(value) if isinstance(value, str) else None)


class UserError(ValueError):
    """A mistake in the user's input, rendered as one line: `KEY: VALUE is ...; FIX`."""

    def __init__(self, key: str, value: Any, problem: str, fix: str = "") -> None:
        self.key = key
        self.value = value
        self.problem = problem
        self.fix = fix
        shown_key = visible(redact(key))
        if value is MISSING:
            message = f"{shown_key} {problem}"
        else:
            shown = show(value, key) + _unusual_characters(value)
            message = f"{shown_key}: {shown} {problem}" if key else f"{shown} {problem}"
        if fix:
            message += f"; {fix}"
        # One line, always: a value or fix with a newline would split it.
        super().__init__(" ".join(redact(message).splitlines()))

    def in_namespace(self, namespace: str) -> UserError:
        """The same error with its key as a Pulumi config key (`tpu-stacks:cluster.location`)."""
        if self.key.startswith(f"{namespace}:") or ":" in self.key.split(".", 1)[0]:
            return self  # already a full config key (`gcp:project`) or a file's line
        return UserError(f"{namespace}:{self.key}" if self.key else namespace, self.value, self.problem, self.fix)

    def rekeyed(self, keys: dict[str, str]) -> UserError:
        """The same error under the user's key, when its key (or a parent of it) is in `keys`:
        a workload's derived slice refuses `cluster.slices[0].spot` as the `vllm.spot` the user wrote."""
        for old in sorted(keys, key=len, reverse=True):
            if self.key == old or self.key.startswith((f"{old}.", f"{old}[")):
                return UserError(keys[old] + self.key[len(old) :], self.value, self.problem, self.fix)
        return self

    def under(self, prefix: str) -> UserError:
        """The same error with its key placed under a config prefix (`cluster.` + `slices[0]...`)."""
        key = f"{prefix}.{self.key}" if self.key else prefix
        return UserError(key, self.value, self.problem, self.fix)
