"""The repository stands alone: every source it cites can be opened by a reader who has only it.

Every tracked text file (code, docs, stack files, examples, tests, vendored CRDs: no exceptions) is
scanned for references into notes that are not part of the repository (paths into the folder of
shared notes beside a checkout, the section numbers and file names of those notes) and for citation keys that resolve nowhere.
What a key is, and where keys resolve, is tpu_stacks.sources (one definition); Markdown files may
also define a key for themselves with a reference-link line `[KEY]: address`.
tests/cli/test_sources_in_output.py holds the CLI's outputs to the same rules.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
from functools import cache
from pathlib import Path

import pytest

from tpu_stacks import sources

ROOT = Path(__file__).resolve().parents[1]

ELSEWHERE = re.compile(
    r"\bshared/|\.\./shared\b"  # the folder of notes beside the checkout
    r"|§\s?\d"  # a section number of those notes
    r"|\bcatalogue (?:section )?\d"  # a section of the TPU catalogue notes
    r"|\b(?:upstream-manifests|tpu-catalog|landscape|offline-verification)\.md\b"  # the notes by name
    r"|\bseeds/\d"  # the tutorials' copies those notes were written from
)
"""A reference to material outside the repository."""

_CODE_SPAN = re.compile(r"`[^`\n]*`")
_FENCE = re.compile(r"^(```|~~~)")
_DEFINITION = re.compile(r"^\s*\[([^\]]+)\]:\s+\S")


@cache
def prose(path: str, text: str) -> list[tuple[int, str]]:
    """(line, text) of what a reader reads as prose: Python comments and strings, any other file's
    lines outside Markdown fences, with inline code spans removed."""
    if path.endswith(".py"):
        found = []
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.STRING):
                for offset, line in enumerate(token.string.splitlines()):
                    found.append((token.start[0] + offset, _CODE_SPAN.sub("", line)))
        return found
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if path.endswith(".md") and _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            found.append((number, _CODE_SPAN.sub("", line)))
    return found


def problems(path: str, text: str) -> list[str]:
    """Each reference outside the repository and each unresolved key, as `path:line: what`."""
    defined = (
        {m.group(1) for line in text.splitlines() if (m := _DEFINITION.match(line))} if path.endswith(".md") else set()
    )
    found = [
        f"{path}:{n}: {m.group(0)!r} is outside the repository"
        for n, line in enumerate(text.splitlines(), 1)
        for m in ELSEWHERE.finditer(line)
    ]
    for number, line in prose(path, text):
        found += [
            f"{path}:{number}: [{key}] resolves nowhere (add it to tpu_stacks/sources.py)"
            for key in sources.keys_in(line)
            if not sources.resolves(key) and key not in defined
        ]
    return found


@cache
def tracked_text_files() -> dict[str, str]:
    names = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    files = {}
    for name in filter(None, (n.decode() for n in names)):
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the working tree
        try:
            files[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
    return files


def test_every_tracked_file_stands_alone():
    files = tracked_text_files()
    assert len(files) > 300 and "components/tpu_stacks/sources.py" in files
    found = [problem for name, text in sorted(files.items()) for problem in problems(name, text)]
    assert not found, "\n".join(found)


def test_every_listed_source_is_cited_somewhere():
    """No dead rows: a key nothing cites any more leaves the table."""
    listing = {"components/tpu_stacks/sources.py", "docs/sources.md"}
    used = {
        key
        for name, text in tracked_text_files().items()
        if name not in listing
        for _, line in prose(name, text)
        for key in sources.keys_in(line)
    }
    assert [key for key in [*sources.BY_KEY, *sources.LABELS] if key not in used] == []


def test_docs_sources_md_is_generated_from_the_table():
    assert (ROOT / "docs" / "sources.md").read_text() == sources.markdown(), (
        "docs/sources.md is stale: venv/bin/python -m tpu_stacks.sources > docs/sources.md"
    )


def test_every_source_is_a_public_address_and_every_key_is_a_key():
    assert len(sources.BY_KEY) == len(sources.SOURCES)
    for source in sources.SOURCES:
        assert source.url.startswith("https://"), source
        assert sources.keys_in(f"see [{source.key}].") == [source.key]
    for label in sources.LABELS:
        assert sources.keys_in(f"([{label}])") == [label]


# -- the checker itself, on text that breaks each rule and text that keeps it --------------------

OPEN, CLOSE = "[", "]"  # keys in these inputs are built, so this file holds no unresolved key itself


def key(name: str) -> str:
    return OPEN + name + CLOSE


@pytest.mark.parametrize(
    "path,text",
    [
        ("a.py", "# fits on a v6e " + key("NOPE") + "\n"),
        ("a.py", 'X = "as ' + key("D-NOWHERE") + ' says"\n'),
        ("a.md", "Prices (" + key("NOPE") + ", " + key("SB") + ").\n"),
        ("Pulumi.x.yaml", "# the tutorial " + key("TUTORIAL") + "\nkey: 1\n"),
        ("a.md", "see " + "shared" + "/see" + "ds/003\n"),
        ("a.py", "# the notes' " + "\u00a7" + "4.2\n"),
        ("a.py", "# as the catalogue " + "section 6 says\n"),
        ("a.md", "in upstream-manifests" + ".md\n"),
        ("a.md", "beside it in .." + "/shared\n"),
    ],
)
def test_a_reference_outside_the_repository_or_an_unresolved_key_is_found(path, text):
    assert problems(path, text)


@pytest.mark.parametrize(
    "path,text",
    [
        ("a.py", "# fits on a v6e ([D-v6e], [XPK]); inferred [I]\n"),
        ("a.py", 'UNITS = re.compile(r"(\\d+)([KMGTPE]i?)")\nLETTER = re.compile(r"TPU-[A-Z0-9]+")\n'),
        ("a.py", 'SUB = re.sub(r"([a-z0-9])([A-Z])", "", x)\n'),
        ("a.py", "command = " + key("PLAN") + ' + ["plan"]\nresult' + key("ATTENTION") + " = 1\n"),
        ("a.py", '"""`' + key("Namespace") + '` to depend on."""\n'),
        (
            "a.md",
            "the [GKE docs](https://cloud.google.com/kubernetes-engine/docs) and [docs/saxml.md](docs/saxml.md)\n",
        ),
        ("a.md", "see " + key("ZONE-LIST") + "\n\n" + key("ZONE-LIST") + ": https://example.com/zones\n"),
        ("a.md", "```yaml\npolicyTypes: " + key("Ingress") + "\n```\n"),
        ("crd.yaml", "pattern: ^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])$\n"),
        ("a.md", "the shared GCS FUSE mount; catalogue entries; the model catalogue (tpu_stacks.catalog.models)\n"),
    ],
)
def test_resolved_keys_code_regex_classes_and_links_pass(path, text):
    assert problems(path, text) == []
