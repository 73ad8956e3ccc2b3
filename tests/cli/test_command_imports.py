"""The console script imports the command the arguments name and no other (`tpu-stacks plan` once paid for
`verify`'s and `size`'s imports at every run), while `--help` and a mistyped command still name every command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tpu_stacks.cli.main import build_parser, commands


def _choices(parser) -> set[str]:
    return set(next(a for a in parser._actions if a.dest == "command").choices)


def test_one_command_is_imported_alone_and_every_command_is_still_named():
    every = commands()
    assert {"size", "models", "plan"} <= set(every)
    alone = commands(only="models")
    assert list(alone) == ["models"]
    assert _choices(build_parser(alone)) == set(every)


def test_an_unknown_command_imports_every_module_so_the_message_can_name_them():
    assert set(commands(only="plann")) == set(commands())


def test_plan_in_a_fresh_interpreter_loads_neither_verify_nor_size():
    code = (
        "import sys\n"
        "from tpu_stacks.cli.main import main\n"
        "try:\n"
        "    main(['plan', '--stack', 'no-such-stack'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('tpu_stacks_live.verify.cli', 'tpu_stacks.cli.size') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stderr


@pytest.mark.parametrize("argv", [["size", "--help"], ["--help"]])
def test_help_still_works(argv, capsys):
    from tpu_stacks.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    assert "usage: tpu-stacks" in capsys.readouterr().out
