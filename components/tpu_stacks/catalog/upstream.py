"""The upstream ledger: every behaviour of a pinned upstream that a stack relies on, with its file and line.

Why: our analyzers were right about what they model, and a stack still would not have come up, because nobody had
written down how the upstreams behave (a 3600 s engine-start limit inside Ray Serve LLM, a 100 s slice reservation,
a health check on a port a policy closes). Each fact a stack leans on (a timeout, a default port or flag, an
injected probe, an environment variable an upstream reads, a retry count) is one row of `upstream_ledger.toml`,
beside this module, with the upstream file and line at the version we pin. Code that depends on a fact reads it
here (`fact(id).value`) rather than typing the number again, and names the row it relies on.

Three kinds of row, by how they are checked:
- `wheel`: a Python upstream on PyPI (ray, vllm-tpu, tpu-inference). `scripts/upstream_check.py` downloads the
  pinned wheel (`pip download --no-deps`, unpacked, never installed) and finds the recorded literal at the
  recorded line (`make upstream`, which CI runs; it reaches the network, so it is not part of `make test`).
- `source`: a Go upstream (KubeRay, the endpoint picker, GKE's controllers): repository, tag, path and line, read
  by hand when the pin moves (no Go module source can be fetched here), with the date it was read.
  `scripts/upstream_check.py --source NAME=GIT_DIR` re-reads them from a local clone when one is at hand.
- A row's `value`, when it has one, is checked offline too (tests/catalog/test_upstream_ledger.py): its
  `value_expr` (the value's own text by default) is part of the literal and evaluates to it (`value_problem`).

Naming a row: code that uses the value reads it (`fact("id")`, `number("id")`, `text("id")`); prose that relies on
the behaviour names it as `ledger: id` (several: `ledger: id1, id2`). Every row is named so in at least one of its
`relied_on_by` files, and every name resolves to a row (tests/catalog/test_upstream_ledger.py): a row nothing names
any more is visible, and so is a name whose row is gone.
- `documented`: a claim with no pinned source (the port GKE health-checks the endpoint picker on; which KubeRay
  GKE's Ray add-on runs): the document, its date, and the cluster check that settles it.

A workload folder keeps the rows of its own upstream in its own `upstream.toml` (the same tables: its pin and its
rows), found through the registry and merged here (`ledger_files`), so adding an engine edits no shared ledger;
`upstream_ledger.toml` keeps the upstreams several stacks share.

docs/upstream.md is generated from the data files (`make upstream-docs`; a test fails when it is stale). Pure: no
provider SDK, so the policy pack and the plans read it too.
"""

from __future__ import annotations

import ast
import datetime
import importlib
import operator
import re
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

LEDGER_FILE = Path(__file__).with_name("upstream_ledger.toml")
FOLDER_LEDGER = "upstream.toml"
"""A workload folder's own ledger file: the pins and rows of the upstream only that workload runs."""
Kind = Literal["wheel", "source", "documented"]
ROW_ID = re.compile(r"[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9_-]+)+")
"""A row id: dotted lower-case words, the pin's name first (`ray.serve.http-port`)."""
_GAP = r"[\s#]*"
"""Between `ledger:` and an id, or a comma and the next id: spaces, and a line break into the next comment line."""
REFERENCE = re.compile(
    r"""\b(?:fact|number|text)\(\s*["'](?P<call>[^"']+)["']\s*\)"""
    rf"|\bledger:{_GAP}(?P<named>{ROW_ID.pattern}(?:{_GAP},{_GAP}{ROW_ID.pattern})*)"
)
"""How code and prose name a row: a `fact("id")`, `number("id")` or `text("id")` call, or `ledger: id[, id...]`
(the list may run over lines, comment lines included)."""


class Pin(BaseModel):
    """One pinned upstream: what the rows of that upstream are read against."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: Kind
    title: str
    """What it is, for the generated page."""
    package: str | None = None
    """PyPI distribution (wheel pins)."""
    version: str | None = None
    """The pinned version or tag, when no catalogue constant holds it (else `version_from`)."""
    version_from: str | None = None
    """`module.CONSTANT` that holds the pin (one source: the catalogue's, never a copy here)."""
    download_args: tuple[str, ...] = ()
    """Extra `pip download` arguments (a platform wheel: `--platform`, `--python-version`, `--only-binary=:all:`)."""
    repository: str | None = None
    """`owner/name` on GitHub (source pins), or the document's site (documented pins)."""
    declared_in: str = ""
    """The ledger file that declares it (filled in when read; empty: the shared upstream_ledger.toml)."""

    @model_validator(mode="after")
    def _one_version(self) -> Pin:
        if self.kind != "documented" and (self.version is None) == (self.version_from is None):
            raise ValueError(f"pin {self.name}: give exactly one of version and version_from")
        if self.kind == "wheel" and not self.package:
            raise ValueError(f"pin {self.name}: a wheel pin names its PyPI package")
        if self.kind == "source" and not self.repository:
            raise ValueError(f"pin {self.name}: a source pin names its repository")
        return self

    @property
    def pinned(self) -> str:
        """The version the rows are read at: the catalogue's constant when the pin names one."""
        if self.version_from is None:
            return self.version or ""
        module, _, constant = self.version_from.rpartition(".")
        return str(getattr(importlib.import_module(module), constant))

    def pin_file(self, root: Path) -> tuple[str, str]:
        """Where the pin lives, repository-relative: the module of `version_from` and its constant, or this file's
        `[pins.NAME]` table."""
        if self.version_from is None:
            return _relative(Path(self.declared_in) if self.declared_in else LEDGER_FILE, root), f"[pins.{self.name}]"
        module, _, constant = self.version_from.rpartition(".")
        return _relative(Path(str(importlib.import_module(module).__file__)), root), constant

    def source_url(self, version: str, path: str, line: int) -> str | None:
        """The public page of `path:line` at `version`: GitHub for a source pin, the release's PyPI page for a wheel
        (PyPI shows no file inside a wheel), None for a documented pin."""
        if self.kind == "source":
            return f"https://github.com/{self.repository}/blob/{version}/{path}#L{line}"
        if self.kind == "wheel":
            return f"https://pypi.org/project/{self.package}/{version}/"
        return None


class Row(BaseModel):
    """One behaviour we rely on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    pin: str
    """The `[pins.NAME]` it is read against."""
    claim: str
    """What the upstream does, in one or two sentences."""
    relied_on_by: tuple[str, ...]
    """Our files that depend on it (repository-relative)."""
    read: datetime.date
    """When a person (or the check) last read it at the pinned version."""
    path: str | None = None
    """File inside the wheel (package-relative, `ray/...`) or the repository (source rows)."""
    line: int | None = None
    literal: str | None = None
    """The text at `path:line`, stripped of indentation: the check finds it there."""
    value: int | float | str | None = None
    """The number or name we use, when we use one (`fact(id).value`)."""
    value_expr: str | None = None
    """The part of `literal` that evaluates to `value` when the value is not written as such (`60 * 60`)."""
    url: str | None = None
    """documented rows: the page."""
    quote: str | None = None
    """documented rows: the sentence relied on."""
    settled_by: str | None = None
    """documented rows: the cluster check that settles the claim (docs/verify-on-a-cluster.md)."""

    @model_validator(mode="after")
    def _complete(self) -> Row:
        if not ROW_ID.fullmatch(self.id):
            raise ValueError(f"row {self.id!r}: an id is dotted lower-case words (`ray.serve.http-port`)")
        if self.url is None and (self.path is None or self.line is None or not self.literal):
            raise ValueError(f"row {self.id}: a wheel or source row has path, line and literal")
        if self.line is not None and self.line < 1:
            raise ValueError(f"row {self.id}: line is 1-based")
        if self.url is not None and (not self.quote or not self.settled_by):
            raise ValueError(f"row {self.id}: a documented row has url, quote and settled_by")
        if self.value_expr is not None and self.value is None:
            raise ValueError(f"row {self.id}: value_expr without a value")
        return self

    def value_problem(self) -> str | None:
        """Why the recorded value is not what the recorded literal says (None when it is, or there is no value to
        check): `value_expr`, by default the value's text (a string's quoted form when the literal quotes it), must
        be part of the literal and evaluate to `value` (numbers with + - * /, or a string literal; other text is
        itself)."""
        if self.value is None or self.literal is None:
            return None
        expression = self.value_expr if self.value_expr is not None else default_expression(self.value, self.literal)
        if expression not in self.literal:
            what = f"value {self.value!r}" if self.value_expr is None else f"value_expr {expression!r}"
            return f"expected {what} in the literal, found {self.literal.strip()!r}"
        found = evaluate(expression)
        same_kind = type(found) is type(self.value) or (_is_number(found) and _is_number(self.value))
        if not same_kind or found != self.value:
            return f"expected value {self.value!r}, found {found!r} ({expression!r} in the literal)"
        return None


class Ledger(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pins: dict[str, Pin]
    rows: tuple[Row, ...]

    @model_validator(mode="after")
    def _consistent(self) -> Ledger:
        seen: set[str] = set()
        for row in self.rows:
            if row.id in seen:
                raise ValueError(f"row {row.id} is recorded twice")
            seen.add(row.id)
            pin = self.pins.get(row.pin)
            if pin is None:
                raise ValueError(f"row {row.id}: no pin {row.pin!r}")
            if (pin.kind == "documented") != (row.url is not None):
                raise ValueError(f"row {row.id}: a {pin.kind} pin's row must be of that kind")
        return self

    def rows_of(self, pin: str) -> tuple[Row, ...]:
        return tuple(row for row in self.rows if row.pin == pin)

    def row(self, row_id: str) -> Row:
        for row in self.rows:
            if row.id == row_id:
                return row
        raise KeyError(
            f"the upstream ledger has no row {row_id!r} (catalog/upstream_ledger.toml, <workload>/upstream.toml)"
        )


_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _arithmetic(node: ast.AST) -> int | float | str:
    if isinstance(node, ast.Constant) and (_is_number(node.value) or isinstance(node.value, str)):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        operand = _arithmetic(node.operand)
        if _is_number(operand):
            return _OPERATORS[type(node.op)](operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if _is_number(left) and _is_number(right):
            return _OPERATORS[type(node.op)](left, right)
    raise ValueError("not a numeric or string literal")


def evaluate(expression: str) -> int | float | str:
    """A `value_expr`'s value, never by `eval`: numeric literals with + - * / and parentheses (`60 * 60`,
    `100.0`), or one string literal (`"ray.io/serve"`); any other text (`--port`, `ray.io/serve`) is itself."""
    try:
        return _arithmetic(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return expression


def default_expression(value: int | float | str, literal: str) -> str:
    """The part of the literal a value is looked for as when the row gives no `value_expr`: a number's text, a
    string's quoted form where the literal quotes it (Python and Go: `"Ready"`), else its bare text."""
    if not isinstance(value, str):
        return str(value)
    return next((quoted for quoted in (f'"{value}"', f"'{value}'") if quoted in literal), value)


def references(text: str) -> set[str]:
    """The row ids a file's text names (REFERENCE)."""
    found: set[str] = set()
    for match in REFERENCE.finditer(text):
        if match["call"]:
            found.add(match["call"])
        else:
            found.update(ROW_ID.findall(match["named"]))
    return found


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def parse(text: str, declared_in: str = "") -> Ledger:
    data = tomllib.loads(text)
    pins = {name: Pin(name=name, declared_in=declared_in, **fields) for name, fields in data.get("pins", {}).items()}
    return Ledger(pins=pins, rows=tuple(Row(**row) for row in data.get("row", [])))


def ledger_files() -> tuple[Path, ...]:
    """The shared ledger, then each workload folder's own `upstream.toml`, by folder (a folder of `tpu_stacks` with a
    `descriptor.py`, as the registry finds them; a folder without one adds nothing)."""
    import tpu_stacks

    return _ledger_files(tuple(tpu_stacks.__path__))


@cache
def _ledger_files(search_path: tuple[str, ...]) -> tuple[Path, ...]:
    # The registry's rule (a folder with a descriptor is a workload), read from the file system: the ledger is read
    # while the catalogue itself imports, before any package of the registry may be imported.
    found = [
        path
        for location in search_path
        for path in sorted(Path(location).glob(f"*/{FOLDER_LEDGER}"))
        if (path.parent / "descriptor.py").is_file()
    ]
    return (LEDGER_FILE, *found)


def parse_files(paths: Iterable[Path]) -> Ledger:
    """One ledger of several files: their pins (each declared once) and rows, in file order."""
    pins: dict[str, Pin] = {}
    rows: list[Row] = []
    for path in paths:
        part = parse(path.read_text(encoding="utf-8"), "" if path == LEDGER_FILE else str(path))
        twice = pins.keys() & part.pins.keys()
        if twice:
            raise ValueError(f"{path}: pin {', '.join(sorted(twice))} is declared in another ledger file too")
        pins.update(part.pins)
        rows.extend(part.rows)
    return Ledger(pins=pins, rows=tuple(rows))


def ledger() -> Ledger:
    """The whole ledger: read once per set of ledger files (a test's toy workload may add a folder's)."""
    return _ledger(ledger_files())


@cache
def _ledger(files: tuple[Path, ...]) -> Ledger:
    return parse_files(files)


def fact(row_id: str) -> Row:
    """The ledger's row `row_id` (KeyError when it is not recorded: a fact we rely on must be).

    Only that row's table is parsed: a plan reads a few dozen of the ledger's 400-odd rows, and parsing all of its
    TOML (`ledger()`) cost every plan and the pack's start 0.05 s or more. `ledger()` keeps the whole-ledger checks
    (a row recorded twice, its pin); tests/catalog/test_upstream_ledger.py checks that every row read here is the
    row `ledger()` holds."""
    files = ledger_files()
    block = _row_tables(files).get(row_id)
    if block is None:
        return ledger().row(row_id)  # its KeyError, or a row this quick look could not find
    return _row(block)


_TABLE = re.compile(r"^\[", re.M)
_ROW_ID = re.compile(r'^id\s*=\s*"([^"]+)"\s*$', re.M)


@cache
def _row_tables(files: tuple[Path, ...]) -> dict[str, str]:
    """Each `[[row]]` table's text by its id, the first file that records it winning (as `ledger()` refuses a row
    recorded twice, a second one is left for it to find)."""
    found: dict[str, str] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        starts = [match.start() for match in _TABLE.finditer(text)]
        for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
            block = text[start:end]
            if block.startswith("[[row]]") and (named := _ROW_ID.search(block)) is not None:
                found.setdefault(named.group(1), block)
    return found


@cache
def _row(block: str) -> Row:
    (row,) = tomllib.loads(block)["row"]
    return Row(**row)


def number(row_id: str) -> int:
    """A row's whole-number value (a port, a timeout in seconds, a retry count)."""
    value = fact(row_id).value
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"upstream ledger row {row_id} records {value!r}, not a whole number")
    return value


def fraction(row_id: str) -> float:
    """A row's real-number value (a memory fraction, a ratio)."""
    value = fact(row_id).value
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"upstream ledger row {row_id} records {value!r}, not a number")
    return float(value)


def text(row_id: str) -> str:
    """A row's text value (a label key, a condition type, a flag or metric name)."""
    value = fact(row_id).value
    if not isinstance(value, str):
        raise TypeError(f"upstream ledger row {row_id} records {value!r}, not text")
    return value
