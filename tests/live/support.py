"""Shared by the verify tests: each fixture stack planned once per session, and the recorded answers."""

from __future__ import annotations

import functools
from pathlib import Path

from tpu_stacks_live.verify.fixtures import recorded
from tpu_stacks_live.verify.plan import StackPlan, load_plan
from tpu_stacks_live.verify.registry import Context

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tools/live/tpu_stacks_live/fixtures"
STACKS = ("vllm-gateway", "vllm-405b", "jetstream-gemma", "raytrain")


@functools.cache
def planned(stack: str) -> StackPlan:
    return load_plan(ROOT, stack)


def context(plan: StackPlan, scenario: str, stack: str | None = None) -> Context:
    cluster, google, pulumi = recorded(FIXTURES / f"{stack or plan.stack}-{scenario}.json")
    return Context(plan, cluster, google, pulumi, cwd=str(ROOT))
