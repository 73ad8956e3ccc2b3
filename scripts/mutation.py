"""Mutation testing of the decision layer: do the tests pin the numbers, or only run the lines?

Line coverage says a line ran; it does not say a test would notice the line computing something
else. This runner changes one thing at a time in a module (a mutant), runs the tests that execute
the changed line, and counts the mutant killed when a test fails (or the run errors or times out).
A surviving mutant is a behaviour no test pins. The operators, the usual set, are in
scripts/mutants.py; how a run imports the mutated copy, in scripts/mutation_runs.py.

Each mutant is the original file with one source span replaced, so line numbers stay put. Tests run
in a copy of the repository (`PYTHONPATH` puts the copy's `components/` first, ahead of the
editable install), one pytest process per mutant with `-x` and a timeout, on as many workers as
there are cores. A mutant first runs the tests that executed its line in a traced baseline run of the
module's test files (a line that runs at import, tables and defaults, runs all of them), quickest
first; if those pass, it runs the module's other tests before it counts as a survivor (a value
computed once and cached reaches tests that never execute its line).

What makes it quick (scripts/mutation_runs.py), none of it changing what counts as killed: the copy
is byte-compiled once with hash-checked .pyc files (the mutated file is recompiled, the rest load);
each run is a fork of a warm interpreter that imported every third-party module the baseline's
tests loaded (never the project's own); the baseline run leaves pytest's rewritten test modules
behind for the forks to load.

Equivalent mutants (no behaviour can tell them apart) are listed with the reason in
`scripts/mutation_equivalent.txt`; they are reported, and left out of the score, never silently.

The modules and the tests that pin each are found, not listed (scripts/mutation_targets.py): every
module the purity walk (tests/test_pure_decisions.py) calls the decision layer, each workload's
connectivity contract and the policy pack's rules, each pinned by the test files that import it and those of
the plans of its own package that import it.

    venv/bin/python scripts/mutation.py                 # every module of the decision layer
    venv/bin/python scripts/mutation.py sizing.py       # the modules whose path ends so
    venv/bin/python scripts/mutation.py --list          # the modules and their tests, without running

Not part of `make test` (an hour or more for all of it, not seconds); `make mutation` runs it. Run it before a change
to one of these modules lands.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python scripts/mutation.py`: its sibling modules by package name
    sys.path.insert(0, str(REPO))

from scripts.mutants import Mutant, apply, collect  # noqa: E402
from scripts.mutation_runs import Baseline, CannotRun, Worker, line_tests, prepare_copy, run_pytest  # noqa: E402
from scripts.mutation_targets import WORKLOAD_NETWORK_TESTS, targets  # noqa: E402
from tpu_stacks.registry import Workload, workloads  # noqa: E402

EQUIVALENT_FILE = REPO / "scripts" / "mutation_equivalent.txt"


def workload_modules(workload: Workload) -> dict[str, list[str]]:
    """A registered workload's decisions: its plan (pinned by `tests/<folder>/test_plan.py`, among the
    tests that import it) and its connectivity contract."""
    folder = workload.plan.module.split(".")[-2]
    return {
        _source(workload.plan.module): [f"tests/{folder}/test_plan.py"],
        _source(workload.network.module): WORKLOAD_NETWORK_TESTS,
    }


def _source(module: str) -> str:
    return f"components/{module.replace('.', '/')}.py"


MODULES: dict[str, list[str]]
"""module -> the test files that pin it, found (scripts/mutation_targets.py): the decision layer the purity
walk finds, each workload's connectivity contract and the policy pack's rules. Missing files are skipped;
the runner picks, per line, the tests among these that run it. Found on first use (`__getattr__`), not at
import: the walk reads every module and test file, and importing this module (as its tests do, in every
pytest worker's collection) should not pay for it."""


@functools.cache
def _modules() -> dict[str, list[str]]:
    return targets(networks=[w.network.module for w in workloads()])


def __getattr__(name: str) -> object:
    if name == "MODULES":
        return _modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


IGNORED = shutil.ignore_patterns("venv", ".git", "__pycache__", ".pytest_cache", "manifests", "plan-*.json")

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


def _select(mutant: Mutant, baseline: Baseline, tests: list[str]) -> list[str]:
    """The tests that ran the mutant's lines in the baseline, quickest first (every test file when a line
    ran at import)."""
    lines = range(mutant.start[0], mutant.end[0] + 1)
    if any(line in baseline.import_lines for line in lines):
        return list(tests)  # runs at import: every test sees it
    ids: set[str] = set()
    for line in lines:
        ids |= baseline.by_line.get(line, set())
    return baseline.quickest_first(ids)


def run_module(
    root: Path,
    module: str,
    tests: list[str],
    workers: int,
    equivalents: dict[tuple[str, str], str],
    fresh: bool = False,
) -> ModuleResult:
    tests = [t for t in tests if (root / t).exists()]
    if not tests:  # `pytest` given no file runs the whole suite: an hour of the shared cores, then a failed baseline
        raise CannotRun(f"{module}: none of its test files exists under {root}: nothing to run it against")
    source = (root / module).read_text()
    mutants = collect(source)
    result = ModuleResult(module)
    copies: list[Path] = []
    warm: dict[Path, Worker] = {}
    try:
        for _ in range(max(1, workers)):
            copy = Path(tempfile.mkdtemp(prefix="mutation-")) / "repo"
            shutil.copytree(root, copy, ignore=IGNORED)
            prepare_copy(copy)
            copies.append(copy)
        baseline = line_tests(copies[0], module, tests)
        timeout = max(20.0, 5 * baseline.seconds)
        todo: list[tuple[Mutant, list[str]]] = []
        for mutant in mutants:
            reason = equivalents.get((module, mutant.key))
            if reason is not None:
                result.equivalent.append((mutant, reason))
                continue
            todo.append((mutant, _select(mutant, baseline, tests)))
        if not fresh:
            warm = {copy: Worker(copy, baseline.warm) for copy in copies}
            for worker in warm.values():
                if worker.run(tests, max(timeout, 120.0), write_bytecode=True) not in (0, 5):
                    raise CannotRun(f"{module}: the tests fail in a forked worker before any mutation; try --fresh")

        def pytest_rc(copy: Path, args: list[str]) -> int:
            return run_pytest(copy, args, timeout)[0] if fresh else warm[copy].run(args, timeout)

        free = list(copies)

        def one(item: tuple[Mutant, list[str]]) -> tuple[Mutant, bool]:
            mutant, selected = item
            copy = free.pop()
            try:
                (copy / module).write_text(apply(source, mutant))
                rc = pytest_rc(copy, selected) if selected else 0
                if rc in (0, 5) and selected != tests:
                    # The baseline's line map misses what a test reaches through a value computed once and
                    # cached (a cached_property, a table built at first use): a survivor runs every other
                    # test too (those it ran have just passed against this mutant).
                    rc = pytest_rc(copy, [*tests, *(f"--deselect={test}" for test in selected)])
            finally:
                (copy / module).write_text(source)
                free.append(copy)
            return mutant, rc not in (0, 5)

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(copies))
        try:
            for done, (mutant, killed) in enumerate(pool.map(one, todo), 1):
                (result.killed if killed else result.survived).append(mutant)
                if done % 50 == 0:
                    print(f"  {module}: {done}/{len(todo)} mutants run", file=sys.stderr, flush=True)
        except BaseException:
            # Stopped (SIGTERM, Ctrl-C): the mutants not started are dropped and the runs under way end with their
            # workers, so the copies go now; `with ThreadPoolExecutor` waited for every queued mutant to run first.
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in warm.values():
                worker.stop()
            raise
        finally:
            pool.shutdown(wait=True)
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


def stop_on_sigterm() -> None:
    """SIGTERM stops a run as Ctrl-C does: SystemExit(143) in the main thread, which drops the queued mutants, ends
    the runs under way and removes the copies (run_module)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="run only the modules whose path ends with one of these")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--fresh", action="store_true", help="a new interpreter per run instead of forks of a warm one (slower)"
    )
    parser.add_argument("--root", type=Path, default=REPO, help="the repository to test (default: this one)")
    parser.add_argument("--list", action="store_true", help="print the modules and the tests that pin each, and stop")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    chosen = {m: t for m, t in _modules().items() if not args.modules or any(m.endswith(s) for s in args.modules)}
    if not chosen:
        parser.error(f"no module matches {args.modules}; modules: {', '.join(_modules())}")
    if args.list:
        for module, tests in chosen.items():
            print(f"{module}: {' '.join(tests)}")
        return 0
    equivalents = load_equivalents()
    results = []
    unmeasured: dict[str, str] = {}
    for module, tests in chosen.items():
        started = time.monotonic()
        try:
            result = run_module(args.root.resolve(), module, tests, args.workers, equivalents, args.fresh)
        except CannotRun as why:  # said, and the other modules still measured
            unmeasured[module] = str(why)
            print(f"{module}: not measured: {why}", file=sys.stderr, flush=True)
            continue
        print(f"{result.line()}  [{time.monotonic() - started:.0f} s]", file=sys.stderr, flush=True)
        for mutant in result.survived:  # as they come, so a long run shows its survivors early
            print(f"  survivor, line {mutant.line}: {mutant.key}", file=sys.stderr, flush=True)
        results.append(result)
    print()
    report(results)
    for module, why in unmeasured.items():
        print(f"{module}: not measured: {why.splitlines()[0]}")
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
                }
                | {module: {"error": why} for module, why in unmeasured.items()},
                indent=2,
            )
        )
    return 1 if unmeasured else 0


if __name__ == "__main__":
    sys.exit(main())
