"""The shipped stacks (`Pulumi.<stack>.yaml`), each run under mocks at most once per mode in a test process.

A run takes about a second, and a dozen test modules read the same ten stacks (schemas, policies,
security, connectivity, dashboards, diagrams, smoke tests, docs). Each used to keep its own cache, so a
stack was planned up to ten times a session; here one cache serves them all. Under pytest-xdist
(`make test` runs `-n auto`) each worker is a process of its own, so each worker plans a stack at most
once per mode, whichever tests it is handed.

A capture is shared, so a test reads it and never changes it (copy an object before editing it:
`copy.deepcopy`). A test about running a stack twice calls `run_program` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from stacks.shipped import SHIPPED, stack_files  # noqa: F401 (SHIPPED: re-exported for the tests)
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import StackConfig, load_stack_config
from tpu_stacks_preview.engine import run_program

ROOT = Path(__file__).resolve().parents[1]
STACKS = list(stack_files(ROOT))


def shipped(stack: str, *, preview: bool = False) -> Capture:
    """The capture of a shipped stack: `pulumi preview` semantics with `preview=True`, `up` without
    (missing secrets stand in as placeholders, as `run_program` does by default)."""
    return _run(stack, preview)


@cache
def _run(stack: str, preview: bool) -> Capture:  # positional: one cache key per (stack, mode)
    return run_program(ROOT, stack, preview=preview)


def shared_run_program(real: Callable[..., Capture]) -> Callable[..., Capture]:
    """`run_program` for code that plans a stack itself (`tpu-stacks verify`, `bench`: `load_plan`): a shipped
    stack file in up mode with the default config (placeholder secrets, what `shipped` plans) is served from the
    shared cache; any other project, mode or config runs `real`. The live commands' tests planned `dev` or
    `raytrain` again in each test (about a second of CPU each) to read the same capture."""

    def run(project_dir: Path, stack: str, *, preview: bool, config: StackConfig | None = None, **rest) -> Capture:
        if not preview and not rest and Path(project_dir).resolve() == ROOT and stack in STACKS:
            if config is None or config == load_stack_config(ROOT, stack, placeholder_secrets=True):
                return shipped(stack)
        return real(project_dir, stack, preview=preview, config=config, **rest)

    return run
