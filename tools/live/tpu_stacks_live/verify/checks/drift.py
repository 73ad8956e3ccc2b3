"""Drift: does a second `up` change nothing? `pulumi preview --expect-no-changes` fails on any proposed change
(https://www.pulumi.com/docs/iac/cli/commands/pulumi_preview/); run only where the Pulumi CLI is on PATH (verify
reads; a preview changes nothing)."""

from __future__ import annotations

import re

from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.registry import Check, Context, check

_CHANGE_MARKS = ("~ ", "+ ", "- ", "+-", "-+")


CHANGES_PROPOSED = re.compile(r"no changes were expected (for \S+ )?but changes were proposed")
"""What the Pulumi CLI prints when `--expect-no-changes` meets a change (pulumi/pulumi: `NoChangesExpectedError`,
"no changes were expected but changes were proposed", or "... for <operation> but ..." when it names one); any other
failure of the preview says nothing about drift."""


@check("drift-none", "a preview of the deployed stack proposes no change", lambda plan: True)
def drift_none(ctx: Context, this: Check):
    command = f"pulumi preview --expect-no-changes --diff --stack {ctx.plan.stack}"
    answer = ctx.pulumi.preview(ctx.plan.stack, ctx.cwd)
    if answer is None:
        return this.answer(Verdict.UNKNOWN, "no `pulumi` on PATH", f"install the Pulumi CLI or run: {command}")
    code, output = answer
    if code == 0:
        return this.answer(Verdict.PASS, "the preview proposes no change")
    if not CHANGES_PROPOSED.search(output):  # the preview itself failed (login, lock, the program): no answer on drift
        errors = [line.strip() for line in output.splitlines() if line.strip().startswith("error:")]
        said = errors[0] if errors else (output.strip().splitlines()[-1] if output.strip() else f"exit {code}")
        return this.answer(Verdict.UNKNOWN, f"the preview did not finish: {said}", f"fix that, then run: {command}")
    changed = [line.strip() for line in output.splitlines() if line.strip().startswith(_CHANGE_MARKS)]
    shown = "; ".join(changed[:3]) or (output.strip().splitlines()[-1] if output.strip() else f"exit {code}")
    return this.answer(
        Verdict.FAIL,
        f"the preview proposes changes: {shown}",
        "send what the API reads back for that field (docs/verify-on-a-cluster.md, drift)",
    )
