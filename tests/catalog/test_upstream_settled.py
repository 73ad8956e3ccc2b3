"""Every documented claim of the upstream ledger names the cluster check that settles it, and that check is written
down in docs/verify-on-a-cluster.md with its command; every row names files that exist."""

from pathlib import Path

import pytest

from tpu_stacks.catalog.upstream import ledger

ROOT = Path(__file__).resolve().parents[2]
VERIFY = (ROOT / "docs/verify-on-a-cluster.md").read_text()


@pytest.mark.parametrize("row", [r for r in ledger().rows if r.settled_by], ids=lambda r: r.id)
def test_each_documented_claim_has_its_check_on_the_verify_page(row):
    assert row.settled_by.startswith("verify: ")
    assert f"`{row.settled_by}`" in VERIFY, row.settled_by


@pytest.mark.parametrize("row", ledger().rows, ids=lambda r: r.id)
def test_each_row_names_files_of_this_repository(row):
    assert all((ROOT / path).is_file() for path in row.relied_on_by), row.relied_on_by
