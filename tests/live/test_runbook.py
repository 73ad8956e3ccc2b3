"""docs/verify-on-a-cluster.md is a page a user follows: at most 1,500 words, its table of checks generated from
the registry and the ledger, and its commands the real ones."""

from __future__ import annotations

from tests.live.support import ROOT
from tpu_stacks_live.verify.checks import registry
from tpu_stacks_live.verify.runbook import rewrite

PAGE = ROOT / "docs/verify-on-a-cluster.md"
TEXT = PAGE.read_text()


def test_the_runbook_is_at_most_1500_words():
    assert len(TEXT.split()) <= 1500, len(TEXT.split())


def test_the_table_of_checks_is_current():
    assert rewrite(TEXT) == TEXT, "run `venv/bin/python -m tpu_stacks_live.verify.runbook docs/verify-on-a-cluster.md`"


def test_the_runbook_names_every_check():
    assert all(f"| `{name}` |" in TEXT for name in registry())


def test_the_fixture_commands_name_files_that_exist():
    for line in TEXT.splitlines():
        if "--fixtures " in line:
            assert (ROOT / line.split("--fixtures ")[1].split()[0]).is_file(), line
