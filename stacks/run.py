"""Pick the scenario named by `tpu-stacks:scenario` and build it."""

from __future__ import annotations

from stacks import cluster_only
from stacks.config import load


def run() -> None:
    config = load()
    builders = {"cluster": cluster_only.build}
    builders[config.scenario](config)
