"""Build the scenario named by `tpu-stacks:scenario`."""

from __future__ import annotations

from stacks.config import load


def run() -> None:
    stack, secrets = load()
    stack.scenario.load().build(stack, secrets)
