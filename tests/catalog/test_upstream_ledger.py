"""The upstream ledger, offline: the data file loads, every pin resolves, every row names real files of ours and
is named by one of them, every name in the code is a row, every recorded value is what its literal says, and the
checker (scripts/upstream_check.py) finds a row's literal in a wheel, and fails when the literal, the value, the
line or the file is wrong. The real pinned wheels are checked by `make upstream` (tests_upstream/, network)."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from scripts import upstream_check
from tpu_stacks.catalog import upstream
from tpu_stacks.catalog.upstream import evaluate, fact, ledger, number, parse, references, text

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("components/tpu_stacks", "policies", "stacks", "scripts", "tools")
"""Where code and prose may name a row (the ledger's own module and data file aside)."""
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ""}


def _files() -> list[Path]:
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                found.append(path)
    return [path for path in found if path not in (*upstream.ledger_files(), Path(upstream.__file__))]


NAMED = {path.relative_to(ROOT).as_posix(): references(path.read_text(errors="replace")) for path in _files()}


def test_the_ledger_parses_and_has_rows_for_the_wheel_and_source_pins():
    book = ledger()
    assert len(book.rows) > 100
    for name in ("ray", "ray-train", "vllm", "tpu-inference", "kuberay", "epp"):
        assert book.rows_of(name), name


def test_every_wheel_pin_with_rows_has_a_valued_row():
    """`make upstream` (tests_upstream/test_pinned_wheels.py) proves the value check per wheel pin by editing one of
    its valued rows; a pin with rows but none valued fails only there, after the network half of CI (it did twice:
    vllm-render, transformers-sglang). Said offline, here."""
    book = ledger()
    unvalued = [
        name
        for name, pin in book.pins.items()
        if pin.kind == "wheel" and book.rows_of(name) and all(row.value is None for row in book.rows_of(name))
    ]
    assert unvalued == [], f"give one row of each of these pins the value the code reads from it: {unvalued}"


@pytest.mark.parametrize("pin", [p for p in ledger().pins.values() if p.kind != "documented"], ids=lambda p: p.name)
def test_every_pin_resolves_to_a_version(pin):
    """`version_from` names a constant that exists (one source: the catalogue's pin, never a copy here)."""
    assert pin.pinned and pin.pinned != "None"
    file, holder = pin.pin_file(ROOT)
    assert (ROOT / file).is_file()
    assert holder in (ROOT / file).read_text()


def test_every_file_a_row_relies_on_exists():
    missing = [(row.id, path) for row in ledger().rows for path in row.relied_on_by if not (ROOT / path).is_file()]
    assert missing == []


def test_every_row_the_code_names_exists():
    ids = {row.id for row in ledger().rows}
    unknown = sorted((path, name) for path, names in NAMED.items() for name in names - ids)
    assert unknown == [], "a `fact(...)`/`number(...)`/`text(...)` or `ledger: id` naming no row"


def test_every_row_is_named_by_a_file_it_says_relies_on_it():
    """The rule that makes an unused row visible: one of its `relied_on_by` files reads it (`fact("id")`,
    `number("id")`, `text("id")`) or names it (`ledger: id`). A row nothing names any more fails here."""
    unnamed = [
        row.id for row in ledger().rows if not any(row.id in NAMED.get(path, set()) for path in row.relied_on_by)
    ]
    assert unnamed == []


def test_every_recorded_value_is_what_its_literal_says():
    """Offline half of the check: `value_expr` (default: the value's text) is in the literal and evaluates to it."""
    problems = {row.id: row.value_problem() for row in ledger().rows if row.value_problem()}
    assert problems == {}


@pytest.mark.parametrize(
    "expression, value",
    [("60 * 60", 3600), ("100.0", 100.0), ("(1 + 2) / 4", 0.75), ("-6", -6), ('"ray.io/serve"', "ray.io/serve")],
)
def test_the_evaluator_does_arithmetic_and_string_literals(expression, value):
    assert evaluate(expression) == value


@pytest.mark.parametrize("expression", ["__import__('os')", "2 * time.Second", "--port", "ray.io/serve", "1 / 0"])
def test_the_evaluator_runs_nothing_and_keeps_other_text(expression):
    assert evaluate(expression) == expression


def test_references_are_calls_or_ledger_names():
    source = 'number("a.b") + fact(\'c.d\').value  # ledger: e.f, g.h-i; also ledger: j.k. Not "x.y" nor ledger:z'
    assert references(source) == {"a.b", "c.d", "e.f", "g.h-i", "j.k"}


def test_the_accessors_read_values_and_refuse_the_wrong_kind():
    assert number("ray.serve.http-port") == 8000
    assert text("kuberay.label.serve") == "ray.io/serve"
    assert fact("vllm.flag.model").value is None
    with pytest.raises(TypeError):
        number("kuberay.label.serve")
    with pytest.raises(TypeError):
        text("ray.serve.http-port")
    with pytest.raises(KeyError, match="no row"):
        fact("ray.no-such-row")


def test_a_fact_is_the_row_the_whole_ledger_holds():
    """`fact` parses only the row's own table (a plan reads a few dozen rows); each of them, in every ledger file, is
    the row `ledger()` parses and checks."""
    rows = ledger().rows
    assert len(rows) > 400 and any(row.id.startswith("sglang.") for row in rows)  # a folder's own ledger too
    assert [row for row in rows if fact(row.id) != row] == []


def test_a_row_table_is_cut_at_the_next_table(tmp_path: Path):
    ledger_file = tmp_path / "upstream.toml"
    ledger_file.write_text(
        '[pins.p]\nkind = "source"\n\n[[row]]\nid = "p.a"\nvalue = 1\nnotes = """\nid = "p.b"\n"""\n\n'
        '[pins.q]\nkind = "source"\n\n[[row]]\nid = "p.b"\nvalue = 2\n'
    )
    tables = upstream._row_tables((ledger_file,))
    assert sorted(tables) == ["p.a", "p.b"]  # an `id =` line inside a string is not the row's id
    assert tables["p.b"].startswith("[[row]]") and "value = 2" in tables["p.b"] and "[pins.q]" not in tables["p.a"]


# -- the checker on a synthetic wheel -------------------------------------------------------------------------------

SYNTHETIC = """
[pins.demo]
kind = "wheel"
title = "A synthetic wheel"
package = "demo-pkg"
version = "1.0.0"

[pins.demo-src]
kind = "source"
title = "A synthetic repository"
repository = "example/demo"
version = "v1.0.0"

[[row]]
id = "demo.timeout"
pin = "demo"
claim = "Waits an hour."
relied_on_by = ["README.md"]
read = 2026-11-29
path = "demo/constants.py"
line = 3
literal = 'TIMEOUT_S = int(os.getenv("DEMO_TIMEOUT_S", str(60 * 60)))'
value = 3600
value_expr = "60 * 60"

[[row]]
id = "demo.label"
pin = "demo"
claim = "Labels its pods."
relied_on_by = ["README.md"]
read = 2026-11-29
path = "demo/labels.py"
line = 1
literal = 'SERVE_LABEL = "demo.io/serve"'
value = "demo.io/serve"

[[row]]
id = "demo-src.port"
pin = "demo-src"
claim = "Serves on 8000."
relied_on_by = ["README.md"]
read = 2026-11-29
path = "pkg/constant.go"
line = 2
literal = "DefaultPort = 8000"
value = 8000
"""
FILES = {
    "demo/__init__.py": "",
    "demo/constants.py": 'import os\n\n    TIMEOUT_S = int(os.getenv("DEMO_TIMEOUT_S", str(60 * 60)))\n',
    "demo/labels.py": 'SERVE_LABEL = "demo.io/serve"\n',
}


def _wheel(cache: Path) -> Path:
    """The pinned wheel where the checker would have downloaded it: it is used, never downloaded again."""
    return _write_wheel(upstream_check.cache_folder(cache, parse(SYNTHETIC).pins["demo"], "1.0.0"))


def _write_wheel(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "demo_pkg-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, content in FILES.items():
            archive.writestr(name, content)
    return wheel


def _check(tmp_path: Path, ledger_text: str, repo: Path | None = None) -> tuple[int, str]:
    """The checker's exit status and output on `ledger_text`, reading the demo-src rows from `repo` when given."""
    lines: list[str] = []
    sources = {"demo-src": repo} if repo is not None else {}
    code = upstream_check.run(parse(ledger_text), cache=tmp_path / "cache", sources=sources, out=lines.append)
    return code, "\n".join(lines)


def edited(ledger_text: str, row_id: str, key: str, value: object) -> str:
    """The ledger with one field of one row replaced (its TOML line), as a person's edit would."""
    start = ledger_text.index(f'id = "{row_id}"')
    end = ledger_text.find("[[row]]", start)
    end = len(ledger_text) if end < 0 else end
    block = ledger_text[start:end]
    rendered = json.dumps(value) if isinstance(value, str) else str(value)
    changed, count = re.subn(rf"(?m)^{key} = .*$", f"{key} = {rendered}", block)
    assert count == 1
    return ledger_text[:start] + changed + ledger_text[end:]


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    _wheel(tmp_path / "cache")
    return tmp_path / "cache"


def test_the_checker_passes_when_every_literal_is_at_its_line(tmp_path, cache):
    code, out = _check(tmp_path, SYNTHETIC)
    assert code == 0, out
    assert "pin demo 1.0.0: 2 of 2 rows hold" in out
    assert "row demo-src.port: pin demo-src v1.0.0 pkg/constant.go:2: read by hand on 2026-11-29" in out


def test_a_wheel_in_the_cache_is_used_and_a_missing_one_downloaded_with_pip(tmp_path, cache, monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError(f"downloaded although the wheel is in the cache: {args}")

    monkeypatch.setattr(upstream_check.subprocess, "run", no_download)
    assert _check(tmp_path, SYNTHETIC)[0] == 0
    commands = []

    def pip(command, **kwargs):
        commands.append(command)
        _write_wheel(Path(command[command.index("-d") + 1]))  # what `pip download -d` leaves there
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(upstream_check.subprocess, "run", pip)
    platform = 'version = "1.0.0"\ndownload_args = ["--platform", "manylinux2014_x86_64"]'
    book = parse(SYNTHETIC.replace('version = "1.0.0"', platform, 1))
    lines: list[str] = []
    assert upstream_check.run(book, cache=tmp_path / "fresh", rows=("demo.timeout",), out=lines.append) == 0
    (command,) = commands
    folder = upstream_check.cache_folder(tmp_path / "fresh", book.pins["demo"], "1.0.0")
    assert command[1:] == [
        "-m",
        "pip",
        "download",
        "--no-deps",
        "demo-pkg==1.0.0",
        "--platform",
        "manylinux2014_x86_64",
        "--only-binary=:all:",
        "-d",
        str(folder),
    ]


def test_the_checker_fails_when_a_recorded_literal_is_edited(tmp_path, cache):
    changed = edited(SYNTHETIC, "demo.label", "literal", 'SERVE_LABEL = "demo.io/served"')
    code, out = _check(tmp_path, changed)
    assert code == 1
    assert (
        "row demo.label: pin demo 1.0.0 demo/labels.py:1: expected 'SERVE_LABEL = \"demo.io/served\"', "
        "found 'SERVE_LABEL = \"demo.io/serve\"'" in out
    )


@pytest.mark.parametrize("row_id, value", [("demo.timeout", 3601), ("demo.label", "demo.io/other")])
def test_the_checker_fails_when_a_recorded_value_is_edited(tmp_path, cache, row_id, value):
    code, out = _check(tmp_path, edited(SYNTHETIC, row_id, "value", value))
    assert code == 1
    assert f"row {row_id}: pin demo 1.0.0" in out
    assert "expected value" in out


def test_the_checker_fails_on_a_wrong_line_and_says_where_the_literal_is(tmp_path, cache):
    code, out = _check(tmp_path, edited(SYNTHETIC, "demo.timeout", "line", 2))
    assert code == 1
    assert "row demo.timeout: pin demo 1.0.0 demo/constants.py:2: expected" in out
    assert "found '' (the literal is at line 3)" in out


def test_the_checker_fails_on_a_line_past_the_end(tmp_path, cache):
    code, out = _check(tmp_path, edited(SYNTHETIC, "demo.label", "line", 9))
    assert code == 1 and "found the end of the file (it has 1 lines)" in out


def test_the_checker_fails_on_a_missing_file(tmp_path, cache):
    code, out = _check(tmp_path, edited(SYNTHETIC, "demo.label", "path", "demo/gone.py"))
    assert code == 1
    assert (
        "row demo.label: pin demo 1.0.0 demo/gone.py:1: expected 'SERVE_LABEL = \"demo.io/serve\"', found no such file"
        in out
    )


def test_the_checker_reads_source_rows_from_a_clone(tmp_path, cache):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pkg").mkdir()
    (repo / "pkg" / "constant.go").write_text("package pkg\nDefaultPort = 8000\n")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", "."], [*env, "commit", "-qm", "v1"], ["tag", "v1.0.0"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True)
    code, out = _check(tmp_path, SYNTHETIC, repo)
    assert code == 0 and "pin demo-src v1.0.0: 1 of 1 rows hold" in out, out
    code, out = _check(tmp_path, edited(SYNTHETIC, "demo-src.port", "value", 8001), repo)
    assert (
        code == 1
        and "row demo-src.port: pin demo-src v1.0.0 pkg/constant.go:2: expected value 8001 in the literal, found 'DefaultPort = 8000'"
        in out
    )


def test_the_command_line_reads_another_version_from_the_cache_and_an_unpacked_tree(tmp_path, cache, capsys):
    """`--version` checks the rows against another release (here: one not in the cache, from an --offline tree)."""
    (tmp_path / "ledger.toml").write_text(SYNTHETIC)
    offline = tmp_path / "offline" / "demo"
    for name, content in FILES.items():
        (offline / name).parent.mkdir(parents=True, exist_ok=True)
        (offline / name).write_text(content.replace("60 * 60", "30 * 60"))
    argv = ["--ledger", str(tmp_path / "ledger.toml"), "--cache", str(cache), "--version", "demo=2.0.0"]
    assert upstream_check.main([*argv, "--offline", str(tmp_path / "offline")]) == 1
    assert "row demo.timeout: pin demo 2.0.0 demo/constants.py:3: expected" in capsys.readouterr().out
    assert (
        upstream_check.main(["--ledger", str(tmp_path / "ledger.toml"), "--cache", str(cache), "--rows", "demo.label"])
        == 0
    )
    with pytest.raises(SystemExit, match="no row demo.gone"):
        upstream_check.main(["--ledger", str(tmp_path / "ledger.toml"), "--rows", "demo.gone"])
    with pytest.raises(SystemExit, match="no pin"):
        upstream_check.main(["--ledger", str(tmp_path / "ledger.toml"), "--version", "nope=1"])


def test_a_workload_folder_keeps_its_own_upstreams_rows(tmp_path: Path):
    """SGLang-JAX's pin and rows are in its folder (sglang/upstream.toml), merged with the shared file; a pin
    declared in two files is refused."""
    folder = ROOT / "components" / "tpu_stacks" / "sglang" / upstream.FOLDER_LEDGER
    assert folder in upstream.ledger_files() and upstream.ledger_files()[0] == upstream.LEDGER_FILE
    assert ledger().pins["sglang-jax"].declared_in == str(folder) and fact("sglang.flag.port").pin == "sglang-jax"
    assert "[pins.sglang-jax]" not in upstream.LEDGER_FILE.read_text()
    twice = tmp_path / "upstream.toml"
    twice.write_text(folder.read_text())
    with pytest.raises(ValueError, match=r"pin sglang-jax(, [a-z-]+)* is declared in another ledger file too"):
        upstream.parse_files([folder, twice])


def test_each_image_s_huggingface_hub_rows_are_read_at_the_oldest_release_its_engine_allows():
    """The rows a server relies on for huggingface_hub are read at a release its image can hold: vllm-tpu 0.29.0
    requires huggingface_hub>=1.28.0 and sglang-jax 0.0.1.post1 ~=0.34.3 (their wheels' METADATA, ledger:
    vllm.requires.huggingface-hub, sglang-jax.requires.huggingface-hub), bench's transformers 5.13.0 >=1.5.0
    (ledger: inference-perf.requires.transformers). A vLLM row read at 1.5.0 checked a release no vLLM image holds."""
    book = ledger()
    floors = {
        "huggingface-hub-vllm": fact("vllm.requires.huggingface-hub").value,
        "huggingface-hub-sglang": fact("sglang-jax.requires.huggingface-hub").value,
    }
    for pin, floor in floors.items():
        assert book.pins[pin].version == floor, pin
    assert fact("inference-perf.requires.transformers").value == "5.13.0"  # whose floor is the bench pin's 1.5.0
    owners = {
        "components/tpu_stacks/vllm/": "huggingface-hub-vllm",
        "components/tpu_stacks/sglang/": "huggingface-hub-sglang",
    }
    for row in book.rows:
        if book.pins[row.pin].package != "huggingface-hub":
            continue
        for path in row.relied_on_by:
            for folder, pin in owners.items():
                assert not path.startswith(folder) or row.pin == pin, f"{row.id} relied on by {path}"


def test_sglang_s_transformers_rows_are_read_at_the_oldest_release_its_image_may_hold():
    """sglang-jax 0.0.1.post1 requires transformers~=4.55.0 (ledger: sglang-jax.requires.transformers): the config
    reader its served dtype follows is read there, not at the transformers 5 other images hold."""
    assert ledger().pins["transformers-sglang"].version == fact("sglang-jax.requires.transformers").value
