"""Policy settings declared as data: one declaration gives the config schema and the value read.

Each configurable policy used to spell its JSON schema by hand (type, items, default, description)
and repeat the default where it read the setting; a `Setting` says the key, the default and what it
is for once. The JSON type follows from the default (a list of strings, a boolean, an integer, a
string), so a schema cannot disagree with the default it declares, and `read` falls back to that
same default when the engine hands no value (tests call policies without a config).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyConfigSchema

from tpu_policies.values import config


@dataclass(frozen=True)
class Setting:
    """One setting of a policy: its key in the pack config, its default and its description."""

    key: str
    default: Any
    description: str
    minimum: int | None = None
    """For integer settings: the smallest value the schema accepts."""

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the setting, typed by its default."""
        if isinstance(self.default, bool):
            shape: dict[str, Any] = {"type": "boolean"}
        elif isinstance(self.default, int):
            shape = {"type": "integer"}
        elif isinstance(self.default, str):
            shape = {"type": "string"}
        elif isinstance(self.default, (list, tuple)):
            shape = {"type": "array", "items": {"type": "string"}}
        else:
            raise TypeError(f"setting {self.key}: no JSON type for a default of {type(self.default).__name__}")
        if self.minimum is not None:
            shape["minimum"] = self.minimum
        default = list(self.default) if isinstance(self.default, tuple) else self.default
        return {**shape, "default": default, "description": self.description}

    def read(self, args: Any) -> Any:
        """The configured value, or the default."""
        return config(args, self.key, self.default)


def config_schema(*settings: Setting) -> PolicyConfigSchema:
    """The config schema of a policy with these settings."""
    return PolicyConfigSchema(properties={setting.key: setting.schema() for setting in settings})
