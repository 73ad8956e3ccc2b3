"""Run a wrong input as a careless user would, and collect everything the program showed or wrote.

A stack file goes through `tpu-stacks plan` in-process (the same `run` the console script calls),
with `--json` and `--manifests` pointed at a scratch directory, so a secret that reached a plan
document or a manifest is found there. Every program run the planner makes is recorded, so the test
can count the resources declared before the refusal (the root Stack is the engine's, not ours).
A `size` call goes through the CLI's `main` the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.test_sources import problems
from tpu_stacks_preview import cli as plan_cli
from tpu_stacks_preview.capture import STACK_TYPE

ROOT = Path(__file__).resolve().parents[2]
BASE = {"gcp:project": "my-proj", "gcp:region": "us-central1"}
CLUSTER = {"name": "c", "location": "us-central1-b"}
QWEN = "Qwen/Qwen2.5-1.5B-Instruct"


@dataclass(frozen=True)
class Case:
    """One wrong input: a stack file (a mapping of config, or its raw text) or `size` arguments."""

    id: str
    input: Any
    """config mapping (merged over BASE), raw stack-file text/bytes, or a list of `size` arguments."""
    key: str
    """The key as the user wrote it, which the one stderr line must name."""
    secret: str | None = None
    """A secret in the input that no output may contain."""
    base: bool = True
    """Merge the mapping over BASE (project and region); False to leave one of them out."""
    also: tuple[str, ...] = ()
    """More text the one line must contain (the value shown, the fix)."""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    written: dict[str, str] = field(default_factory=dict)
    declared: list[str] = field(default_factory=list)
    """`type name` of each resource the program registered in the run that refused (Stack excluded)."""

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


@cache
def project_dir() -> Path:
    """One copy of the program for the whole session, so each case writes its own stack file."""
    directory = Path(tempfile.mkdtemp(prefix="bad-input-"))
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "stacks", directory / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def stack_text(case: Case) -> str | bytes:
    if isinstance(case.input, (str, bytes)):
        return case.input
    return yaml.safe_dump({"config": {**(BASE if case.base else {}), **case.input}}, sort_keys=False)


def plan(case: Case, monkeypatch: Any) -> Outcome:
    """`tpu-stacks plan --stack <case> --json ... --manifests ...` on the case's stack file."""
    project = project_dir()
    stack = f"bad-{case.id}"
    text = stack_text(case)
    path = project / f"Pulumi.{stack}.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    out_dir = Path(tempfile.mkdtemp(prefix=f"{stack}-"))
    runs: list[Any] = []
    real_run_program = plan_cli.run_program

    def recording_run_program(*args: Any, **kwargs: Any) -> Any:
        capture = real_run_program(*args, **kwargs)
        runs.append(capture)
        return capture

    monkeypatch.setattr(plan_cli, "run_program", recording_run_program)
    parser = argparse.ArgumentParser()
    plan_cli.add_arguments(parser)  # the command's own flags and defaults, as the console script parses them
    args = parser.parse_args(
        ["--stack", stack, "--cwd", str(project), "--json", str(out_dir / "plan.json")]
        + ["--manifests", str(out_dir / "manifests"), "--placeholder-secrets"]  # refusals come before any pack
    )
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = plan_cli.run(args)
    finally:
        path.unlink()
    written = {str(p.relative_to(out_dir)): p.read_text(errors="replace") for p in out_dir.rglob("*") if p.is_file()}
    shutil.rmtree(out_dir)
    failed = [capture for capture in runs if capture.error is not None]
    declared = [f"{r.type} {r.name}" for capture in failed for r in capture.resources if r.type != STACK_TYPE]
    return Outcome(code, stdout.getvalue(), stderr.getvalue(), written, declared)


def size(case: Case) -> Outcome:
    """`tpu-stacks size ARGS...` through the console script's own entry point."""
    from tpu_stacks.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(["size", *case.input])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return Outcome(code or 0, stdout.getvalue(), stderr.getvalue())


def check_refused(case: Case, outcome: Outcome, expected_code: int | None = None) -> None:
    """The promise for every wrong input: refused, one line naming the key, nothing leaked or declared."""
    everything = outcome.stdout + outcome.stderr + "".join(outcome.written.values())
    assert outcome.code != 0, outcome.stdout[-2000:]
    if expected_code is not None:
        assert outcome.code == expected_code, outcome.stderr
    assert "Traceback" not in everything, outcome.stderr
    assert len(outcome.lines) == 1, outcome.stderr
    line = outcome.lines[0]
    assert case.key in line, line
    for text in case.also:
        assert text in line, line
    assert problems("the one line", line) == [], line  # cites only what a user can open (tests/test_sources.py)
    if case.secret:
        assert case.secret not in everything, line
    assert outcome.declared == [], outcome.declared
