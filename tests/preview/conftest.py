"""Shared captures of the fixture programs: each program runs once per mode per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.schema import VENDORED_CRDS

FIXTURES = Path(__file__).parent / "fixtures"
RAW = FIXTURES / "raw"
ERRORS = FIXTURES / "errors"
PACK = FIXTURES / "policy-pack"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """Converted CRDs are cached on disk; tests use their own cache, never ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.delenv("TPU_STACKS_CRDS", raising=False)
        yield


@pytest.fixture(scope="session")
def crds() -> Path:
    """The CRD schemas the preview package ships (nothing beside the checkout needed)."""
    return VENDORED_CRDS


@pytest.fixture(scope="session")
def raw_preview() -> Capture:
    capture = run_program(RAW, "dev", preview=True)
    assert capture.error is None, capture.error
    return capture


@pytest.fixture(scope="session")
def raw_up() -> Capture:
    capture = run_program(RAW, "dev", preview=False)
    assert capture.error is None, capture.error
    return capture


@pytest.fixture(scope="session")
def typo_up() -> Capture:
    capture = run_program(RAW, "typo", preview=False)
    assert capture.error is None, capture.error
    return capture
