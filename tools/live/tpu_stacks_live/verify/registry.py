"""The checks `tpu-stacks verify` knows: each one a name (kebab-case, as `--only` and the upstream ledger's
`settled_by = "verify: <name>"` spell it), a line saying what it settles, the test that decides whether it
applies to a stack (from the stack's plan: what it declares, never its name) and the function that answers.

A check reads the cluster and the project through `Context` and returns a CheckResult; when a reader cannot read
(`Unreadable`), `run_check` answers UNKNOWN with the reader's fix, so no check handles permissions itself.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from tpu_stacks.errors import UserError
from tpu_stacks_live.verdict import CheckResult, Verdict
from tpu_stacks_live.verify.plan import StackPlan
from tpu_stacks_live.verify.readers import Cluster, Google, Pulumi, Unreadable


@dataclass
class Context:
    """What a check reads: the plan (what the stack assumes) and the readers (what is there)."""

    plan: StackPlan
    cluster: Cluster
    google: Google
    pulumi: Pulumi
    cwd: str = "."


@dataclass(frozen=True)
class Check:
    name: str
    summary: str
    applies: Callable[[StackPlan], bool]
    run: Callable[[Context], CheckResult]

    def answer(self, verdict: Verdict, detail: str, fix: str = "") -> CheckResult:
        return CheckResult(self.name, verdict, detail, "" if verdict is Verdict.PASS else fix)


CHECKS: dict[str, Check] = {}


def check(name: str, summary: str, applies: Callable[[StackPlan], bool]) -> Callable:
    """Register `run(ctx, this) -> CheckResult` under `name`; one implementation per name."""

    def register(run: Callable[[Context, Check], CheckResult]) -> Callable[[Context, Check], CheckResult]:
        if name in CHECKS:
            raise ValueError(f"check {name} is registered twice")
        holder: list[Check] = []
        holder.append(Check(name, summary, applies, lambda ctx: run(ctx, holder[0])))
        CHECKS[name] = holder[0]
        return run

    return register


def registry() -> dict[str, Check]:
    """Every check, after importing the modules that register them."""
    from tpu_stacks_live.verify import checks  # noqa: F401 - registers on import

    return CHECKS


def run_check(item: Check, ctx: Context) -> CheckResult:
    try:
        return item.run(ctx)
    except Unreadable as error:
        return item.answer(Verdict.UNKNOWN, f"could not read: {error.what}", error.fix)


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
