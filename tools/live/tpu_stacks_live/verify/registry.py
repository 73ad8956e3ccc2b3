"""The checks `tpu-stacks verify` knows: each one a name (kebab-case, as `--only` and the upstream ledger's
`settled_by = "verify: <name>"` spell it), a line saying what it settles, the test that decides whether it
applies to a stack (from the stack's plan: what it declares, never its name) and the function that answers.

A check reads the cluster and the project through `Context` and returns a CheckResult; when a reader cannot read
(`Unreadable`), `run_check` answers UNKNOWN with the reader's fix, so no check handles permissions itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


def run_check(item: Check, ctx: Context) -> CheckResult:
    try:
        return item.run(ctx)
    except Unreadable as error:
        return item.answer(Verdict.UNKNOWN, f"could not read: {error.what}", error.fix)
