"""scripts/mutation.py refuses a module with no test file to run, before it copies anything: `pytest` given no file
runs every test under `testpaths` (pytest.ini), so the traced baseline of such a run was the whole suite (a helper's
subset run that matched no file took 39 minutes of the shared cores that way, then stopped on a failed baseline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import mutation


def test_a_module_without_an_existing_test_file_is_refused_before_any_copy(tmp_path: Path, monkeypatch):
    copied: list[object] = []
    monkeypatch.setattr(mutation.shutil, "copytree", lambda *args, **kwargs: copied.append(args))
    module = "components/tpu_stacks/sizing.py"
    for tests in ([], ["tests/no_such_test_file.py"]):
        with pytest.raises(mutation.CannotRun, match="none of its test files exists"):
            mutation.run_module(mutation.REPO, module, tests, 1, {})
    assert copied == []


def test_a_module_that_cannot_run_is_said_and_the_others_still_measured(monkeypatch, capsys):
    """One module without tests used to stop a run of several (SystemExit): the rest went unmeasured, no JSON."""
    measured: list[str] = []

    def run_module(root, module, tests, *rest):
        if module.endswith("sizing.py"):
            raise mutation.CannotRun(f"{module}: none of its test files exists under {root}: nothing to run it against")
        measured.append(module)
        return mutation.ModuleResult(module)

    monkeypatch.setattr(mutation, "run_module", run_module)
    code = mutation.main(["sizing.py", "saxml/plan.py", "--workers", "1"])
    out = capsys.readouterr()
    assert measured == ["components/tpu_stacks/saxml/plan.py"]
    assert code == 1
    assert "components/tpu_stacks/sizing.py: not measured: components/tpu_stacks/sizing.py: none of its" in out.out


def test_a_failed_baseline_leaves_no_trace_folder(tmp_path: Path, monkeypatch):
    """The traced baseline's plugin folder was removed only after a passing run: each failed one left a
    `mutation-trace-*` folder in $TMPDIR."""
    from scripts import mutation_runs

    copy = tmp_path / "repo"
    (copy / "tests").mkdir(parents=True)
    (copy / "module.py").write_text("VALUE = 1\n")
    (copy / "tests" / "test_module.py").write_text("def test_fails():\n    assert False\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(mutation_runs.tempfile, "tempdir", str(scratch))
    with pytest.raises(mutation_runs.CannotRun, match="the tests fail before any mutation"):
        mutation_runs.line_tests(copy, "module.py", ["tests/test_module.py"])
    assert list(scratch.iterdir()) == []
