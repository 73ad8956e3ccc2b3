"""The scenarios a stack can build: `tpu-stacks:scenario` names one.

`cluster` is the cluster alone (stacks/cluster_only.py); every other scenario is a registered
workload (tpu_stacks/registry.py), built by stacks/workload_stack.py from its descriptor. Adding a
workload adds its scenario: nothing here names one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from stacks import cluster_only, workload_stack
from stacks.config import LoadedStack, Secrets
from tpu_stacks.registry import workloads


@dataclass(frozen=True)
class Scenario:
    name: str
    section: str | None
    """The config key of the scenario's own section (`tpu-stacks:<section>`), if it has one."""
    build: Callable[[LoadedStack, Secrets], None]


def scenarios() -> dict[str, Scenario]:
    """The cluster scenario, then one per registered workload."""
    found = [Scenario(w.name, w.section, partial(workload_stack.build, w)) for w in workloads()]
    return {scenario.name: scenario for scenario in (Scenario("cluster", None, cluster_only.build), *found)}
