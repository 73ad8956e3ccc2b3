"""`stacks/shipped.py` is the one list of shipped stacks: the README's table names exactly those, each has its
stack file, and a stack file a user adds is planned like any other but joins no table."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from stacks.shipped import SHIPPED, stack_files
from tests.shipped import STACKS

ROOT = Path(__file__).resolve().parents[2]


def _readme_stacks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    table = text.split("## Stacks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return sorted(name for row in rows for name in re.findall(r"`([a-z0-9-]+)`", row.split("|")[1]))


def test_the_readme_table_lists_the_shipped_stacks():
    assert _readme_stacks() == sorted(SHIPPED)


def test_every_shipped_stack_has_its_file():
    assert set(SHIPPED) <= set(stack_files(ROOT))
    assert list(SHIPPED) == sorted(SHIPPED)


def test_the_suite_plans_every_stack_file_and_the_tables_only_the_shipped(tmp_path):
    """A user's `Pulumi.mine.yaml` (a copy of `dev` serving another model) is a stack file: the planning tests take
    it (tests/shipped.STACKS), the tables do not (SHIPPED)."""
    assert tuple(STACKS) == stack_files(ROOT)
    shutil.copy(ROOT / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev.yaml")
    mine = (ROOT / "Pulumi.dev.yaml").read_text().replace("Qwen/Qwen2.5-1.5B-Instruct", "google/gemma-2-9b-it")
    (tmp_path / "Pulumi.mine.yaml").write_text(mine)
    assert stack_files(tmp_path) == ("dev", "mine")
    assert "mine" not in SHIPPED
