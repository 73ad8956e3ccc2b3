"""The docs' links lead somewhere: every relative link names a file that exists and, with `#anchor`, a heading
(or an `<a id>`) of that file; every page of docs/ is named by the README and reached from it by links; a link
to Google's documentation opens the English page.

Anchors are GitHub's: a heading's text lowercased, its punctuation dropped, spaces as hyphens, a repeated
heading numbered `-1`, `-2` (the rule GitHub's renderer applies; https://github.com/gjtorikian/html-pipeline,
`TableOfContentsFilter`, is where github.com took it from).
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
DOCS = [README, *PAGES]

_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.S | re.M)
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
_EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def prose(path: Path) -> str:
    """The page without its fenced code blocks (a `[x](y)` in a code sample is not a link)."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped, lowercased, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(prose(path)):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found | set(_EXPLICIT.findall(path.read_text(encoding="utf-8")))


def links(path: Path) -> list[str]:
    return _LINK.findall(prose(path))


def relative_links(path: Path) -> list[tuple[str, Path, str]]:
    """(as written, the file it names, its anchor) of each link that stays in the repository."""
    out = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        out.append((target, (path.parent / file).resolve() if file else path, anchor))
    return out


def test_the_anchor_rule_is_githubs():
    assert slug("Multi-host: serving a model no single host holds") == "multi-host-serving-a-model-no-single-host-holds"
    assert slug("Ray: who may call the Job API") == "ray-who-may-call-the-job-api"
    assert slug("Settings (`monitoring:` in the workload's section)") == "settings-monitoring-in-the-workloads-section"
    assert slug("The `vllm-405b` stack") == "the-vllm-405b-stack"


def test_a_wrong_anchor_is_found(tmp_path: Path):
    (tmp_path / "a.md").write_text("# A\n\n## Two words\n\n[ok](b.md#b-one) [bad](b.md#gone) [here](#two-words)\n")
    (tmp_path / "b.md").write_text('# B one\n\n<a id="kept"></a>\n```\n# not a heading\n```\n')
    found = [(t, f.name, a) for t, f, a in relative_links(tmp_path / "a.md")]
    assert found == [
        ("b.md#b-one", "b.md", "b-one"),
        ("b.md#gone", "b.md", "gone"),
        ("#two-words", "a.md", "two-words"),
    ]
    assert anchors(tmp_path / "b.md") == {"b-one", "kept"}
    assert "two-words" in anchors(tmp_path / "a.md")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_anchor_resolves(path: Path):
    broken = []
    for target, file, anchor in relative_links(path):
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: {file.name} has no heading or <a id> #{anchor}")
    assert not broken, broken


def test_every_page_of_docs_is_named_by_the_readme():
    readme = README.read_text(encoding="utf-8")
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert [p.name for p in pages if f"docs/{p.name}" not in readme] == []


def referred(path: Path) -> set[Path]:
    """The pages a page leads to: its relative links, and the paths it names (`docs/testing.md`)."""
    named = {
        (ROOT / name).resolve() for name in re.findall(r"\bdocs/[\w./-]+?\.md\b", path.read_text(encoding="utf-8"))
    }
    return {file for _, file, _ in relative_links(path) if file.suffix == ".md"} | named


def test_every_page_is_reached_from_the_readme():
    """docs/diagrams/*.md too: each one is reached through the README's link to one of them, or a page's."""
    reached, queue = {README.resolve()}, deque([README])
    while queue:
        for file in referred(queue.popleft()) - reached:
            if file.exists():
                reached.add(file)
                queue.append(file)
    assert [p.relative_to(ROOT).as_posix() for p in PAGES if p.resolve() not in reached] == []


# docs/sources.md is generated from the sources catalogue (components/tpu_stacks/sources.py), which cites the
# edition of a page that was read and says which ("(German edition)"): a citation, not a page to read.
CITATIONS = {ROOT / "docs" / "sources.md"}


def non_english_google_links(text: str) -> list[str]:
    found = []
    for url in re.findall(r"https?://[^\s)>\]\"'`]+", text):
        parsed = urlparse(url)
        if parsed.hostname in ("cloud.google.com", "developers.google.com", "docs.cloud.google.com"):
            languages = parse_qs(parsed.query).get("hl", [])
            if any(not language.lower().startswith("en") for language in languages):
                found.append(url)
    return found


def test_the_language_check_finds_what_it_should():
    text = "[t](https://cloud.google.com/x/y?hl=id) <https://cloud.google.com/z?hl=en> https://cloud.google.com/w"
    assert non_english_google_links(text) == ["https://cloud.google.com/x/y?hl=id"]
    assert non_english_google_links("https://documentation.s3ns.fr/a?hl=pt-br") == []  # not Google's site


@pytest.mark.parametrize("path", [p for p in DOCS if p not in CITATIONS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_google_docs_links_open_the_english_page(path: Path):
    assert non_english_google_links(path.read_text(encoding="utf-8")) == []
