"""`tpu-stacks ARGS...` through the console script's own `main`, in the test process.

A new interpreter per call (`subprocess.run([tpu-stacks, ...])`) paid the provider SDKs' imports again each time,
about 1.5 s of CPU per `plan`, to test what the command prints and returns, which is `main`'s. What only the
console script adds (the collector frozen, `sys.exit` with `main`'s code) is tested where that is the point
(tests/cli/test_sources_in_output.py runs `tpu-stacks plan --all` as a process).

The result is a `subprocess.CompletedProcess`, so a test reads `returncode`, `stdout` and `stderr` as before.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

from tpu_stacks.cli.main import main


def tpu_stacks(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the command in-process with its output captured; argparse's own exits (`--help`, a bad flag) give
    their code as a process would."""
    args = [str(arg) for arg in argv]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(args)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess(["tpu-stacks", *args], code or 0, stdout.getvalue(), stderr.getvalue())
