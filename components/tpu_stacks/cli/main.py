"""The `tpu-stacks` console script: `size` (will it fit?) and `plan` (offline preview)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tpu_stacks.errors import UserError


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line and exit code 2 (its default), no usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"tpu-stacks: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    from tpu_stacks.cli import size

    parser = _Parser(prog="tpu-stacks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    size.add_arguments(commands.add_parser("size", help="size a TPU slice for a model"))
    try:
        from tpu_stacks.cli import plan
    except ImportError:  # the offline extras are not installed
        plan = None  # type: ignore[assignment]
    if plan is not None:
        plan.add_arguments(commands.add_parser("plan", help="run a stack offline under mocks"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "size":
            from tpu_stacks.cli import size

            return size.run(args)
        from tpu_stacks.cli import plan

        return plan.run(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
