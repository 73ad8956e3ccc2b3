"""`make mutation`'s runner works: on a tiny module it kills the mutants the tests catch, reports
the one they miss, and leaves the module it mutated as it was (`scripts/mutation.py`)."""

from pathlib import Path

import pytest

from scripts import mutation

TINY = "def is_big(x):\n    return x > 100\n"
# Misses the boundary: `x >= 100` and `x > 99` pass these tests as well.
TINY_TEST = "from tiny import is_big\n\n\ndef test_is_big():\n    assert is_big(101)\n    assert not is_big(5)\n"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    (tmp_path / "tiny.py").write_text(TINY)
    (tmp_path / "test_tiny.py").write_text(TINY_TEST)
    return tmp_path


def test_the_operators_on_a_tiny_module():
    keys = sorted(m.key for m in mutation.collect(TINY))
    assert keys == [
        "is_big: '100' -> '101'",
        "is_big: '100' -> '99'",
        "is_big: 'return x > 100' -> 'return None'",
        "is_big: 'x > 100' -> 'x >= 100'",
    ]
    flipped = next(m for m in mutation.collect(TINY) if m.mutated == "x >= 100")
    assert mutation.apply(TINY, flipped) == "def is_big(x):\n    return x >= 100\n"


@pytest.mark.parametrize("fresh", [False, True], ids=["forked-from-a-warm-worker", "fresh-interpreter"])
def test_runner_kills_a_mutant_reports_a_survivor_and_lists_an_equivalent(tiny: Path, fresh: bool):
    equivalents = {("tiny.py", "is_big: '100' -> '99'"): "for the sake of the test"}
    result = mutation.run_module(tiny, "tiny.py", ["test_tiny.py"], workers=1, equivalents=equivalents, fresh=fresh)
    assert sorted(m.key for m in result.killed) == [
        "is_big: '100' -> '101'",
        "is_big: 'return x > 100' -> 'return None'",
    ]
    assert [m.key for m in result.survived] == ["is_big: 'x > 100' -> 'x >= 100'"]
    assert [(m.key, why) for m, why in result.equivalent] == [("is_big: '100' -> '99'", "for the sake of the test")]
    assert result.line() == "tiny.py: killed/total = 2/3 = 66.7% (1 equivalent, listed)"
    assert (tiny / "tiny.py").read_text() == TINY  # the copy was mutated, never the original


def test_every_listed_equivalent_has_a_reason_and_names_a_module_of_the_run():
    listed = mutation.load_equivalents()
    assert listed, "scripts/mutation_equivalent.txt is empty or missing"
    for (module, key), reason in listed.items():
        assert module in mutation.MODULES, module
        assert reason and key


def test_every_listed_equivalent_is_a_mutant_its_module_still_has():
    """A listed equivalent is a claim about one mutant of today's source: when the code it names moves (a rule
    lifted into a shared helper, a rounding into another module), the line matches nothing, and a later mutant
    with the same key would be excused by a reason written for other code."""
    stale = []
    for module, key in mutation.load_equivalents():
        keys = {m.key for m in mutation.collect((mutation.REPO / module).read_text())}
        if key not in keys:
            stale.append(f"{module} | {key}")
    assert not stale, "listed equivalents no mutant of the module has now:\n" + "\n".join(stale)


# --- the targets are found, not listed ---------------------------------------------------------------


def test_every_decision_module_is_a_mutation_target_with_tests():
    """The purity walk's decision layer (tests/test_pure_decisions.py) is mutated, module by module, and
    each module has test files to run: a new plan, spec or catalogue table is measured the day it lands."""
    from scripts.mutation_targets import source_of
    from tests.module_tree import PACKAGE
    from tests.test_pure_decisions import decision_modules

    root = PACKAGE.parents[1]
    for module in decision_modules():
        source = source_of(root, module, PACKAGE)
        assert source in mutation.MODULES, f"{module} is in the decision layer but not a mutation target"
        tests = mutation.MODULES[source]
        assert tests, f"{source}: no test file pins it"
        assert all((root / t).is_file() for t in tests), tests
    for name in ("vllm/plan.py", "vllm/gateway_plan.py", "vllm/multihost_plan.py", "slo/plan.py", "traffic/model.py"):
        assert f"components/tpu_stacks/{name}" in mutation.MODULES, name
    assert "components/tpu_stacks/vllm/network.py" in mutation.MODULES  # through the registry
    assert "policies/tpu_policies/fit.py" in mutation.MODULES


def _toy_targets(root: Path, files: dict[str, str]) -> dict[str, list[str]]:
    """The finder's answer on a toy tree: `files` by path relative to `root`, the package `components/toy_stacks`."""
    from scripts import mutation_targets

    package = root / "components" / "toy_stacks"
    for path, text in {"components/toy_stacks/__init__.py": "", **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return mutation_targets.targets(root=root, package_dir=package)


def test_the_tests_of_a_module_are_those_that_import_it(tmp_path: Path):
    """On a toy tree: a plan's tests are the files importing it (any import form, inside a function too);
    a table no test imports is pinned by its importer's tests; tests/live is never used."""
    found = _toy_targets(
        tmp_path,
        {
            "components/toy_stacks/toy/__init__.py": "",
            "components/toy_stacks/toy/table.py": "ROWS = (1, 2)\n",
            "components/toy_stacks/toy/plan.py": "from toy_stacks.toy.table import ROWS\n",
            "components/toy_stacks/toy/component.py": "import pulumi\nfrom toy_stacks.toy import plan\n",
            "tests/toy/test_plan.py": "def test_x():\n    from toy_stacks.toy.plan import ROWS\n",
            "tests/test_other.py": "import toy_stacks.toy.plan as p\n",
            "tests/test_component.py": "from toy_stacks.toy import component\n",
            "tests/live/test_live.py": "from toy_stacks.toy import plan\n",
        },
    )
    assert found["components/toy_stacks/toy/plan.py"] == ["tests/test_other.py", "tests/toy/test_plan.py"]
    assert found["components/toy_stacks/toy/table.py"] == ["tests/test_other.py", "tests/toy/test_plan.py"]
    assert "components/toy_stacks/toy/component.py" not in found  # a builder, not a decision


def test_through_another_test_file_a_test_reaches_only_what_the_definitions_it_takes_use(tmp_path: Path):
    """A test file that imports another reaches what the names it takes need, not all the other file imports: before,
    tests/test_registry.py (which calls one test of tests/traffic/test_engine_traffic.py) was in traffic/model.py's
    set, whose functions it never calls (docs/testing.md, "Scores"). pytest collects a test function imported at
    module level again, in the importing file, and runs it: what it calls is reached. A helper module of tests/ is
    followed whole, as before."""
    found = _toy_targets(
        tmp_path,
        {
            "components/toy_stacks/limits.py": "TOP = 3\n",
            "components/toy_stacks/shapes.py": "SHAPES = ('2x4',)\n",
            "components/toy_stacks/table.py": "ROWS = (1, 2)\n",
            "tests/toy/test_rules.py": (
                "from toy_stacks.limits import TOP\nfrom toy_stacks.shapes import SHAPES\n\n\n"
                "def shapes_of():\n    return SHAPES\n\n\n"
                "def test_top():\n    assert TOP\n"
            ),
            "tests/toy/harness.py": "from toy_stacks import table\n",
            # a helper function taken from a test file: its body names shapes only
            "tests/test_takes_a_helper.py": (
                "from tests.toy.test_rules import shapes_of\n\n\ndef test_x():\n    assert shapes_of()\n"
            ),
            # a test of another file called through its module, and one collected again: both need limits only
            "tests/test_calls_a_test.py": (
                "def test_y():\n    from tests.toy import test_rules\n\n    test_rules.test_top()\n"
            ),
            "tests/test_collects_a_test_again.py": "from tests.toy.test_rules import test_top\n",
            "tests/test_uses_a_harness.py": "from tests.toy import harness\n",
            "tests/test_aliases_a_test_file.py": (
                "import tests.toy.test_rules as rules\n\n\ndef test_z():\n    assert rules.shapes_of()\n"
            ),
        },
    )
    assert found["components/toy_stacks/limits.py"] == [
        "tests/test_calls_a_test.py",
        "tests/test_collects_a_test_again.py",
        "tests/toy/test_rules.py",
    ]
    assert found["components/toy_stacks/shapes.py"] == [
        "tests/test_aliases_a_test_file.py",
        "tests/test_takes_a_helper.py",
        "tests/toy/test_rules.py",
    ]
    assert found["components/toy_stacks/table.py"] == ["tests/test_uses_a_harness.py"]


def test_a_module_a_plan_of_its_package_imports_is_pinned_by_the_plans_tests_too(tmp_path: Path):
    """cluster/decided.py's records are built and read by cluster/plan.py, whose tests check them without importing
    decided.py: a module's tests are the files importing it and those of its package's plans that import it (before,
    those only when no file imported the module: decided.py and slo/spec.py scored 0% on a file that imported them
    without exercising them). A plan of another package does not lend its tests (the catalogue's sets stay as they
    are)."""
    found = _toy_targets(
        tmp_path,
        {
            "components/toy_stacks/shared.py": "LIMIT = 4\n",
            "components/toy_stacks/toy/__init__.py": "",
            "components/toy_stacks/toy/decided.py": "from toy_stacks.shared import LIMIT\n",
            "components/toy_stacks/toy/plan.py": "from toy_stacks.toy.decided import LIMIT\n",
            "tests/toy/test_plan.py": "from toy_stacks.toy.plan import LIMIT\n",
            "tests/toy/test_decided.py": "from toy_stacks.toy.decided import LIMIT\n",
            "tests/test_shared.py": "from toy_stacks.shared import LIMIT\n",
        },
    )
    assert found["components/toy_stacks/toy/decided.py"] == ["tests/toy/test_decided.py", "tests/toy/test_plan.py"]
    assert found["components/toy_stacks/toy/plan.py"] == ["tests/toy/test_plan.py"]
    assert found["components/toy_stacks/shared.py"] == ["tests/test_shared.py"]


# --- a quick runner that still kills what it should ------------------------------------------------------


def test_a_precompiled_copy_imports_a_mutant_of_the_same_size_written_in_the_same_second(tmp_path: Path):
    """prepare_copy's .pyc files are checked against the source's hash: a mutant as long as the original,
    written right after it (same size, same mtime second), is what the next run imports. A timestamp .pyc
    (compileall's default) would load the unmutated code and the mutant would survive."""
    import os
    import subprocess
    import sys

    from scripts.mutation_runs import prepare_copy

    def value(mode: str) -> str:
        root = tmp_path / mode
        root.mkdir()
        (root / "tiny.py").write_text("LIMIT = 100\n")
        stamp = (root / "tiny.py").stat().st_mtime_ns
        if mode == "checked-hash":
            prepare_copy(root)
        else:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(root)], check=True)
        (root / "tiny.py").write_text("LIMIT = 101\n")
        os.utime(root / "tiny.py", ns=(stamp, stamp))  # the same second, as a quick mutant's write would be
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, "-c", "import tiny; print(tiny.LIMIT)"]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=True).stdout.strip()

    assert value("checked-hash") == "101"
    assert value("timestamp") == "100"  # what the hash check is for


def test_the_copy_lists_its_files_to_git_as_the_repository_does(tmp_path: Path):
    """Tests that list the repository's files run `git ls-files`; the copy has no .git of its own."""
    import subprocess

    from scripts.mutation_runs import prepare_copy

    (tmp_path / ".gitignore").write_text("__pycache__/\nscratch/\n")
    (tmp_path / "tiny.py").write_text("LIMIT = 100\n")
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "notes.py").write_text("x = 1\n")
    prepare_copy(tmp_path)
    listed = subprocess.run(["git", "ls-files"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert listed.split() == [".gitignore", "tiny.py"]  # the ignored folder and the .pyc files are not


def test_the_warm_modules_are_those_loaded_from_outside_the_project(tmp_path: Path):
    """The worker may import what the traced run loaded from site-packages and the standard library, never
    the project's code (in the repository or its copy), while a venv inside the repository is third party."""
    import sys

    from scripts.mutation_runs import REPO, third_party

    copy = tmp_path / "repo"
    venv = str(Path(sys.prefix).resolve() / "lib" / "x.py")
    loaded = {
        "json": ["/usr/lib/python3.11/json/__init__.py"],
        "sys": [],
        "pulumi_kubernetes.core.v1": [venv],
        "__main__": ["/usr/bin/whatever.py"],
        "tiny": [str(copy / "tiny.py")],
        "tpu_stacks_preview.engine": [str(REPO / "tools" / "preview" / "tpu_stacks_preview" / "engine.py")],
        "tools_ns": [str(REPO / "tools")],  # a namespace package: its folders
        "tests.shipped": ["/elsewhere/tests/shipped.py"],  # the project's by name wherever it was found
    }
    assert third_party(loaded, [copy, REPO]) == ["json", "sys", "pulumi_kubernetes.core.v1"]


def test_a_worker_refuses_to_warm_a_project_module(tiny: Path):
    """The forked runs must import the copy's (mutated) files: a worker asked to import one stops."""
    from scripts.mutation_runs import Worker

    worker = Worker(tiny, ["json", "tiny"])
    try:
        with pytest.raises(SystemExit, match="stopped"):
            worker.run(["test_tiny.py"], 60)
    finally:
        worker.close()


def test_a_worker_warms_a_lazy_sdk_package_without_replacing_its_exports(tmp_path: Path):
    """pulumi_kubernetes.apiextensions is a lazy module whose __init__ exports the class CustomResource
    from the submodule of that name. Warmed in the order the traced run listed them (the submodule after
    its still-lazy package), the class became the module and every gateway test failed in the worker."""
    from scripts.mutation_runs import Worker

    (tmp_path / "test_k8s.py").write_text(
        "import pulumi_kubernetes as k8s\n\n\n"
        "def test_the_class_is_exported():\n"
        "    assert isinstance(k8s.apiextensions.CustomResource, type)\n"
    )
    warm = ["pulumi_kubernetes", "pulumi_kubernetes.apiextensions.CustomResource", "pulumi_kubernetes.apiextensions"]
    worker = Worker(tmp_path, warm)
    try:
        assert worker.run(["test_k8s.py"], 120) == 0
    finally:
        worker.close()


def test_a_survivor_runs_the_other_tests(tmp_path: Path):
    """A mutant the line-selected tests miss runs the module's other tests (a value cached at first use reaches
    tests that never run its line)."""
    (tmp_path / "cached.py").write_text(
        "import functools\n\n\n@functools.cache\ndef table():\n    return {'a': 1 + 1}\n\n\ndef a():\n    return table()['a']\n"
    )
    (tmp_path / "test_cached.py").write_text(
        "import cached\n\n\ndef test_first_use():\n    assert cached.table()\n\n\n"
        "def test_value():\n    assert cached.a() == 2\n"
    )
    result = mutation.run_module(tmp_path, "cached.py", ["test_cached.py"], workers=1, equivalents={})
    # `1 + 1` -> `1 - 1`, `1 * 1`... run by test_first_use only (the trace sees the line once, cached after):
    # test_value kills them in the second run.
    assert not result.survived, [m.key for m in result.survived]
    assert result.total >= 4


def test_the_selected_tests_run_quickest_first():
    """Runs stop at the first failure (`-x`): the quick tests go first, ties by id."""
    from scripts.mutation_runs import Baseline

    baseline = Baseline({}, set(), 0.0, [], {"t.py::slow": 9.0, "t.py::quick": 0.1, "t.py::b": 1.0, "t.py::a": 1.0})
    assert baseline.quickest_first({"t.py::slow", "t.py::quick", "t.py::b", "t.py::a"}) == [
        "t.py::quick",
        "t.py::a",
        "t.py::b",
        "t.py::slow",
    ]


SLOW = "LIMIT = 100\n"
# A mutated LIMIT makes the test hang (as a mutant caught in a loop would): it says where it is, then sleeps.
SLOW_TEST = (
    "import os\nimport time\n\nimport slow\n\n\n"
    "def test_limit():\n"
    "    if slow.LIMIT != 100:\n"
    "        with open(os.environ['MUTATION_TEST_MARKER'], 'w') as marker:\n"
    "            marker.write(str(os.getpid()))\n"
    "        time.sleep(300)\n"
    "    assert slow.LIMIT == 100\n"
)


def test_sigterm_stops_a_run_now_ending_the_test_under_way_and_removing_the_copies(tmp_path: Path):
    """`kill <pid>` stops `make mutation` as Ctrl-C does. Before, the handler's SystemExit waited in the
    thread pool's exit for every queued mutant (a hung one up to its timeout): only kill -9 stopped it, and
    that left the copies behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root, scratch, marker = tmp_path / "root", tmp_path / "tmp", tmp_path / "marker"
    root.mkdir()
    scratch.mkdir()
    (root / "slow.py").write_text(SLOW)
    (root / "test_slow.py").write_text(SLOW_TEST)
    driver = (
        "import sys\nfrom pathlib import Path\nfrom scripts import mutation\n"
        "mutation.stop_on_sigterm()\n"
        f"mutation.run_module(Path({str(root)!r}), 'slow.py', ['test_slow.py'], 1, {{}})\n"
    )
    env = {**os.environ, "TMPDIR": str(scratch), "MUTATION_TEST_MARKER": str(marker)}
    run = subprocess.Popen([sys.executable, "-c", driver], cwd=mutation.REPO, env=env)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists() or not marker.read_text():
            assert run.poll() is None and time.monotonic() < deadline, "no mutant reached the test"
            time.sleep(0.1)
        hung = int(marker.read_text())
        run.send_signal(signal.SIGTERM)
        # well before the hung run's own timeout (20 s at least), which the old handler waited out
        assert run.wait(timeout=10) == 143
    finally:
        run.kill()
    with pytest.raises(ProcessLookupError):  # the hung test's fork was ended and reaped, not left running
        os.kill(hung, 0)
    assert [p.name for p in scratch.iterdir()] == []  # the copies are removed
