"""`tpu-stacks plan` on a program it cannot run says so in one line and names what plans it.

The planner runs Python programs in-process; the Pulumi YAML example (examples/vllm-yaml) used to end
in "main: '__main__.py' does not exist", a dead end for a user trying it offline."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks_preview import cli as plan
from tpu_stacks_preview.config import check_python_program

ROOT = Path(__file__).resolve().parents[2]
YAML_EXAMPLE = ROOT / "examples" / "vllm-yaml"


def _plan(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    return plan.run(parser.parse_args(list(argv)))


@pytest.mark.parametrize("stacks", [["--stack", "dev"], ["--all"]])
def test_the_yaml_example_is_answered_in_one_line(capsys: pytest.CaptureFixture[str], stacks: list[str]) -> None:
    assert _plan(*stacks, "--cwd", str(YAML_EXAMPLE)) == 2
    _, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "runtime: 'yaml'" in lines[0] and "plans Python programs" in lines[0], err
    assert f"`pulumi preview` in {YAML_EXAMPLE} plans this one" in lines[0], err
    assert "__main__.py" not in err and "stack file" not in err and "Traceback" not in err


def _project(tmp_path: Path, runtime: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: p\nruntime: {runtime}\n")
    return tmp_path


@pytest.mark.parametrize("runtime", ["python", "{name: python, options: {toolchain: pip}}"])
def test_a_python_program_passes(tmp_path: Path, runtime: str) -> None:
    check_python_program(_project(tmp_path, runtime))  # no error: the rest of the loader takes over


@pytest.mark.parametrize(("runtime", "name"), [("nodejs", "nodejs"), ("{name: go}", "go")])
def test_other_runtimes_are_refused_with_their_name(tmp_path: Path, runtime: str, name: str) -> None:
    with pytest.raises(UserError, match=f"runtime: '{name}' is not planned offline"):
        check_python_program(_project(tmp_path, runtime))
