"""catalog/upstream.py's own rules at their edges: where a pin's source page is, which rows are complete, what a
value expression may compute, and what `fraction` refuses."""

import warnings

import pytest
from pydantic import ValidationError

from tpu_stacks.catalog.upstream import Pin, Row, _is_number, evaluate, fraction, parse

ROW = {"id": "acme.port", "pin": "acme", "claim": "c", "relied_on_by": ("x.py",), "read": "2026-11-29"}
LEDGER = """
[pins.acme]
kind = "source"
title = "Acme"
version = "v1"
repository = "acme/acme"

[[row]]
id = "acme.port"
pin = "acme"
claim = "serves on 8080"
relied_on_by = ["x.py"]
read = 2026-11-29
path = "main.go"
line = 3
literal = "port := 8080"
value = 8080
"""


def test_a_source_pin_links_github_a_wheel_pypi_and_a_document_nothing():
    """GitHub's blob URL with a line anchor (`/blob/<ref>/<path>#L<n>`); PyPI's release page (`/project/<name>/<v>/`),
    which shows no file inside a wheel."""
    source = Pin(name="acme", kind="source", title="t", version="v1", repository="acme/acme")
    wheel = Pin(name="vllm", kind="wheel", title="t", version="0.29.0", package="vllm-tpu")
    documented = Pin(name="doc", kind="documented", title="t")
    assert source.source_url("v1", "cmd/main.go", 12) == "https://github.com/acme/acme/blob/v1/cmd/main.go#L12"
    assert wheel.source_url("0.29.0", "vllm/x.py", 3) == "https://pypi.org/project/vllm-tpu/0.29.0/"
    assert documented.source_url("", "", 1) is None


@pytest.mark.parametrize(
    "missing",
    [{"path": None}, {"line": None}, {"literal": ""}],
)
def test_a_read_row_needs_its_path_line_and_literal(missing):
    with pytest.raises(ValidationError, match="a wheel or source row has path, line and literal"):
        Row(**{**ROW, "path": "main.go", "line": 3, "literal": "port := 8080", **missing})


def test_lines_count_from_one():
    assert Row(**ROW, path="main.go", line=1, literal="x").line == 1
    with pytest.raises(ValidationError, match="line is 1-based"):
        Row(**ROW, path="main.go", line=0, literal="x")


@pytest.mark.parametrize("missing", [{"quote": None}, {"settled_by": None}])
def test_a_documented_row_needs_its_quote_and_its_settling_check(missing):
    documented = {"url": "https://example.com", "quote": "q", "settled_by": "check"}
    with pytest.raises(ValidationError, match="a documented row has url, quote and settled_by"):
        Row(**{**ROW, **documented, **missing})


def test_a_ledger_parses_without_warnings_and_finds_its_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ledger = parse(LEDGER)
    assert ledger.row("acme.port").value == 8080


def test_numbers_are_ints_and_floats_not_bools_or_text():
    assert _is_number(8080) and _is_number(0.92)
    assert not _is_number(True) and not _is_number("8080")


def test_arithmetic_is_of_numbers_only():
    """A value expression computes numbers (`60 * 60`); text times a number is text, not a repeated string."""
    assert evaluate("60 * 60") == 3600
    assert evaluate('"ab" * 2') == '"ab" * 2'


def test_a_fraction_is_a_number_and_text_is_refused():
    """vLLM's `gpu_memory_utilization` defaults to 0.92 (vllm/config/cache.py at the pinned vllm-tpu 0.29.0)."""
    assert fraction("vllm.default.gpu-memory-utilization") == 0.92
    with pytest.raises(TypeError, match="not a number"):
        fraction("epp.header.objective")
