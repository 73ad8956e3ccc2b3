"""`tpu-stacks e2e --stack S [--cwd DIR] [--keep]`: the subcommand (entry point `tpu_stacks.commands`, see
components/tpu_stacks/cli/main.py). Exit 0 when every step passed, 1 at a failed step, 2 for the user's input."""

from __future__ import annotations

import argparse
from pathlib import Path

from tpu_stacks_live.e2e.automation import open_stack, run_verify
from tpu_stacks_live.e2e.budget import plan_budget
from tpu_stacks_live.e2e.runner import Runner
from tpu_stacks_preview.config import require_stack_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True, help="stack name: Pulumi.<stack>.yaml; deployed, checked, destroyed")
    parser.add_argument("--cwd", default=".", help="the Pulumi project directory (default: .)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave the stack up at the end (and after a failure): no destroy; the TPU keeps billing",
    )


def build_runner(args: argparse.Namespace) -> Runner:
    project_dir = Path(args.cwd).resolve()
    require_stack_file(project_dir, args.stack)  # the planner's refusal, did-you-mean included
    return Runner(
        stack_name=args.stack,
        plan=lambda: plan_budget(project_dir, args.stack),
        open_stack=lambda: open_stack(args.stack, project_dir),
        verify=lambda kubeconfig: run_verify(args.stack, project_dir, kubeconfig),
        keep=args.keep,
    )


def run(args: argparse.Namespace) -> int:
    return build_runner(args).run()
