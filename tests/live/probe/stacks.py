"""Shipped stacks' rendered objects (the planner's up-mode objects, as `tpu-stacks plan --manifests` writes them)."""

from __future__ import annotations

import copy
import json

from tests.shipped import shipped
from tpu_stacks_preview.manifests import render_manifests


def objects(stack: str) -> list[dict]:
    """A copy: tests may edit what they get."""
    return copy.deepcopy([m.object for m in render_manifests(shipped(stack))])


def policy(objs: list[dict], namespace: str, name: str) -> dict:
    return next(
        o
        for o in objs
        if o["kind"] == "NetworkPolicy" and o["metadata"]["namespace"] == namespace and o["metadata"]["name"] == name
    )


def flows(obj: dict) -> list[dict]:
    return json.loads(obj["metadata"]["annotations"]["tpu-stacks.dev/flows"])


def set_flows(obj: dict, new: list[dict]) -> None:
    obj["metadata"]["annotations"]["tpu-stacks.dev/flows"] = json.dumps(new)
