"""The docs say what the code does: no doubled words, README outputs git-ignored, bench numbers from the bench.

Each check reads the source of truth (the benchmark's argparse defaults, the Makefile's recipes, the
repository's stack files) rather than a copy of it, so a change there fails here until the docs follow.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from stacks.shipped import SHIPPED

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md")) + [README]

# -- doubled words ("A a wrong value") -----------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z]+")
_WORD_THEN_PUNCTUATION = re.compile(r"([A-Za-z]+)[,.;:!?)]?")


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) outside fenced code blocks, inline code spans blanked out."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            # a span of two backticks holds text with single backticks in it (docs/upstream.md's Go literals)
            lines.append((number, re.sub(r"`[^`]*`", "`", re.sub(r"``.*?``", "`", line))))
    return lines


def doubled_words(text: str) -> list[str]:
    """Adjacent whitespace-separated words that are the same word, case aside (`A a`, `the the,`). Tokens
    that are not plain words (paths like `google/saxml saxml/...`, flags and their placeholders) are not."""
    tokens = text.split()
    found = []
    for first, second in zip(tokens, tokens[1:], strict=False):
        word = _WORD_THEN_PUNCTUATION.fullmatch(second)
        if _WORD.fullmatch(first) and word and first.lower() == word.group(1).lower():
            found.append(f"{first} {second}")
    return found


def test_code_spans_of_two_backticks_are_not_prose(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("``Gates Gates `json` `` and and\n")
    assert [pair for _, text in prose_lines(page) for pair in doubled_words(text)] == ["and and"]


def test_the_doubled_word_check_finds_what_it_should():
    assert doubled_words("A a wrong value fails") == ["A a"]
    assert doubled_words("it is the the, end") == ["the the,"]
    assert doubled_words("google/saxml saxml/server and --location LOCATION") == []
    assert doubled_words("that that") == ["that that"]
    assert doubled_words("a wrong value, a value") == []


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_doubled_words_in_the_docs(path: Path):
    found = [f"{path.name}:{n}: {pair}" for n, text in prose_lines(path) for pair in doubled_words(text)]
    assert not found, found


# -- outputs of the README's own commands are git-ignored -----------------------------------------------

_OUTPUT_FLAGS = ("--json", "--manifests", "--diagram", "--out")


def readme_commands() -> list[str]:
    """Shell lines of the README's code blocks and its inline `make ...` commands."""
    text = README.read_text(encoding="utf-8")
    commands = []
    for language, block in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S):
        if language in ("", "bash", "sh", "shell", "console"):
            commands += [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    commands += re.findall(r"`(make [a-z-]+[^`]*)`", text)
    return [c for c in commands if c]


def make_recipe(target: str) -> list[str]:
    """The Makefile recipe lines of `target`, with the README's variables as `make` fills them."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip().replace("$(BIN)", "venv/bin").replace("$(STACK)", "dev"))
    return recipe


def output_paths(command: str) -> list[str]:
    """The files and directories `command` writes: its output flags' values and `>` redirections;
    `make TARGET` stands for its recipe."""
    words = shlex.split(command.replace("$STACK", "dev"), comments=True)
    if words[:1] == ["make"]:
        return [path for line in make_recipe(words[1]) for path in output_paths(line)]
    paths = []
    for flag, value in zip(words, words[1:], strict=False):
        if flag in _OUTPUT_FLAGS or flag == ">":
            paths.append(value)
        elif flag.startswith(tuple(f"{f}=" for f in _OUTPUT_FLAGS)):
            paths.append(flag.split("=", 1)[1])
    return [p.replace("{stack}", "dev") for p in paths if not p.startswith("-")]


def test_the_readme_commands_are_read_with_their_outputs():
    outputs = {p for c in readme_commands() for p in output_paths(c)}
    # `make plan`, the offline plan example, the kubeconfig and the policy pack's build
    assert {"plan-dev.json", "manifests/dev", "kubeconfig.yaml", "dist/policy-pack"} <= outputs, outputs


def test_every_output_of_the_readme_commands_is_git_ignored():
    outputs = sorted({p for c in readme_commands() for p in output_paths(c)})
    probes = [f"{p.rstrip('/')}/file" if not Path(p).suffix else p for p in outputs]  # a file inside a directory
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *probes], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    assert sorted(set(probes) - set(ignored)) == []


# -- the benchmark section states what the benchmark does ---------------------------------------------


def _bench_default(option: str) -> str:
    source = (ROOT / "benchmarks" / "plan_stacks.py").read_text(encoding="utf-8")
    found = re.search(rf'add_argument\("{option}"[^)]*default=([^,)]+)', source)
    assert found, f"benchmarks/plan_stacks.py has no {option} default"
    return found.group(1).strip("\"'")


def _performance_section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("## Performance", 1)[1].split("\n## ", 1)[0]


def test_the_readme_states_the_benchmarks_repeat():
    repeat = _bench_default("--repeat")
    counts = re.findall(r"best of (\d+)", _performance_section())
    assert counts and set(counts) == {repeat}, (counts, repeat)


def test_the_benchmark_table_names_the_stacks_it_measured_and_those_it_did_not():
    """`all N stacks` is the number of stacks the table has rows for, and every shipped stack is either
    measured there or named as not in the run: adding a stack fails here until the README says which."""
    section = _performance_section()
    (count,) = re.findall(r"all (\d+) stacks in one process", section)
    rows = [line for line in section.splitlines() if line.startswith("| stack ")]
    measured = {name for row in rows for name in re.findall(r"`([a-z0-9-]+)`", row.split("|")[1])}
    assert int(count) == len(measured), (count, measured)
    missing = (
        section.split("not in this run, shipped since:", 1)[1].split(")", 1)[0] if "not in this run" in section else ""
    )
    not_measured = set(re.findall(r"`([a-z0-9-]+)`", missing))
    shipped = set(SHIPPED)  # stacks/shipped.py: a stack file a user adds is in no table
    assert measured | not_measured == shipped and not measured & not_measured, (measured, not_measured, shipped)
