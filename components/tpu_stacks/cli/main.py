"""The `tpu-stacks` console script: `size` (will it fit?), `models` (which can I name?) and the commands
other distributions add.

`plan` (the offline preview) lives in the `tpu-stacks-preview` distribution (tools/preview), which
registers it under the `tpu_stacks.commands` entry-point group: a command module there provides
`add_arguments(parser)` and `run(args) -> int`. Without it installed, `tpu-stacks plan` says how
to get it in one line.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import NoReturn

from tpu_stacks.cli import sdk_bytecode
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


BUILT_IN = ("size", "models")


def _named() -> dict[str, str]:
    """Every command's module by name (`size`, `models` and the installed ones), none imported yet."""
    named = {name: f"tpu_stacks.cli.{name}" for name in BUILT_IN}
    for entry in entry_points(group=COMMAND_GROUP):
        named.setdefault(entry.name, entry.value)
    return named


def commands(only: str | None = None) -> dict[str, ModuleType]:
    """`size`, `models` and every installed command module, by name; with `only`, that command's module alone
    (a known name): `tpu-stacks plan` need not import what `verify` and `size` import."""
    named = _named()
    if only in named:
        named = {only: named[only]}
    return {name: importlib.import_module(module) for name, module in named.items()}


def build_parser(modules: dict[str, ModuleType] | None = None) -> argparse.ArgumentParser:
    """Every command a subparser; the arguments of those in `modules` (all, by default): the others are named
    (in `--help` and in an invalid-choice message) without their modules being imported."""
    parser = _Parser(prog="tpu-stacks", description=__doc__.split("\n", 1)[0])
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    modules = modules if modules is not None else commands()
    for name in _named():
        command = subparsers.add_parser(name, help=HELP.get(name))
        if name in modules:
            modules[name].add_arguments(command)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The command the arguments name: the first that is not an option (`tpu-stacks [-h] COMMAND ...`)."""
    return next((token for token in argv if not token.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    modules = commands(only=_command_of(argv))
    args = build_parser(modules).parse_args(argv)
    try:
        return modules[args.command].run(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2


def console() -> NoReturn:
    """The console script: a short-lived process that loads hundreds of thousands of long-lived objects
    (the provider SDKs). Python's cyclic collector would walk them again and again while they load: it stays
    off. At exit the interpreter would then tear every module down and free each object one by one (about
    0.1 s after a plan). So once `main` returns the process runs what the libraries registered to run at exit
    (the Kubernetes client deletes the key files it wrote for `verify` and `bench` that way, gRPC shuts
    down), flushes its output and ends (as mypy's console script does); with a thread still running that
    is not a daemon, it exits the ordinary way, which waits for the thread. The output and exit code are the
    same, but for a reader that left early (`| head`): exit 1 and no "Exception ignored" line. The provider
    SDKs load with their annotations unevaluated (`sdk_bytecode`: most of a plan's import time)."""
    gc.disable()
    sdk_bytecode.install()
    code = main()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()  # what `sys.exit` would run first; the teardown after it is what is skipped
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that left, or a stream already closed
            code = code or 1
    os._exit(code)


if __name__ == "__main__":
    console()
