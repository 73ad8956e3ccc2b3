"""Shared fixtures of the stack tests."""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the program, so each case can write its own Pulumi.<stack>.yaml."""
    directory = tmp_path_factory.mktemp("project")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "stacks", directory / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    return directory
