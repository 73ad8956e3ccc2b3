"""The live commands' tests read the shipped stacks' plans from tests/shipped.py's cache (`load_plan`)."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import pytest

from tests.shipped import shared_run_program
from tpu_stacks_live.verify import plan


@pytest.fixture(autouse=True, scope="session")
def _shared_plans() -> Iterator[None]:
    """`load_plan` of a shipped stack (verify, bench) serves the capture every other test reads: the same
    `run_program(ROOT, stack, preview=False)` with the same config, planned once per worker."""
    with mock.patch.object(plan, "run_program", shared_run_program(plan.run_program)):
        yield
