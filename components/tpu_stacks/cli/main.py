"""The `tpu-stacks` console script: `size` (will it fit?), `models` (which can I name?) and the commands
other distributions add.

`plan` (the offline preview) lives in the `tpu-stacks-preview` distribution (tools/preview), which
registers it under the `tpu_stacks.commands` entry-point group: a command module there provides
`add_arguments(parser)` and `run(args) -> int`. Without it installed, `tpu-stacks plan` says how
to get it in one line.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import NoReturn

from tpu_stacks.errors import UserError

COMMAND_GROUP = "tpu_stacks.commands"
HELP = {
    "size": "size a TPU slice for a model",
    "models": "list the model catalogue: names, sizes, gated or not",
    "plan": "run a stack offline under mocks",
    "verify": "check a deployed stack against its plan: PASS, FAIL or UNKNOWN with the change to make",
    "e2e": "deploy a stack, check it (smoke test, verify, a quiet preview) and destroy it, timed",
    "bench": "measure a deployed stack's server with inference-perf over a sweep of rates; write a GIQ profile",
}
PROVIDED_BY = {
    "plan": "tpu-stacks-preview (pip install ./tools/preview in this repository)",
    "verify": "tpu-stacks-live (pip install ./tools/live in this repository)",
    "e2e": "tpu-stacks-live (pip install ./tools/live in this repository)",
    "bench": "tpu-stacks-live (pip install ./tools/live in this repository)",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line and exit code 2 (its default), no usage dump."""

    def error(self, message: str) -> NoReturn:
        if "invalid choice" in message:
            for command, distribution in PROVIDED_BY.items():
                if f"'{command}'" in message.split("(choose from")[0]:
                    message = f"'{command}' needs {distribution}"
        self.exit(2, f"tpu-stacks: {message} (see '{self.prog} --help')\n")


def commands() -> dict[str, ModuleType]:
    """`size`, `models` and every installed command module, by name."""
    found = {name: importlib.import_module(f"tpu_stacks.cli.{name}") for name in ("size", "models")}
    for entry in entry_points(group=COMMAND_GROUP):
        found.setdefault(entry.name, importlib.import_module(entry.value))
    return found


def build_parser(modules: dict[str, ModuleType] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="tpu-stacks", description=__doc__.split("\n", 1)[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, module in (modules or commands()).items():
        module.add_arguments(subparsers.add_parser(name, help=HELP.get(name)))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    modules = commands()
    args = build_parser(modules).parse_args(argv)
    try:
        return modules[args.command].run(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2


def console() -> None:
    """The console script: a short-lived process that loads hundreds of thousands of long-lived objects
    (the provider SDKs). Python's cyclic collector would walk them again and again while they load and
    once more at exit, finding nothing to free: it stays off, and what was loaded is frozen (excluded
    from the final collection) before the process exits. Results are the same; only the walks go."""
    gc.disable()
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console()
