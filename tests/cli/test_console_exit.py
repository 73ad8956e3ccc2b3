"""The console script ends its process without the interpreter's teardown (tpu_stacks/cli/main.py `console`):
what it printed must still all arrive through a pipe, block-buffered as it is there, on both streams, with the
command's exit code; argparse's own exits keep theirs; what a library registered to run at exit still runs; and a
thread that is not a daemon is waited for, as an ordinary exit does."""

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


def _console_with(body: str, path: Path) -> subprocess.CompletedProcess[str]:
    """The console function with `main` replaced by `body`'s `fake` (a command's own work), in a fresh process."""
    program = f"import atexit, sys, threading, time\nfrom tpu_stacks.cli import main as cli\n{body}\ncli.main = fake\ncli.console()\n"
    return subprocess.run([sys.executable, "-c", program, str(path)], capture_output=True, text=True, timeout=60)


def test_what_a_library_registered_to_run_at_exit_still_runs(tmp_path: Path) -> None:
    """The Kubernetes client deletes the key files it wrote for `verify` and `bench` at exit (atexit)."""
    marker = tmp_path / "ran"
    body = "def fake():\n    atexit.register(lambda: open(sys.argv[1], 'w').write('ran'))\n    return 3\n"
    done = _console_with(body, marker)
    assert done.returncode == 3, done.stderr
    assert marker.read_text() == "ran"


def test_a_thread_that_is_not_a_daemon_is_waited_for(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    body = (
        "def fake():\n"
        "    def work():\n"
        "        time.sleep(0.5)\n"
        "        open(sys.argv[1], 'w').write('done')\n"
        "    threading.Thread(target=work).start()\n"
        "    return 0\n"
    )
    done = _console_with(body, marker)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "done"
