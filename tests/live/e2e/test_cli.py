"""Everything up to the Pulumi CLI call, offline: the subcommand is registered and checks its stack file, the real
Automation API stack fails in one line when no CLI is on PATH, verify runs as a subprocess of this Python and its
FAIL line is the step's line, and `make e2e STACK=...` passes the stack."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tpu_stacks.cli import main
from tpu_stacks_live.e2e import automation, cli
from tpu_stacks_live.e2e.runner import StepFailed

ROOT = Path(__file__).resolve().parents[3]


def test_e2e_is_a_tpu_stacks_command_with_help():
    assert main.commands()["e2e"] is cli
    assert "e2e" in main.HELP
    args = main.build_parser().parse_args(["e2e", "--stack", "dev", "--keep"])
    assert (args.stack, args.keep, args.cwd) == ("dev", True, ".")


def test_a_stack_without_its_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]):
    assert main.main(["e2e", "--stack", "nope", "--cwd", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--stack: 'nope' has no stack file" in err
    assert "stacks here:" in err and "dev" in err


def test_a_misspelt_stack_names_the_closest_one(capsys: pytest.CaptureFixture[str]):
    assert main.main(["e2e", "--stack", "vlm", "--cwd", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'vllm'?" in err


def test_the_runner_is_wired_to_the_real_steps():
    runner = cli.build_runner(argparse.Namespace(stack="dev", cwd=str(ROOT), keep=True))
    assert (runner.stack_name, runner.keep) == ("dev", True)


def test_without_the_pulumi_cli_the_real_stack_fails_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there: `pulumi version` cannot start
    with pytest.raises(StepFailed, match=r"^the Pulumi CLI is not on PATH \(pulumi\); install it: https://"):
        automation.open_stack("dev", ROOT)


def test_verify_runs_under_this_python_as_the_tpu_stacks_command():
    assert automation.verify_command("vllm") == [
        sys.executable,
        "-m",
        "tpu_stacks.cli.main",
        "verify",
        "--stack",
        "vllm",
    ]


def test_verify_output_is_streamed_and_its_fail_line_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    script = "print('PASS    a: fine'); print('FAIL    b: 1 node, planned 2 -> raise quota'); raise SystemExit(1)"
    monkeypatch.setattr(automation, "verify_command", lambda stack, kubeconfig=None: [sys.executable, "-c", script])
    out = io.StringIO()
    assert automation.run_verify("dev", tmp_path, out=out) == (1, "FAIL    b: 1 node, planned 2 -> raise quota")
    assert out.getvalue().splitlines() == ["PASS    a: fine", "FAIL    b: 1 node, planned 2 -> raise quota"]
    monkeypatch.setattr(
        automation, "verify_command", lambda stack, kubeconfig=None: [sys.executable, "-c", "print('PASS x')"]
    )
    assert automation.run_verify("dev", tmp_path, out=io.StringIO()) == (0, "")


def test_verify_gets_ups_kubeconfig_in_a_private_file_removed_afterwards(tmp_path: Path, monkeypatch):
    assert automation.verify_command("dev", "/k")[-2:] == ["--kubeconfig", "/k"]
    seen = {}

    def command(stack, kubeconfig=None):
        path = Path(kubeconfig)
        seen.update(path=path, text=path.read_text(), mode=path.stat().st_mode & 0o777)
        return [sys.executable, "-c", "print('PASS x')"]

    monkeypatch.setattr(automation, "verify_command", command)
    assert automation.run_verify("dev", tmp_path, "apiVersion: v1\n", out=io.StringIO()) == (0, "")
    assert seen["text"] == "apiVersion: v1\n" and seen["mode"] == 0o600 and not seen["path"].exists()


def test_verify_line_without_a_fail_check():
    assert (
        automation.verify_line(["tpu-stacks: --stack: 'x' is unknown; fix"], 2)
        == "tpu-stacks: --stack: 'x' is unknown; fix"
    )
    assert automation.verify_line(["UNKNOWN a: b"], 3) == "tpu-stacks verify exited 3"


def test_make_e2e_passes_the_stack():
    result = subprocess.run(
        ["make", "-n", "--no-print-directory", "e2e", "STACK=vllm-405b", "E2E_ARGS=--keep"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "venv/bin/tpu-stacks e2e --stack vllm-405b --keep" in result.stdout.splitlines()
    # run as a user runs it, not as a sub-make of `make test` (which would print `make[1]: ...` lines)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    default = subprocess.run(
        ["make", "-n", "--no-print-directory", "e2e"], cwd=ROOT, capture_output=True, text=True, check=True, env=env
    ).stdout
    assert "venv/bin/tpu-stacks e2e --stack dev " in default.splitlines()[-1] + " "
