"""docs/ci.md's service-account roles follow the plans: every resource type a shipped stack's plan declares has
a row in the up table (Kubernetes objects under `kubernetes:*`), every data-source read of a plan a row in the
preview table; the README links the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.shipped import STACKS, shipped

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "ci.md").read_text()
OURS = ("pulumi:", "tpu-stacks:")  # the engine's own types and our components: no cloud call of their own


def table(name: str) -> set[str]:
    """The first-column tokens of the table between `<!-- name -->` and `<!-- /name -->`."""
    block = DOC.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]
    return {m.group(1) for line in block.splitlines() if (m := re.match(r"^\| `([^`]+)`", line))}


def uncovered(types: set[str], rows: set[str]) -> list[str]:
    """The types no row names (a `kubernetes:*` row covers every Kubernetes type)."""
    wild = {row[:-1] for row in rows if row.endswith("*")}
    return sorted(t for t in types if t not in rows and not any(t.startswith(w) for w in wild))


@pytest.fixture(scope="module")
def planned() -> tuple[set[str], set[str]]:
    types = {r.type for stack in STACKS for r in shipped(stack).resources if not r.type.startswith(OURS)}
    reads = {i.token for stack in STACKS for i in shipped(stack).invokes}
    return types, reads


def test_every_planned_resource_type_has_its_role(planned: tuple[set[str], set[str]]):
    types, _ = planned
    assert {t.split(":", 1)[0] for t in types} == {"gcp", "kubernetes"}
    assert uncovered(types, table("ci-roles")) == []


def test_every_planned_read_has_its_permission(planned: tuple[set[str], set[str]]):
    _, reads = planned
    assert reads and uncovered(reads, table("ci-reads")) == []


def test_the_check_names_a_type_no_row_covers():
    rows = table("ci-roles")
    assert "kubernetes:*" in rows and "gcp:container/nodePool:NodePool" in rows
    assert uncovered({"gcp:sql/databaseInstance:DatabaseInstance", "kubernetes:apps/v1:Deployment"}, rows) == [
        "gcp:sql/databaseInstance:DatabaseInstance"
    ]


def test_every_role_row_names_a_role():
    block = DOC.split("<!-- ci-roles -->", 1)[1].split("<!-- /ci-roles -->", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert len(rows) == len(table("ci-roles"))
    for line in rows:
        assert re.search(r"`roles/[a-zA-Z.]+`", line), line


def test_the_readme_links_the_page_and_make_e2e():
    readme = (ROOT / "README.md").read_text()
    assert "(docs/ci.md)" in readme and "make e2e STACK=" in readme
