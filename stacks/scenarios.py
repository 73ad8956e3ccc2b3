"""The scenarios a stack can build: one module each under `stacks/`, loaded by name.

A scenario module defines `SPEC` (the pydantic model of its config section, or None) and
`build(stack: LoadedStack, secrets: Secrets) -> None`. Adding a scenario is one module and one
line here; nothing else in `stacks/` changes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tpu_stacks.errors import UserError


@dataclass(frozen=True)
class Scenario:
    name: str
    module: str
    section: str | None
    """The config key of the scenario's own section (`tpu-stacks:<section>`), if it has one."""
    takes_slices: bool = False
    """Whether `cluster.slices` may be set (otherwise the slices are derived from the model)."""

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)

    def spec(self) -> Any:
        return self.load().SPEC


SCENARIOS: dict[str, Scenario] = {
    "cluster": Scenario("cluster", "stacks.cluster_only", None, takes_slices=True),
    "vllm": Scenario("vllm", "stacks.vllm_stack", "vllm"),
    "saxml": Scenario("saxml", "stacks.saxml_stack", "saxml"),
    "jetstream": Scenario("jetstream", "stacks.jetstream_stack", "jetstream"),
    "raytrain": Scenario("raytrain", "stacks.raytrain_stack", "raytrain"),
}


def scenario(name: str) -> Scenario:
    if name not in SCENARIOS:
        raise UserError("scenario", name, "is not a scenario", f"valid: {', '.join(SCENARIOS)}")
    return SCENARIOS[name]
