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
