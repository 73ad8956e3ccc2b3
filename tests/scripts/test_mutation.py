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


def test_the_tests_of_a_module_are_those_that_import_it(tmp_path: Path):
    """On a toy tree: a plan's tests are the files importing it (any import form, inside a function too);
    a table no test imports is pinned by its importer's tests; tests/live is never used."""
    from scripts import mutation_targets

    package = tmp_path / "components" / "toy_stacks"
    files = {
        package / "__init__.py": "",
        package / "toy" / "__init__.py": "",
        package / "toy" / "table.py": "ROWS = (1, 2)\n",
        package / "toy" / "plan.py": "from toy_stacks.toy.table import ROWS\n",
        package / "toy" / "component.py": "import pulumi\nfrom toy_stacks.toy import plan\n",
        tmp_path / "tests" / "toy" / "test_plan.py": "def test_x():\n    from toy_stacks.toy.plan import ROWS\n",
        tmp_path / "tests" / "test_other.py": "import toy_stacks.toy.plan as p\n",
        tmp_path / "tests" / "test_component.py": "from toy_stacks.toy import component\n",
        tmp_path / "tests" / "live" / "test_live.py": "from toy_stacks.toy import plan\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = mutation_targets.targets(root=tmp_path, package_dir=package)
    assert found["components/toy_stacks/toy/plan.py"] == ["tests/test_other.py", "tests/toy/test_plan.py"]
    assert found["components/toy_stacks/toy/table.py"] == ["tests/test_other.py", "tests/toy/test_plan.py"]
    assert "components/toy_stacks/toy/component.py" not in found  # a builder, not a decision
