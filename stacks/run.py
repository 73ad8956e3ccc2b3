"""Pick the scenario named by `tpu-stacks:scenario` and build it."""

from __future__ import annotations

from stacks import cluster_only, vllm_stack
from stacks.config import load

BUILDERS = {"cluster": cluster_only.build, "vllm": vllm_stack.build}


def run() -> None:
    config, secrets = load()
    BUILDERS[config.scenario](config, secrets)
