"""`tpu-stacks verify --stack S`: read a deployed stack and answer, check by check, PASS, FAIL or UNKNOWN with the one
change to make. Read-only: GET on the Kubernetes API, read calls on Google's APIs, a preview for drift.

What the stack assumes comes from its offline plan (the planner, in-process); what is there comes from the
kubeconfig's cluster and Application Default Credentials, or, with `--fixtures FILE`, from recorded synthetic
answers (the tests, and a demonstration without a cluster). Exit 0 when nothing failed, 1 when a check failed, 2 on
the user's input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tpu_stacks.errors import UserError
from tpu_stacks_live.verdict import CheckResult, Verdict, exit_code
from tpu_stacks_live.verify.checks import registry, select
from tpu_stacks_live.verify.plan import StackPlan, load_plan
from tpu_stacks_live.verify.registry import Context, run_check


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument("--stack", help="the stack to verify: reads Pulumi.<stack>.yaml and plans it offline")
    parser.add_argument("--cwd", default=".", help="the Pulumi project directory (default: .)")
    parser.add_argument("--only", metavar="CHECK", help="run this one check (see --list)")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: its current context)")
    parser.add_argument("--project", help="Google Cloud project (default: the stack's gcp:project)")
    parser.add_argument(
        "--fixtures",
        metavar="FILE",
        help="answer from recorded synthetic API answers instead of the cluster and Google (tests, demonstrations)",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="also run the active probes (they create short-lived pods: not read-only)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        return _verify(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2


def _list() -> int:
    for item in registry().values():
        print(f"{item.name:<36} {item.summary}")
    return 0


def _readers(args: argparse.Namespace, plan: StackPlan):  # noqa: ANN202 - three readers
    if args.fixtures:
        from tpu_stacks_live.verify.fixtures import recorded

        return recorded(Path(args.fixtures))
    from tpu_stacks_live.verify.live import LiveCluster, LiveGoogle, LivePulumi

    return LiveCluster(args.kubeconfig, args.context), LiveGoogle(args.project or plan.project), LivePulumi()


def probe_results(plan: StackPlan, api_client: object) -> list[CheckResult]:
    """The active probes of `--probe` (tpu_stacks_live.probe, imported only when asked)."""
    from tpu_stacks_live.probe import probe_checks

    return list(probe_checks(plan.objects, api_client))


def _verify(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    if not args.stack:
        raise UserError("--stack", "(unset)", "is required", "name the stack to verify, e.g. --stack dev")
    if args.only:
        select(StackPlan(args.stack), args.only)  # a misspelt check is said before the plan runs
    plan = load_plan(Path(args.cwd), args.stack)
    checks = select(plan, args.only)
    if args.only and not checks[0].applies(plan):
        print(f"{args.only}: does not apply to stack {args.stack} (its plan declares nothing it checks)")
        return 0
    cluster, google, pulumi = _readers(args, plan)
    ctx = Context(plan, cluster, google, pulumi, cwd=args.cwd)
    results = [run_check(item, ctx) for item in checks]
    if args.probe:
        results += probe_results(plan, cluster.api_client)
    for result in results:
        print(result.line())
    counts = {verdict: sum(r.verdict is verdict for r in results) for verdict in Verdict}
    print(
        f"{args.stack}: {counts[Verdict.PASS]} passed, {counts[Verdict.FAIL]} failed, "
        f"{counts[Verdict.UNKNOWN]} unknown" + (" (recorded synthetic answers)" if args.fixtures else "")
    )
    return exit_code(results)
