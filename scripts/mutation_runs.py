"""How scripts/mutation.py runs a module's tests: a traced baseline (which test runs which line), a
fresh interpreter per run, or forks of a warm one (`Worker`). Each run imports the project's code from
a copy of the repository, ahead of the editable install on `PYTHONPATH`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Paths (relative to the copy) put first on PYTHONPATH, so the copy's mutated file is the one imported.
SEARCH_PATHS = ["components", "policies"]

_TRACE_PLUGIN = """
import json, os, sys, threading
TARGET = os.path.realpath(os.environ["MUTATION_TARGET"])
OUT = os.environ["MUTATION_TRACE_OUT"]
current = ["<import>"]
hits = {}

def _local(frame, event, arg):
    if event == "line":
        hits.setdefault(current[0], set()).add(frame.f_lineno)
    return _local

seen = {}

def _global(frame, event, arg):
    name = frame.f_code.co_filename
    target = seen.get(name)
    if target is None:
        target = seen[name] = os.path.realpath(name) == TARGET
    if target:
        hits.setdefault(current[0], set()).add(frame.f_lineno)
        return _local
    return None

sys.settrace(_global)
threading.settrace(_global)

def pytest_runtest_setup(item):
    current[0] = item.nodeid

def pytest_runtest_teardown(item):
    current[0] = "<import>"

def pytest_sessionfinish(session):
    with open(OUT, "w") as f:
        json.dump({k: sorted(v) for k, v in hits.items()}, f)
"""


def _env(copy: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(copy / p) for p in SEARCH_PATHS] + [str(copy)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env["PYTHONPATH"]] if env.get("PYTHONPATH") else paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


# `-m "not network"`: the tests that fill fresh venvs from PyPI (`make test-network`) pin no decision.
_FLAGS = ["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", "-m", "not network"]


def run_pytest(
    copy: Path, args: list[str], timeout: float, extra_env: dict[str, str] | None = None
) -> tuple[int, float]:
    """One fresh interpreter per run (`--fresh`, and the baseline's trace): slow, nothing shared."""
    cmd = [sys.executable, "-m", "pytest", *_FLAGS, *args]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            cmd, cwd=copy, env=_env(copy, extra_env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - started
    return proc.returncode, time.monotonic() - started


# Third-party packages a worker imports once; the project's own code (`tpu_stacks`, `tpu_policies`,
# `tests`) is never imported by the worker itself, so each forked run imports the copy's (mutated) files.
WARM = ("pytest", "pydantic", "yaml", "pulumi", "pulumi_policy", "pulumi_kubernetes", "pulumi_gcp")

_WORKER = r"""
import json, os, signal, sys, time
for name in json.loads(sys.argv[1]):
    try:
        __import__(name)
    except Exception:
        pass
import pytest
own = [m for m in sys.modules if m.split(".")[0] in ("tpu_stacks", "tpu_policies", "tests")]
assert not own, f"the warm imports pulled in the project's own modules: {own}"
flags = json.loads(sys.argv[2])
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = int(pytest.main([*flags, *request["args"]]))
        finally:
            os._exit(code)
    deadline = time.monotonic() + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            rc = -1
            break
        time.sleep(0.01)
    sys.stdout.write(json.dumps(rc) + "\n")
    sys.stdout.flush()
"""


class Worker:
    """A warm interpreter in one copy that forks a pytest run per request: the third-party imports
    (seconds on a busy machine) are paid once, and each fork still imports the project's code afresh
    from the copy. The baseline check (`check`) proves the forked runs pass on the unmutated module."""

    def __init__(self, copy: Path):
        self.copy = copy
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, json.dumps(WARM), json.dumps(_FLAGS)],
            cwd=copy, env=_env(copy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, args: list[str], timeout: float) -> int:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"args": args, "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise SystemExit(f"the mutation worker in {self.copy} stopped")
        return int(json.loads(answer))

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def line_tests(copy: Path, module: str, tests: list[str]) -> tuple[dict[int, set[str]], set[int], float]:
    """Trace the module's tests: per line, the test ids that ran it; lines run at import; the run's time."""
    plugin_dir = Path(tempfile.mkdtemp(prefix="mutation-trace-"))
    (plugin_dir / "mutation_trace.py").write_text(_TRACE_PLUGIN)
    out = plugin_dir / "hits.json"
    env = {"MUTATION_TARGET": str(copy / module), "MUTATION_TRACE_OUT": str(out)}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_dir), _env(copy)["PYTHONPATH"]])
    trace = ["-p", "no:cacheprovider", "-p", "mutation_trace", "-m", "not network"]
    cmd = [sys.executable, "-m", "pytest", "-q", *trace, *tests]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=copy, env={**_env(copy), **env}, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if proc.returncode not in (0, 5):  # 5: every test of the files is a network one
        raise SystemExit(f"{module}: the tests fail before any mutation:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    hits = json.loads(out.read_text())
    shutil.rmtree(plugin_dir, ignore_errors=True)
    by_line: dict[int, set[str]] = {}
    import_lines: set[int] = set(hits.pop("<import>", []))
    for test, lines in hits.items():
        for line in lines:
            by_line.setdefault(line, set()).add(test)
    return by_line, import_lines, elapsed
