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
- `documented`: a claim with no pinned source (the port GKE health-checks the endpoint picker on; which KubeRay
  GKE's Ray add-on runs): the document, its date, and the cluster check that settles it.

docs/upstream.md is generated from the data file (`make upstream-docs`; a test fails when it is stale). Pure: no
provider SDK, so the policy pack and the plans read it too.
"""

from __future__ import annotations

import datetime
import importlib
import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

LEDGER_FILE = Path(__file__).with_name("upstream_ledger.toml")
Kind = Literal["wheel", "source", "documented"]


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
        if self.url is None and (self.path is None or self.line is None or not self.literal):
            raise ValueError(f"row {self.id}: a wheel or source row has path, line and literal")
        if self.url is not None and (not self.quote or not self.settled_by):
            raise ValueError(f"row {self.id}: a documented row has url, quote and settled_by")
        if self.value_expr is not None and (self.literal is None or self.value_expr not in self.literal):
            raise ValueError(f"row {self.id}: value_expr must be part of the literal")
        return self


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

    def row(self, row_id: str) -> Row:
        for row in self.rows:
            if row.id == row_id:
                return row
        raise KeyError(f"the upstream ledger has no row {row_id!r} (catalog/upstream_ledger.toml)")


def parse(text: str) -> Ledger:
    data = tomllib.loads(text)
    pins = {name: Pin(name=name, **fields) for name, fields in data.get("pins", {}).items()}
    return Ledger(pins=pins, rows=tuple(Row(**row) for row in data.get("row", [])))


@cache
def ledger() -> Ledger:
    return parse(LEDGER_FILE.read_text())


def fact(row_id: str) -> Row:
    """The ledger's row `row_id` (KeyError when it is not recorded: a fact we rely on must be)."""
    return ledger().row(row_id)


def number(row_id: str) -> int:
    """A row's whole-number value (a port, a timeout in seconds, a retry count)."""
    value = fact(row_id).value
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"upstream ledger row {row_id} records {value!r}, not a whole number")
    return value
