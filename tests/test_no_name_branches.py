"""Shared code asks an engine's record, it does not branch on the engine's name (issue 34 item 2).

The policy pack (policies/tpu_policies) and the traffic model (components/tpu_stacks/traffic) serve every
engine and workload: what differs between engines is declared with the engine (catalog/engines.py,
catalog/engine_traffic.py) and looked up. This scan fails when either compares an engine's or a workload's
name to a string literal: `==`/`!=`/`is`, `in`/`not in` a literal tuple, list or set (or a module constant
holding one), `match` cases, or `.startswith`/`.endswith` on a name. Catalogue data (a dict keyed by name,
a name passed to a lookup) is not a branch and passes.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from tpu_stacks import registry
from tpu_stacks.catalog.engines import ENGINES, EngineName
from tpu_stacks.sizing import Engine

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (ROOT / "policies" / "tpu_policies", ROOT / "components" / "tpu_stacks" / "traffic")
NAMES = frozenset(registry.names()) | {e.engine for e in ENGINES} | set(get_args(Engine)) | set(get_args(EngineName))
"""Every workload the registry lists and every engine the catalogue and the sizing model name."""


def _names_in(node: ast.AST | None) -> set[str]:
    """The catalogued names a literal holds: a string, or a tuple/list/set of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {n for element in node.elts for n in _names_in(element)}
    return set()


def _constants(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level names bound to a literal collection of catalogued names (`ENGINES = ("vllm", ...)`)."""
    found: dict[str, set[str]] = {}
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if value is None or isinstance(value, ast.Constant):
            continue
        names = _names_in(value)
        if names:
            found.update({t.id: names for t in targets if isinstance(t, ast.Name)})
    return found


def name_branches(source: str) -> list[tuple[int, str]]:
    """(line, name) of every comparison of a catalogued name in the source."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += [(node.lineno, n) for n in _names_in(operand)]
                if isinstance(operand, ast.Name) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                    found += [(node.lineno, n) for n in constants.get(operand.id, ())]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, n) for n in _names_in(node.value)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith", "__eq__", "__contains__")
        ):
            found += [(node.lineno, n) for arg in node.args for n in _names_in(arg)]
    return sorted(set(found))


def _files() -> list[Path]:
    return sorted(path for root in SCANNED for path in root.rglob("*.py"))


def test_the_scan_covers_the_pack_and_the_traffic_model():
    files = {path.relative_to(ROOT).as_posix() for path in _files()}
    assert "policies/tpu_policies/engine_args.py" in files and "policies/tpu_policies/slo.py" in files
    assert "components/tpu_stacks/traffic/model.py" in files and "components/tpu_stacks/traffic/optimizer.py" in files
    assert {"vllm", "jetstream", "maxtext", "saxml", "raytrain", "generic"} <= NAMES


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_branch_on_an_engine_or_workload_name(path: Path):
    found = name_branches(path.read_text())
    assert not found, f"{path.relative_to(ROOT)} branches on names {found}: declare it on the engine's record"


@pytest.mark.parametrize(
    "source",
    [
        'if engine.engine == "vllm":\n    pass',
        'x = a if b != "jetstream" else c',
        'ok = engine in ("vllm", "jetstream")',
        'ok = engine not in ["saxml"]',
        'TRAFFIC = ("vllm", "jetstream")\ndef f(e):\n    return e in TRAFFIC',
        'ok = any(t.endswith("vllm") for t in tokens)',
        'match engine:\n    case "maxtext":\n        pass',
        'ok = "raytrain" == workload.name',
    ],
)
def test_the_scan_finds_each_kind_of_name_branch(source: str):
    assert name_branches(source)


def test_catalogue_data_and_lookups_pass():
    source = (
        'ENGINE_EFFICIENCY = {"vllm": 0.57, "jetstream": 0.15}\n'
        "def f(engine):\n"
        "    if engine not in ENGINE_EFFICIENCY:\n"
        "        return lookup('ray')\n"
        '    return engine == "auto" or engine.startswith("--")\n'
    )
    assert name_branches(source) == []
