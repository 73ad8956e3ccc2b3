"""The one error type for a user's mistake: it names the key, the bad value and the fix.

Everything that validates user input (stack config, component args, CLI flags) raises
`UserError`; the CLI and the Pulumi program print its one line and exit 2, never a traceback.
"""

from __future__ import annotations

from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""The value of a setting that was not given at all."""


class UserError(ValueError):
    """A mistake in the user's input, rendered as one line: `KEY: VALUE is ...; FIX`."""

    def __init__(self, key: str, value: Any, problem: str, fix: str = "") -> None:
        self.key = key
        self.value = value
        self.problem = problem
        self.fix = fix
        shown = repr(value) if isinstance(value, str) else str(value)
        if value is MISSING:
            message = f"{key} {problem}"
        else:
            message = f"{key}: {shown} {problem}" if key else f"{shown} {problem}"
        if fix:
            message += f"; {fix}"
        super().__init__(message)

    def in_namespace(self, namespace: str) -> UserError:
        """The same error with its key as a Pulumi config key (`tpu-stacks:cluster.location`)."""
        return UserError(f"{namespace}:{self.key}", self.value, self.problem, self.fix)

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
