"""Build the scenario named by `tpu-stacks:scenario`."""

from __future__ import annotations

from stacks.config import NAMESPACE, load
from tpu_stacks.errors import UserError


def run() -> None:
    stack, secrets = load()
    try:
        stack.scenario.load().build(stack, secrets)
    except UserError as error:  # raised by a component, keyed by its config section
        raise error.in_namespace(NAMESPACE) from None
