"""Mutation testing of the decision layer: do the tests pin the numbers, or only run the lines?

Line coverage says a line ran; it does not say a test would notice the line computing something
else. This runner changes one thing at a time in a module (a mutant), runs the tests that execute
the changed line, and counts the mutant killed when a test fails (or the run errors or times out).
A surviving mutant is a behaviour no test pins. Operators, the usual set:

- comparisons flipped (`<` <-> `<=`, `>` <-> `>=`, `==` <-> `!=`, `in` <-> `not in`, `is` <-> `is not`);
- number constants +1 and -1 (`True`/`False` are not numbers here);
- arithmetic swapped (`*` <-> `/`, `+` <-> `-`, `//` -> `*`);
- `and` <-> `or`, `not x` -> `x`;
- conditions negated (`if`, `while`, conditional expressions);
- `return value` -> `return None`.

Each mutant is the original file with one source span replaced, so line numbers stay put. Tests run
in a copy of the repository (`PYTHONPATH` puts the copy's `components/` first, ahead of the
editable install), one pytest process per mutant with `-x` and a timeout, on as many workers as
there are cores. A mutant first runs the tests that executed its line in a traced baseline run of the
module's test files (a line that runs at import, tables and defaults, runs all of them); if those
pass, it runs all of the module's tests before it counts as a survivor (a value computed once and
cached reaches tests that never execute its line).

Equivalent mutants (no behaviour can tell them apart) are listed with the reason in
`scripts/mutation_equivalent.txt`; they are reported, and left out of the score, never silently.

    venv/bin/python scripts/mutation.py                 # every module of the decision layer
    venv/bin/python scripts/mutation.py sizing.py       # the modules whose path ends so

Not part of `make test` (minutes, not seconds); `make mutation` runs it. Run it before a change
to one of these modules lands.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT_FILE = REPO / "scripts" / "mutation_equivalent.txt"

# module -> the test files that pin it: the module's own pure, fast tests (the CLI's and the
# components' tests run these modules too, but a number is pinned where it is decided). Missing
# files are skipped; the runner picks, per line, the tests among these that run it.
MODULES: dict[str, list[str]] = {
    "components/tpu_stacks/sizing.py": ["tests/test_sizing.py", "tests/test_sizing_numbers.py"],
    "components/tpu_stacks/catalog/tpu.py": ["tests/catalog/test_tpu.py", "tests/test_sizing.py"],
    "policies/tpu_policies/fit.py": [
        "tests/policies/test_fit.py",
        "tests/policies/test_fit_numbers.py",
        "tests/policies/test_fit_raw.py",  # the engine-flag inference (`_inferred`) and its tensor-parallel shard
    ],
    "policies/tpu_policies/matching.py": [
        "tests/policies/test_matching.py",
        "tests/policies/test_matching_numbers.py",
    ],
    "components/tpu_stacks/vllm/plan.py": ["tests/vllm/test_plan.py"],
    "components/tpu_stacks/saxml/plan.py": ["tests/saxml/test_plan.py"],
    "components/tpu_stacks/jetstream/plan.py": ["tests/jetstream/test_plan.py"],
    "components/tpu_stacks/raytrain/plan.py": ["tests/raytrain/test_plan.py"],
    "components/tpu_stacks/cluster/plan.py": [
        "tests/cluster/test_plan.py",
        "tests/cluster/test_capacity_fallback.py",  # capacity lists: pools become a ComputeClass
        "tests/cluster/test_compute_class.py",
        "tests/catalog/test_locations.py",  # where a pool may go (catalog/locations.py through the plan)
    ],
    "components/tpu_stacks/cluster/capacity.py": [
        "tests/cluster/test_plan.py",
        "tests/cluster/test_capacity.py",
        "tests/cluster/test_capacity_fallback.py",
        "tests/cluster/test_workload_capacity.py",
        "tests/catalog/test_capacity.py",
    ],
    # The connectivity contract, the policies generated from it, and who may reach a load balancer.
    "components/tpu_stacks/k8s/connectivity.py": ["tests/k8s/test_connectivity.py"],
    "components/tpu_stacks/k8s/platform_flows.py": [
        "tests/k8s/test_connectivity.py",
        "tests/test_workload_networks.py",  # the workloads compose them
    ],
    "components/tpu_stacks/k8s/network_policy.py": ["tests/k8s/test_connectivity.py"],
    "components/tpu_stacks/exposure.py": ["tests/test_exposure.py"],
    "components/tpu_stacks/vllm/network.py": ["tests/test_workload_networks.py"],
    "components/tpu_stacks/saxml/network.py": ["tests/test_workload_networks.py"],
    "components/tpu_stacks/jetstream/network.py": ["tests/test_workload_networks.py"],
    "components/tpu_stacks/raytrain/network.py": ["tests/test_workload_networks.py"],
}
# Paths (relative to the copy) put first on PYTHONPATH, so the copy's mutated file is the one imported.
SEARCH_PATHS = ["components", "policies"]
IGNORED = shutil.ignore_patterns("venv", ".git", "__pycache__", ".pytest_cache", "manifests", "plan-*.json")

_COMPARE_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP = {ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.FloorDiv: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    line: int
    function: str
    original: str
    mutated: str
    start: tuple[int, int]  # (line, byte column), 1-based line
    end: tuple[int, int]
    occurrence: int = 0

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the file: the function, the change, its occurrence."""
        suffix = f" #{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.function}: {self.original!r} -> {self.mutated!r}{suffix}"


def _segment(lines: list[bytes], node: ast.AST) -> str:
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return _slice(lines, start, end).decode()


def _slice(lines: list[bytes], start: tuple[int, int], end: tuple[int, int]) -> bytes:
    (sl, sc), (el, ec) = start, end
    if sl == el:
        return lines[sl - 1][sc:ec]
    return lines[sl - 1][sc:] + b"".join(lines[sl : el - 1]) + lines[el - 1][:ec]


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Expr) and isinstance(node, ast.Constant) and isinstance(node.value, str)


class _Collector(ast.NodeVisitor):
    """Walks the module and yields one Mutant per (node, operator), skipping annotations."""

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.scope: list[str] = []
        self.mutants: list[Mutant] = []
        self._seen: dict[tuple[str, str, str], int] = {}

    def _add(self, node: ast.AST, mutated: str) -> None:
        original = _segment(self.lines, node)
        if original == mutated:
            return
        function = ".".join(self.scope) or "<module>"
        k = (function, original, mutated)
        occurrence = self._seen.get(k, 0)
        self._seen[k] = occurrence + 1
        self.mutants.append(
            Mutant(
                line=node.lineno,
                function=function,
                original=original,
                mutated=mutated,
                start=(node.lineno, node.col_offset),
                end=(node.end_lineno, node.end_col_offset),
                occurrence=occurrence,
            )
        )

    # scopes; annotations are not behaviour
    def _scoped(self, node, name: str) -> None:
        self.scope.append(name)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
            self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._scoped(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, node.name)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.visit(node.value)

    def visit_If(self, node: ast.If) -> None:
        test_src = _segment(self.lines, node.test)
        if not (test_src == "TYPE_CHECKING" or "__name__" in test_src):
            self._add(node.test, f"not ({test_src})")
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._add(node.test, f"not ({_segment(self.lines, node.test)})")
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._add(node.test, f"(not ({_segment(self.lines, node.test)}))")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, "return None")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is None:
                continue
            ops = list(node.ops)
            ops[i] = swap()
            self._add(node, ast.unparse(ast.Compare(left=node.left, ops=ops, comparators=node.comparators)))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _BINOP_SWAP.get(type(node.op))
        if swap is not None and not _is_string_format(node):
            self._add(node, ast.unparse(ast.BinOp(left=node.left, op=swap(), right=node.right)))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add(node, ast.unparse(ast.BoolOp(op=other, values=node.values)))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, f"({_segment(self.lines, node.operand)})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return
        for mutated in (value + 1, value - 1):
            self._add(node, repr(mutated))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # messages: their numbers are format specs, not behaviour


def _is_string_format(node: ast.BinOp) -> bool:
    return isinstance(node.left, (ast.JoinedStr,)) or (
        isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
    )


def collect(source: str) -> list[Mutant]:
    lines = source.encode().splitlines(keepends=True)
    collector = _Collector(lines)
    collector.visit(ast.parse(source))
    return collector.mutants


def apply(source: str, mutant: Mutant) -> str:
    lines = source.encode().splitlines(keepends=True)
    (sl, sc), (el, ec) = mutant.start, mutant.end
    head = b"".join(lines[: sl - 1]) + lines[sl - 1][:sc]
    tail = lines[el - 1][ec:] + b"".join(lines[el:])
    return (head + mutant.mutated.encode() + tail).decode()


# --- which tests run which line -------------------------------------------------------------------

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


_FLAGS = ["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _pytest(copy: Path, args: list[str], timeout: float, extra_env: dict[str, str] | None = None) -> tuple[int, float]:
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
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutation_trace", *tests]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=copy, env={**_env(copy), **env}, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{module}: the tests fail before any mutation:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    hits = json.loads(out.read_text())
    shutil.rmtree(plugin_dir, ignore_errors=True)
    by_line: dict[int, set[str]] = {}
    import_lines: set[int] = set(hits.pop("<import>", []))
    for test, lines in hits.items():
        for line in lines:
            by_line.setdefault(line, set()).add(test)
    return by_line, import_lines, elapsed


# --- running -------------------------------------------------------------------------------------


@dataclass
class ModuleResult:
    module: str
    killed: list[Mutant] = field(default_factory=list)
    survived: list[Mutant] = field(default_factory=list)
    equivalent: list[tuple[Mutant, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.killed) + len(self.survived)

    @property
    def score(self) -> float:
        return 100.0 * len(self.killed) / self.total if self.total else 100.0

    def line(self) -> str:
        eq = f" ({len(self.equivalent)} equivalent, listed)" if self.equivalent else ""
        return f"{self.module}: killed/total = {len(self.killed)}/{self.total} = {self.score:.1f}%{eq}"


def load_equivalents(path: Path = EQUIVALENT_FILE) -> dict[tuple[str, str], str]:
    """`module | mutant key | reason`, one per line; `#` starts a comment."""
    out: dict[tuple[str, str], str] = {}
    if not path.exists():
        return out
    for raw in path.read_text().splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        module, key, reason = (part.strip() for part in raw.split(" | ", 2))
        if not reason:
            raise SystemExit(f"{path}: an equivalent mutant needs its reason: {raw}")
        out[(module, key)] = reason
    return out


def _select(mutant: Mutant, by_line: dict[int, set[str]], import_lines: set[int], tests: list[str]) -> list[str]:
    lines = range(mutant.start[0], mutant.end[0] + 1)
    if any(line in import_lines for line in lines):
        return list(tests)  # runs at import: every test sees it
    ids: set[str] = set()
    for line in lines:
        ids |= by_line.get(line, set())
    return sorted(ids)


def run_module(
    root: Path,
    module: str,
    tests: list[str],
    workers: int,
    equivalents: dict[tuple[str, str], str],
    fresh: bool = False,
) -> ModuleResult:
    tests = [t for t in tests if (root / t).exists()]
    source = (root / module).read_text()
    mutants = collect(source)
    result = ModuleResult(module)
    copies: list[Path] = []
    warm: dict[Path, Worker] = {}
    try:
        for _ in range(max(1, workers)):
            copy = Path(tempfile.mkdtemp(prefix="mutation-")) / "repo"
            shutil.copytree(root, copy, ignore=IGNORED)
            copies.append(copy)
        by_line, import_lines, baseline = line_tests(copies[0], module, tests)
        timeout = max(20.0, 5 * baseline)
        todo: list[tuple[Mutant, list[str]]] = []
        for mutant in mutants:
            reason = equivalents.get((module, mutant.key))
            if reason is not None:
                result.equivalent.append((mutant, reason))
                continue
            todo.append((mutant, _select(mutant, by_line, import_lines, tests)))
        if not fresh:
            warm = {copy: Worker(copy) for copy in copies}
            for worker in warm.values():
                if worker.run(tests, max(timeout, 120.0)) != 0:
                    raise SystemExit(f"{module}: the tests fail in a forked worker before any mutation; try --fresh")

        def pytest_rc(copy: Path, args: list[str]) -> int:
            return _pytest(copy, args, timeout)[0] if fresh else warm[copy].run(args, timeout)

        free = list(copies)

        def one(item: tuple[Mutant, list[str]]) -> tuple[Mutant, bool]:
            mutant, selected = item
            copy = free.pop()
            try:
                (copy / module).write_text(apply(source, mutant))
                rc = pytest_rc(copy, selected) if selected else 0
                if rc in (0, 5) and selected != tests:
                    # The baseline's line map misses what a test reaches through a value computed once and
                    # cached (a cached_property, a table built at first use): a survivor runs every test.
                    rc = pytest_rc(copy, tests)
            finally:
                (copy / module).write_text(source)
                free.append(copy)
            return mutant, rc not in (0, 5)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(copies)) as pool:
            for done, (mutant, killed) in enumerate(pool.map(one, todo), 1):
                (result.killed if killed else result.survived).append(mutant)
                if done % 50 == 0:
                    print(f"  {module}: {done}/{len(todo)} mutants run", file=sys.stderr, flush=True)
    finally:
        for worker in warm.values():
            worker.close()
        for copy in copies:
            shutil.rmtree(copy.parent, ignore_errors=True)
    result.survived.sort(key=lambda m: m.line)
    return result


def report(results: list[ModuleResult], out=sys.stdout) -> None:
    for result in results:
        print(result.line(), file=out)
    for result in results:
        if result.survived:
            print(f"\nsurvivors in {result.module}:", file=out)
            for mutant in result.survived:
                print(f"  line {mutant.line}: {result.module} | {mutant.key}", file=out)
        for mutant, reason in result.equivalent:
            print(f"  equivalent, line {mutant.line}: {mutant.key} ({reason})", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="run only the modules whose path ends with one of these")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--fresh", action="store_true", help="a new interpreter per run instead of forks of a warm one (slower)"
    )
    parser.add_argument("--root", type=Path, default=REPO, help="the repository to test (default: this one)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the copies are removed
    chosen = {m: t for m, t in MODULES.items() if not args.modules or any(m.endswith(s) for s in args.modules)}
    if not chosen:
        parser.error(f"no module matches {args.modules}; modules: {', '.join(MODULES)}")
    equivalents = load_equivalents()
    results = []
    for module, tests in chosen.items():
        started = time.monotonic()
        result = run_module(args.root.resolve(), module, tests, args.workers, equivalents, args.fresh)
        print(f"{result.line()}  [{time.monotonic() - started:.0f} s]", file=sys.stderr, flush=True)
        for mutant in result.survived:  # as they come, so a long run shows its survivors early
            print(f"  survivor, line {mutant.line}: {mutant.key}", file=sys.stderr, flush=True)
        results.append(result)
    print()
    report(results)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    r.module: {
                        "killed": len(r.killed),
                        "total": r.total,
                        "score": round(r.score, 1),
                        "survivors": [f"line {m.line}: {m.key}" for m in r.survived],
                        "equivalent": [f"{m.key}: {why}" for m, why in r.equivalent],
                    }
                    for r in results
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
