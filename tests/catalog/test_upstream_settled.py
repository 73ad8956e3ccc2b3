"""Every documented claim of the upstream ledger names the cluster check that settles it, that check is one
`tpu-stacks verify` has (one implementation, in tools/live), and the runbook (docs/verify-on-a-cluster.md) names
it in its generated table; every row names files that exist."""

from pathlib import Path

import pytest

from tpu_stacks.catalog.upstream import ledger
from tpu_stacks_live.verify.checks import registry

ROOT = Path(__file__).resolve().parents[2]
VERIFY = (ROOT / "docs/verify-on-a-cluster.md").read_text()


@pytest.mark.parametrize("row", [r for r in ledger().rows if r.settled_by], ids=lambda r: r.id)
def test_each_documented_claim_is_settled_by_a_verify_check(row):
    assert row.settled_by.startswith("verify: ")
    name = row.settled_by.removeprefix("verify: ")
    assert name in registry(), f"{row.id}: `tpu-stacks verify` has no check {name!r} (tpu_stacks_live/verify/checks/)"
    assert f"| `{name}` |" in VERIFY, f"{name} is not in the runbook's table: regenerate it"


@pytest.mark.parametrize("row", ledger().rows, ids=lambda r: r.id)
def test_each_row_names_files_of_this_repository(row):
    assert all((ROOT / path).is_file() for path in row.relied_on_by), row.relied_on_by
