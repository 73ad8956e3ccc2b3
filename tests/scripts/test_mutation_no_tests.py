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
        with pytest.raises(SystemExit, match="none of its test files exists"):
            mutation.run_module(mutation.REPO, module, tests, 1, {})
    assert copied == []
