"""docs/first-deploy.md states each stack's await budgets: every row must equal the plan's own."""

import re
from pathlib import Path

import pytest

from stacks.shipped import SHIPPED
from tests.shipped import shipped

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "first-deploy.md").read_text(encoding="utf-8")
STACKS = list(SHIPPED)
ROW = re.compile(r"^\| `([a-z0-9-]+)` \| (\d+m) / (\d+m) \|", re.M)


def sections() -> dict[str, str]:
    """Each stack's section (a heading may name several stacks: `## saxml and saxml-s3ns`)."""
    found: dict[str, str] = {}
    for heading, body in re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", DOC, flags=re.M | re.S):
        for stack in re.split(r",? and |, ", heading):
            found[stack.strip()] = body
    return found


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "cluster"])
def test_every_stack_has_a_section_whose_budgets_are_the_plans(stack):
    body = sections()[stack]
    rows = {name: {"create": create, "update": update} for name, create, update in ROW.findall(body)}
    assert rows, f"no budget rows for {stack}"
    capture = shipped(stack)
    assert capture.error is None, capture.error
    planned = {r.name: r.options.custom_timeouts for r in capture.resources if r.options.custom_timeouts}
    for name, budget in rows.items():
        assert planned.get(name) == budget, (stack, name, planned.get(name))
