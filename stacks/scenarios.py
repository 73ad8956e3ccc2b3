"""The scenarios a stack can build: a static mapping from `tpu-stacks:scenario` to a build function.

A scenario module under `stacks/` defines `build(stack: LoadedStack, secrets: Secrets) -> None`,
which hands the stack's raw sections to one component: the component parses and checks them, once.
Adding a scenario is one module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stacks import cluster_only, jetstream_stack, raytrain_stack, saxml_stack, vllm_stack
from stacks.config import LoadedStack, Secrets


@dataclass(frozen=True)
class Scenario:
    name: str
    section: str | None
    """The config key of the scenario's own section (`tpu-stacks:<section>`), if it has one."""
    build: Callable[[LoadedStack, Secrets], None]


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario("cluster", None, cluster_only.build),
        Scenario("vllm", "vllm", vllm_stack.build),
        Scenario("saxml", "saxml", saxml_stack.build),
        Scenario("jetstream", "jetstream", jetstream_stack.build),
        Scenario("raytrain", "raytrain", raytrain_stack.build),
    )
}

SECTIONS: dict[str, str | None] = {name: scenario.section for name, scenario in SCENARIOS.items()}
"""What the config loader needs to know of the scenarios: each one's own section key."""
