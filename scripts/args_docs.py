"""Keep the components' `*Args` documentation generated from the validated specs.

The `*Args` TypedDicts are what Pulumi's schema inference turns into the SDKs of other languages, and
their attribute docstrings become those SDKs' documentation. The pydantic specs are what the code
validates and acts on. Each Args field's docstring is generated from its spec field: the spec's
description (its attribute docstring, `field_rules.described_fields`) and its default, so the two cannot drift
apart again.

    venv/bin/python scripts/args_docs.py          # rewrite the Args docstrings
    venv/bin/python scripts/args_docs.py --check  # exit 1 and list the fields that differ

`tests/test_args_docs.py` runs the check.
"""

from __future__ import annotations

import argparse
import ast
import enum
import importlib
import inspect
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tpu_stacks.inputs.field_rules import described_fields
from tpu_stacks.registry import workloads


@dataclass(frozen=True)
class Pair:
    """A TypedDict of the schema and the spec model that validates the same fields."""

    args_module: str
    args_name: str
    spec_module: str
    spec_name: str

    def spec(self) -> type[BaseModel]:
        return getattr(importlib.import_module(self.spec_module), self.spec_name)

    def args_path(self) -> Path:
        return Path(inspect.getfile(importlib.import_module(self.args_module)))


def _pairs(args_module: str, spec_module: str, names: list[tuple[str, str]]) -> list[Pair]:
    return [Pair(args_module, args, spec_module, spec) for args, spec in names]


SHARED_PAIRS: list[Pair] = [
    *_pairs("tpu_stacks.gcp.monitoring.args", "tpu_stacks.gcp.monitoring.spec", [("MonitoringArgs", "MonitoringSpec")]),
    *_pairs("tpu_stacks.slo.args", "tpu_stacks.slo.spec", [("SloArgs", "SloSpec")]),
    *_pairs(
        "tpu_stacks.cluster.args",
        "tpu_stacks.cluster.spec",
        [
            ("AutoscalingArgs", "Autoscaling"),
            ("SliceArgs", "SliceSpec"),
            ("SystemPoolArgs", "SystemPoolSpec"),
            ("AddonsArgs", "AddonsSpec"),
            ("ExistingClusterArgs", "ExistingCluster"),
            ("AuthorizedNetworkArgs", "AuthorizedNetwork"),
            ("ControlPlaneArgs", "ControlPlaneSpec"),
            ("TpuClusterArgs", "ClusterSpec"),
        ],
    ),
]


def pairs() -> list[Pair]:
    """The shared pairs, then every registered workload's (tpu_stacks/registry.py), from its descriptor."""
    found = [_pairs(w.args.module, w.spec.module, list(w.args_docs)) for w in workloads()]
    return [*SHARED_PAIRS, *(pair for workload_pairs in found for pair in workload_pairs)]


PAIRS: list[Pair] = pairs()


def _default_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, int | float | str) and value != "":
        return f"{value:g}" if isinstance(value, float) else str(value)
    return None  # None, empty values and nested settings (documented on their own type)


def _settings_text(model: BaseModel) -> str | None:
    """A nested settings object's scalar defaults, in the config spelling: `cpu 8, memory 64Gi`."""
    parts = []
    for name, field in type(model).model_fields.items():
        value = _default_text(getattr(model, name))
        if value is not None:
            parts.append(f"{field.alias or name} {value}")
    return ", ".join(parts) or None


def expected_doc(field: FieldInfo) -> str | None:
    """The Args docstring for one spec field: its description, then its default."""
    parts = [" ".join(field.description.split())] if field.description else []
    default = None
    if field.default_factory is not None:
        made = field.get_default(call_default_factory=True)
        default = _settings_text(made) if isinstance(made, BaseModel) else None
    elif field.default is not PydanticUndefined:
        default = _default_text(field.default)
    if default is not None:
        parts.append(f"Default: {default}.")
    return " ".join(parts) or None


def _fields(tree: ast.Module, class_name: str) -> Iterator[tuple[str, ast.AnnAssign, ast.Expr | None]]:
    """(field name, its annotation line, its docstring expression or None), in source order."""
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    body = node.body
    for index, item in enumerate(body):
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            nxt = body[index + 1] if index + 1 < len(body) else None
            is_doc = (
                isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)
            )
            yield item.target.id, item, nxt if is_doc else None


LINE_LENGTH = 120  # ruff.toml


def _docstring_lines(text: str, indent: str) -> list[str]:
    """The docstring as source lines, wrapped to the line length (ruff format leaves strings alone)."""
    quoted = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = textwrap.wrap(quoted, width=LINE_LENGTH - len(indent) - 6, break_long_words=False, break_on_hyphens=False)
    lines[0] = '"""' + lines[0]
    lines[-1] += '"""'
    return [f"{indent}{line}\n" for line in lines]


def differences(pair: Pair) -> list[tuple[str, str | None, str | None]]:
    """(field, docstring now, docstring expected) for every Args field that differs from its spec."""
    fields = described_fields(pair.spec())
    tree = ast.parse(pair.args_path().read_text(encoding="utf-8"))
    found = []
    for name, _, doc in _fields(tree, pair.args_name):
        if name not in fields:
            continue  # a component input that is not part of the section (cluster, secrets)
        text = doc.value.value if doc and isinstance(doc.value, ast.Constant) else None
        now = " ".join(text.split()) if isinstance(text, str) else None
        want = expected_doc(fields[name])
        if now != want:
            found.append((name, now, want))
    return found


def rewrite(pair: Pair) -> bool:
    """Write the expected docstrings into the Args module; True when the file changed."""
    path = pair.args_path()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = described_fields(pair.spec())
    edits: list[tuple[int, int, list[str]]] = []  # (first line index, end index exclusive, new lines)
    for name, annotation, doc in _fields(ast.parse("".join(lines)), pair.args_name):
        if name not in fields:
            continue
        want = expected_doc(fields[name])
        indent = lines[annotation.lineno - 1][: annotation.col_offset]
        new = _docstring_lines(want, indent) if want else []
        if doc is not None:
            edits.append((doc.lineno - 1, doc.end_lineno or doc.lineno, new))
        else:
            end = annotation.end_lineno or annotation.lineno
            edits.append((end, end, new))
    before = "".join(lines)
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    after = "".join(lines)
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report differences instead of rewriting")
    args = parser.parse_args(argv)
    if args.check:
        problems = [(pair, diff) for pair in pairs() for diff in differences(pair)]
        for pair, (field, now, want) in problems:
            print(f"{pair.args_module}.{pair.args_name}.{field}: {now!r} should be {want!r}")
        return 1 if problems else 0
    changed = [str(pair.args_path()) for pair in pairs() if rewrite(pair)]
    print("\n".join(sorted(set(changed))) or "Args docstrings are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
