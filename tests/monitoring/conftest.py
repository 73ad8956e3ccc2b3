"""Every shipped stack planned once per session (up mode, mocks): the captures the monitoring tests read."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacks.shipped import SHIPPED
from tests.shipped import shipped
from tpu_stacks_preview.capture import Capture

ROOT = Path(__file__).resolve().parents[2]
STACKS = list(SHIPPED)


@pytest.fixture(scope="session")
def planned() -> dict[str, Capture]:
    captures = {}
    for stack in STACKS:
        capture = shipped(stack)
        assert capture.error is None, (stack, capture.error)
        captures[stack] = capture
    return captures
