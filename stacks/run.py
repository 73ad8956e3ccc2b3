"""Build the scenario named by `tpu-stacks:scenario`."""

from __future__ import annotations

from stacks.config import NAMESPACE, load
from stacks.scenarios import SCENARIOS, SECTIONS
from tpu_stacks.errors import UserError


def run() -> None:
    try:
        stack, secrets = load(SECTIONS)
        SCENARIOS[stack.scenario].build(stack, secrets)
    except UserError as error:  # from the loader or a component, keyed by its config spelling
        raise error.in_namespace(NAMESPACE) from None
