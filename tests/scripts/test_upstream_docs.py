"""docs/upstream.md is the ledger's data file, written by scripts/upstream_docs.py, never typed: stale, it fails here
(`make upstream-docs`). The page links each row to the pinned source where a URL can be formed."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import upstream_docs
from tpu_stacks.catalog.upstream import ledger, parse

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_what_the_script_writes():
    assert upstream_docs.DOC.read_text(encoding="utf-8") == upstream_docs.render(), "run `make upstream-docs`"
    assert upstream_docs.main(["--check"]) == 0


def test_a_stale_page_fails_the_check(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "upstream.md"
    stale.write_text(upstream_docs.render().replace("ray.serve.http-port", "ray.serve.port", 1))
    monkeypatch.setattr(upstream_docs, "DOC", stale)
    assert upstream_docs.main(["--check"]) == 1
    assert "make upstream-docs" in capsys.readouterr().err


def test_every_pin_has_a_section_with_its_version_and_where_the_pin_lives():
    page = upstream_docs.render()
    for pin in ledger().pins.values():
        section = page.split(f"\n## {pin.name}\n", 1)[1].split("\n## ", 1)[0]
        if pin.kind != "documented":
            file, holder = pin.pin_file(ROOT)
            pinned = next(line for line in section.splitlines() if line.startswith("Pinned: "))
            assert pin.pinned in pinned and f"by `{holder}` in [{file}](../{file})" in pinned


def test_rows_link_to_github_at_the_tag_or_to_the_wheels_pypi_page():
    page = upstream_docs.render()
    assert (
        "[`ray-operator/apis/ray/v1/rayservice_types.go:212`](https://github.com/ray-project/kuberay/blob/v1.7.0/"
        "ray-operator/apis/ray/v1/rayservice_types.go#L212)" in page
    )
    assert "[`ray/serve/_private/constants.py:52`](https://pypi.org/project/ray/2.60.0/)" in page
    assert "[serving_pods.py](../policies/tpu_policies/serving_pods.py)" in page


def test_a_documented_row_shows_its_url_quote_and_check():
    book = parse(
        """
[pins.gke]
kind = "documented"
title = "GKE"
repository = "cloud.google.com"

[[row]]
id = "gke.health-port"
pin = "gke"
claim = "GKE health-checks the picker on 9003."
relied_on_by = ["README.md"]
read = 2026-11-29
url = "https://cloud.google.com/example"
quote = "checks | port 9003"
settled_by = "kubectl describe healthcheckpolicy"
"""
    )
    page = upstream_docs.render(book)
    assert (
        "| `gke.health-port` | GKE health-checks the picker on 9003. | <https://cloud.google.com/example> | "
        "checks \\| port 9003 | kubectl describe healthcheckpolicy | 2026-11-29 |" in page
    )


@pytest.mark.parametrize(
    "text, cell",
    [
        ("a | b", "`a \\| b`"),
        ("x = `y`", "`` x = `y` ``"),
        ("`", "`` ` ``"),
    ],
)
def test_code_cells_hold_pipes_and_backticks(text, cell):
    assert upstream_docs.code(text) == cell
