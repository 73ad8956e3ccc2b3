"""The checks, one module per group; importing this package registers every one of them (registry.CHECKS), so
the questions about all of them (which exist, which apply to a plan) are asked here, not of the registry, which
the check modules themselves import.
"""

from __future__ import annotations

import difflib

from tpu_stacks.errors import UserError
from tpu_stacks_live.verify.checks import crds, drift, gateway, kuberay, metrics, network, nodes, platform, smoke
from tpu_stacks_live.verify.plan import StackPlan
from tpu_stacks_live.verify.registry import CHECKS, Check

__all__ = [
    "crds",
    "drift",
    "gateway",
    "kuberay",
    "metrics",
    "network",
    "nodes",
    "platform",
    "registry",
    "select",
    "smoke",
]


def registry() -> dict[str, Check]:
    """Every check (this package imported every module that registers one)."""
    return CHECKS


def select(stack_plan: StackPlan, only: str | None) -> list[Check]:
    """The checks that apply to the plan, or the one `--only` names (a typo is the user's, with a suggestion)."""
    known = registry()
    if only is None:
        return [item for item in known.values() if item.applies(stack_plan)]
    if only not in known:
        close = difflib.get_close_matches(only, list(known), n=1)
        fix = f"did you mean '{close[0]}'?" if close else "see `tpu-stacks verify --list`"
        raise UserError("--only", only, "is not a verify check", fix)
    return [known[only]]
