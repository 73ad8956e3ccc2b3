"""The console script ends its process without the interpreter's teardown (`os._exit` after flushing,
tpu_stacks/cli/main.py `console`): what it printed must still all arrive through a pipe, block-buffered as
it is there, on both streams, with the command's exit code; and argparse's own exits keep theirs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tpu_stacks.catalog.models import MODELS

SCRIPT = shutil.which("tpu-stacks", path=str(Path(sys.executable).parent)) or "tpu-stacks"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """The script as a user's shell runs it: this machine sets PYTHONUNBUFFERED, which would hide a lost buffer."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=120, env=environment)


def test_what_it_prints_arrives_whole_through_a_pipe() -> None:
    done = _run("models", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("}\n")  # the last buffered bytes: without the flush, lost
    assert len(json.loads(done.stdout)["models"]) == len(MODELS)
    short = _run("size", MODELS[0].hf_id, "--json")  # shorter than one buffer: all of it waits for the flush
    assert short.returncode == 0 and short.stdout.endswith("}\n"), short.stderr
    assert json.loads(short.stdout)["model"]


def test_a_refusal_reaches_stderr_with_its_exit_code() -> None:
    done = _run("size", "acme/not-a-model")
    assert done.returncode == 2
    assert done.stderr.startswith("tpu-stacks: ") and done.stderr.endswith("\n") and done.stdout == ""


def test_argparse_exits_keep_their_codes() -> None:
    assert _run("--help").returncode == 0
    bad = _run("size", "--no-such-flag")
    assert bad.returncode == 2 and "tpu-stacks: " in bad.stderr
