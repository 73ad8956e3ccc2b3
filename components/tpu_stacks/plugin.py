"""Find every public component of the package, for the plugin entry point and its tests.

A public component is a ComponentResource whose module declares `TYPE = "tpu-stacks:index:<Class>"`.
Adding a component module is enough to publish it; nothing is listed by hand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pulumi

import tpu_stacks

PACKAGE = "tpu-stacks"
SKIPPED = ("tpu_stacks.cli", "tpu_stacks.offline")


def public_components() -> list[type[pulumi.ComponentResource]]:
    found: dict[str, type[pulumi.ComponentResource]] = {}
    for info in pkgutil.walk_packages(tpu_stacks.__path__, "tpu_stacks."):
        if info.name.startswith(SKIPPED):
            continue
        module = importlib.import_module(info.name)
        token = getattr(module, "TYPE", "")
        for _, value in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(value, pulumi.ComponentResource)
                and value.__module__ == info.name
                and token == f"{PACKAGE}:index:{value.__name__}"
            ):
                found[value.__name__] = value
    return [found[name] for name in sorted(found)]
