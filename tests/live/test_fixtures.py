"""The recorded answers are labelled synthetic, shaped as the APIs answer, and what tests/live/synthesise.py
writes from today's plans (a plan change that renames what a check reads makes them stale: run it again)."""

from __future__ import annotations

import json

import pytest

from tests.live import synthesise
from tests.live.support import FIXTURES, STACKS, planned
from tests.live.synthesise_fail import failing

FILES = sorted(FIXTURES.glob("*.json"))


def test_each_stack_has_a_passing_and_a_failing_file():
    assert [f.name for f in FILES] == sorted(f"{s}-{v}.json" for s in STACKS for v in ("pass", "fail"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_file_says_it_is_synthetic(path):
    document = json.loads(path.read_text())
    assert document["_synthetic"].startswith("synthetic: ")


@pytest.mark.parametrize("path", [p for p in FILES if p.name.endswith("-pass.json")], ids=lambda p: p.name)
def test_discovery_answers_are_api_resource_lists(path):
    kubernetes = json.loads(path.read_text())["kubernetes"]
    lists = [
        body
        for key, body in kubernetes.items()
        if key in ("/api/v1",) or key.count("/") == 3 and key.startswith("/apis/")
    ]
    assert lists and all(body["kind"] == "APIResourceList" and body["resources"] for body in lists)
    for body in lists:
        assert all({"name", "kind", "namespaced", "verbs"} <= set(resource) for resource in body["resources"])


@pytest.mark.parametrize("stack", STACKS)
def test_fixtures_match_the_plans(stack):
    plan = planned(stack)
    base = synthesise.passing(plan)
    written = json.loads((FIXTURES / f"{stack}-pass.json").read_text())
    stale = "stale: run `venv/bin/python -m tests.live.synthesise`"
    assert written["kubernetes"] == json.loads(json.dumps(base.kubernetes)), stale
    assert written["compute"] == json.loads(json.dumps(base.compute)), stale
    assert json.loads((FIXTURES / f"{stack}-fail.json").read_text())["kubernetes"] == json.loads(
        json.dumps(failing(plan, base)["kubernetes"])
    ), stale
