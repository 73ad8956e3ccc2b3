"""The upstream ledger against the real pinned wheels: every wheel row holds at its pin, and a ledger with one
recorded literal or value edited fails there. Network: the wheels come from PyPI (`make upstream` downloads them
into .upstream-cache/ first; these tests reuse them). Not collected by `make test` (`pytest tests`), which stays
offline; tests/catalog/test_upstream_ledger.py checks the checker on a synthetic wheel."""

from __future__ import annotations

import pytest

from scripts import upstream_check
from tests.catalog.test_upstream_ledger import edited
from tpu_stacks.catalog.upstream import LEDGER_FILE, Ledger, Pin, Row, ledger, ledger_files, parse

BOOK = ledger()
WHEEL_PINS = [pin for pin in BOOK.pins.values() if pin.kind == "wheel" and BOOK.rows_of(pin.name)]


def _check(book: Ledger, rows: tuple[str, ...] = ()) -> tuple[int, str]:
    lines: list[str] = []
    code = upstream_check.run(book, cache=upstream_check.CACHE, rows=rows, out=lines.append)
    return code, "\n".join(lines)


def _book_with(row: Row, field: str, new: object) -> Ledger:
    """The whole ledger with one field of one row edited in whichever file declares the row (the shared ledger or a
    workload folder's upstream.toml), read as catalog/upstream.py reads the files."""
    pins: dict[str, Pin] = {}
    rows: list[Row] = []
    for path in ledger_files():
        text = path.read_text(encoding="utf-8")
        if f'id = "{row.id}"' in text:
            text = edited(text, row.id, field, new)
        part = parse(text, "" if path == LEDGER_FILE else str(path))
        pins.update(part.pins)
        rows.extend(part.rows)
    return Ledger(pins=pins, rows=tuple(rows))


def _valued(pin: Pin) -> Row:
    return next(row for row in BOOK.rows_of(pin.name) if row.value is not None)


def test_every_wheel_row_holds_at_its_pin():
    code, out = _check(BOOK)
    assert code == 0, out
    for pin in WHEEL_PINS:
        count = len(BOOK.rows_of(pin.name))
        assert f"pin {pin.name} {pin.pinned}: {count} of {count} rows hold" in out


@pytest.mark.parametrize("pin", WHEEL_PINS, ids=lambda pin: pin.name)
def test_an_edited_value_fails_against_the_pinned_wheel(pin: Pin):
    row = _valued(pin)
    assert row.value is not None
    other = f"{row.value}-edited" if isinstance(row.value, str) else row.value + 1
    code, out = _check(_book_with(row, "value", other), (row.id,))
    assert code == 1
    assert f"row {row.id}: pin {pin.name} {pin.pinned} {row.path}:{row.line}: expected value {other!r}" in out


@pytest.mark.parametrize("pin", WHEEL_PINS, ids=lambda pin: pin.name)
def test_an_edited_literal_fails_against_the_pinned_wheel(pin: Pin):
    row = BOOK.rows_of(pin.name)[0]
    assert row.literal is not None
    literal = row.literal.replace("_", "-", 1) if "_" in row.literal else row.literal + "  # edited"
    code, out = _check(_book_with(row, "literal", literal), (row.id,))
    assert code == 1
    assert (
        f"row {row.id}: pin {pin.name} {pin.pinned} {row.path}:{row.line}: expected {literal.strip()!r}, found" in out
    )
