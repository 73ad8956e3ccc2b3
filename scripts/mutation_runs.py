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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Paths (relative to the copy) put first on PYTHONPATH, so the copy's mutated file is the one imported.
SEARCH_PATHS = ["components", "policies"]

# Where a loaded module's code is: its file, or a namespace package's folders (none for a built-in); and
# whether that is the project's: inside one of `roots` (the repository, its copy) but not in the interpreter's
# own prefix (a venv inside the repository holds third-party code).
_PLACES = """
def _places(module):
    file = getattr(module, "__file__", None)
    return [os.path.realpath(file)] if file else [os.path.realpath(p) for p in getattr(module, "__path__", None) or ()]

def _own(places, roots, prefix):
    inside = lambda place, root: (place + os.sep).startswith(root)
    return any(inside(p, r) and not inside(p, prefix) for p in places for r in roots)
"""

_TRACE_PLUGIN = (
    """
import json, os, sys, threading
"""
    + _PLACES
    + """
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

seconds = {}

def pytest_runtest_logreport(report):
    seconds[report.nodeid] = seconds.get(report.nodeid, 0.0) + report.duration

def pytest_sessionfinish(session):
    # Only the modules that ran: a lazy module (type _LazyModule) never ran, and a worker that loaded
    # it would pay for what the tests did not use (pulumi_gcp has a hundred of them).
    loaded = {n: m for n, m in list(sys.modules.items()) if type(m).__name__ != "_LazyModule"}
    with open(OUT, "w") as f:
        json.dump(
            {
                "hits": {k: sorted(v) for k, v in hits.items()},
                "seconds": seconds,
                "modules": {name: _places(module) for name, module in loaded.items()},
            },
            f,
        )
"""
)


def prepare_copy(copy: Path) -> None:
    """Byte-compile the copy once, each .pyc checked against its source's hash on import; make it a git
    repository of its files.

    Runs set PYTHONDONTWRITEBYTECODE (so no run leaves a .pyc of a mutant behind), so without this every run
    compiled all of the project's modules from source. A hash-checked .pyc is safe where a timestamp one is
    not: a mutant is written within the same second as the original and may have its size, which a
    timestamp .pyc cannot tell apart; the interpreter hashes the source on every import, so the mutated
    file is compiled afresh and every other module loads its .pyc."""
    cmd = [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", str(copy)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    # Tests that list the repository's files ask git (`git ls-files`: tests/test_registry.py, test_sources.py,
    # test_distributions.py), and the copy has no .git: a new repository holding every file the copy has that
    # .gitignore does not ignore answers them as the repository would (its untracked files count as tracked).
    if shutil.which("git") and not (copy / ".git").exists():
        for git in (["init", "-q"], ["add", "-A"]):
            subprocess.run(["git", *git], cwd=copy, check=True, stdout=subprocess.DEVNULL)


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


# The project's own top-level packages: a warm worker never imports them (nor anything whose code is in the
# repository or its copy), so each forked run imports the copy's (mutated) files.
OWN = ("tpu_stacks", "tpu_policies", "tpu_stacks_preview", "tests", "scripts")

# What a worker imports when the baseline did not say (the tests it was started with had no trace).
WARM = ("pytest", "pydantic", "yaml", "pulumi", "pulumi_policy", "pulumi_kubernetes", "pulumi_gcp")


def third_party(loaded: dict[str, list[str]], roots: list[Path]) -> list[str]:
    """The modules a traced run loaded from outside `roots` (the repository and its copy), in the order
    they were loaded: what a warm worker may import before forking. pulumi_gcp and pulumi_kubernetes load
    their submodules lazily (`pulumi_kubernetes.core.v1` alone takes about 0.4 s), so warming only the
    top-level packages left each run paying for them."""
    scope: dict = {"os": os}
    exec(_PLACES, scope)
    where = [os.path.realpath(r) + os.sep for r in roots]
    prefix = os.path.realpath(sys.prefix) + os.sep
    return [
        name
        for name, places in loaded.items()
        if name != "__main__" and name.split(".")[0] not in OWN and not scope["_own"](places, where, prefix)
    ]


_WORKER = (
    r"""
import gc, json, os, signal, sys, threading, time
"""
    + _PLACES
    + r"""
def _load(module):
    # A lazy module (pulumi's SDKs make their subpackages lazy) runs its code on the first attribute
    # access that is not introspection; asking for a name it does not have is one.
    hasattr(module, "__mutation_warm__")

for name in json.loads(sys.argv[1]):
    # The parent first, all of it: a submodule imported while its package is still lazy is bound on the
    # package before the package's __init__ runs, and the lazy loader keeps that binding over what the
    # __init__ exports under the same name (pulumi_kubernetes.apiextensions.CustomResource, a class,
    # became the module); the tests never import that way.
    try:
        _load(sys.modules.get(name.rpartition(".")[0]))
        if name not in sys.modules:
            __import__(name)
        _load(sys.modules[name])
    except BaseException:
        pass
import pytest
roots = [os.path.realpath(r) + os.sep for r in json.loads(sys.argv[3])]
prefix = os.path.realpath(sys.prefix) + os.sep
own = sorted(
    name for name, module in list(sys.modules.items())
    if name.split(".")[0] in json.loads(sys.argv[4]) or _own(_places(module), roots, prefix)
)
assert not own, f"the warm imports pulled in the project's own modules: {own}"
assert threading.active_count() == 1, f"a warm import started a thread; forking would copy it half-done"
# The warm modules' objects go to the permanent generation: each fork's collections skip them (and do not
# touch, hence copy, their pages).
gc.collect()
gc.freeze()
flags = json.loads(sys.argv[2])
child = 0


def _stop(signum, frame):
    # Worker.stop: the run under way ends with the worker, not after it (a pytest fork would outlive it).
    if child:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, _stop)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            # Only the unmutated baseline run writes bytecode: pytest's assertion-rewritten test files
            # (checked by the test file's mtime and size; no run changes a test file), so later runs load
            # them instead of rewriting each test module again. The copy's own modules have hash-checked
            # .pyc files already (prepare_copy), which a valid one is never written over.
            sys.dont_write_bytecode = not request.get("write_bytecode", False)
            code = int(pytest.main([*flags, *request["args"]]))
        finally:
            os._exit(code)
    child = pid
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
    child = 0
    sys.stdout.write(json.dumps(rc) + "\n")
    sys.stdout.flush()
"""
)


class Worker:
    """A warm interpreter in one copy that forks a pytest run per request: the third-party imports
    (seconds on a busy machine) are paid once, and each fork still imports the project's code afresh
    from the copy. The baseline check (`check`) proves the forked runs pass on the unmutated module."""

    def __init__(self, copy: Path, warm: list[str] | tuple[str, ...] = WARM):
        self.copy = copy
        roots = [str(copy), str(REPO)]
        argv = [json.dumps(list(warm)), json.dumps(_FLAGS), json.dumps(roots), json.dumps(OWN)]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, *argv],
            cwd=copy, env=_env(copy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, args: list[str], timeout: float, write_bytecode: bool = False) -> int:
        """Fork one pytest run; `write_bytecode` only for the run on the unmutated copy (see _WORKER)."""
        assert self.proc.stdin and self.proc.stdout
        request = {"args": args, "timeout": timeout, "write_bytecode": write_bytecode}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise SystemExit(f"the mutation worker in {self.copy} stopped")
        return int(json.loads(answer))

    def stop(self) -> None:
        """End the worker and the run under way now (SIGTERM: the worker kills its pytest fork first); a thread
        waiting in `run` then stops with SystemExit."""
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class Baseline:
    """The traced run of a module's tests on the unmutated copy."""

    by_line: dict[int, set[str]]  # line -> the test ids that ran it
    import_lines: set[int]  # lines run at import (every test sees them)
    seconds: float
    warm: list[str]  # the third-party modules the tests loaded, for a worker to import once
    test_seconds: dict[str, float]  # test id -> its time in the traced run

    def quickest_first(self, ids: set[str]) -> list[str]:
        """Test ids, quickest first: a run stops at its first failure (`-x`), so a mutant a quick test
        kills is not made to wait for the slow ones."""
        return sorted(ids, key=lambda test: (self.test_seconds.get(test, 0.0), test))


class CannotRun(Exception):
    """A module the runner cannot measure (no test file; its tests fail before any mutation): `make mutation` says
    so and goes on to the next module, as a survivor would not tell it."""


def line_tests(copy: Path, module: str, tests: list[str]) -> Baseline:
    """Trace the module's tests: per line, the test ids that ran it; lines run at import; the run's time;
    the modules loaded from outside the repository."""
    plugin_dir = Path(tempfile.mkdtemp(prefix="mutation-trace-"))
    (plugin_dir / "mutation_trace.py").write_text(_TRACE_PLUGIN)
    out = plugin_dir / "hits.json"
    env = {"MUTATION_TARGET": str(copy / module), "MUTATION_TRACE_OUT": str(out)}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_dir), _env(copy)["PYTHONPATH"]])
    trace = ["-p", "no:cacheprovider", "-p", "mutation_trace", "-m", "not network"]
    cmd = [sys.executable, "-m", "pytest", "-q", *trace, *tests]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=copy, env={**_env(copy), **env}, capture_output=True, text=True)
        elapsed = time.monotonic() - started
        if proc.returncode not in (0, 5):  # 5: every test of the files is a network one
            raise CannotRun(
                f"{module}: the tests fail before any mutation:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
            )
        traced = json.loads(out.read_text())
        warm = third_party(traced["modules"], [copy, REPO, plugin_dir])
    finally:  # a failed baseline too: its trace folder is this run's, nobody else removes it
        shutil.rmtree(plugin_dir, ignore_errors=True)
    hits = traced["hits"]
    by_line: dict[int, set[str]] = {}
    import_lines: set[int] = set(hits.pop("<import>", []))
    for test, lines in hits.items():
        for line in lines:
            by_line.setdefault(line, set()).add(test)
    return Baseline(by_line, import_lines, elapsed, warm, traced["seconds"])
