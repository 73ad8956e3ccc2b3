"""network-config-analyzer for the tests of this folder, installed once per requirements file."""

from pathlib import Path

import pytest

from tests.network.nca_venv import ensure_nca

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def nca(request) -> Path:
    """The `nca` executable, in a venv under pytest's cache folder (.pytest_cache/d/nca-venv, git-ignored),
    or under .nca-venv/ of the checkout when the cache plugin is off."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("nca-venv") if cache is not None else ROOT / ".nca-venv"
    return ensure_nca(Path(folder))
