"""Shared code never branches on a workload's or an engine's name: it asks (issue 34, capabilities on the descriptor).

What a shared layer needs of a workload is declared by the workload and asked for: its descriptor's capabilities
(registry.py `Workload`: the dashboard sections, status cards and alerts monitoring draws,
gcp/monitoring/capabilities.py; the smoke answer it gives) and its monitoring target's fields (`serving`,
`step_log`); what differs between engines is on the engine's catalogue record (catalog/engines.py: arguments,
command markers, serve or train; catalog/engine_traffic.py: KV cache, builds, efficiency). A branch on a name
(`t.kind == "raytrain"`, `engine.engine == "vllm"`) makes every new workload or engine edit shared code and leaves it
out silently where nobody did.

The scan reads every shared module (the library outside the workload packages, found as tests/module_tree.py finds
them, and the policy pack) for a workload's or engine's name in
- a comparison (`t.kind == "vllm"`, `kind != "raytrain"`, `kind in ("vllm", "jetstream")`, or `in` a module
  constant that holds such names),
- a dict's keys (`{"vllm": vllm_sections, ...}`, the table monitoring had),
- a `match` case (`case "saxml":`),
- `.startswith(...)` / `.endswith(...)`.
The catalogue is data and names engines by design (`catalog/`), so it is not scanned. One rule, one scan: it
replaces the two a parallel change had written (monitoring's and the policy pack's).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pytest

from tests.module_tree import PACKAGE, modules, workload_of, workloads
from tpu_stacks import registry
from tpu_stacks.catalog.engines import ENGINES
from tpu_stacks.catalog.engines.record import Engine, EngineName
from tpu_stacks.gcp.monitoring import capabilities
from tpu_stacks.gcp.monitoring.targets import Target

DATA = ("catalog",)
"""Shared packages that are data, not decisions: they name what they describe."""
PENDING: tuple[str, ...] = ()
"""Shared packages whose branches on a name a change in flight removes: an entry here is a debt with a name, and
the check below fails when an entry is no longer needed."""
POLICIES = Path(__file__).resolve().parents[1] / "policies" / "tpu_policies"
"""The policy pack: shared code too (it judges every workload's objects)."""
NAMES = frozenset(registry.names()) | {e.engine for e in ENGINES} | set(get_args(Engine)) | set(get_args(EngineName))
"""Every workload the registry lists and every engine the catalogue and the sizing model name."""


@dataclass(frozen=True)
class Branch:
    path: Path
    line: int
    name: str
    code: str

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line} branches on {self.name!r}: {self.code}"


def _named(node: ast.expr | None, names: frozenset[str]) -> str | None:
    """The workload name a constant (or a tuple, list or set of constants) spells, if any."""
    if isinstance(node, ast.Constant) and node.value in names:
        return str(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return next((found for element in node.elts if (found := _named(element, names))), None)
    return None


def _constants(tree: ast.Module, names: frozenset[str]) -> dict[str, str]:
    """Module-level names bound to a literal collection of `names` (`ENGINES = ("vllm", ...)`), with one it holds."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if isinstance(value, (ast.Tuple, ast.List, ast.Set)) and (held := _named(value, names)):
            found.update({t.id: held for t in targets if isinstance(t, ast.Name)})
    return found


def branches_in(source: str, names: frozenset[str]) -> list[tuple[int, str, str]]:
    """(line, name, code) of each branch on one of `names` in `source`."""
    found = []
    tree = ast.parse(source)
    constants = _constants(tree, names)
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Compare):
            name = next((n for part in (node.left, *node.comparators) if (n := _named(part, names))), None)
            if name is None and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                held = (constants.get(p.id) for p in node.comparators if isinstance(p, ast.Name))
                name = next((n for n in held if n), None)
        elif isinstance(node, ast.Dict):
            name = next((n for key in node.keys if (n := _named(key, names))), None)
        elif isinstance(node, ast.match_case):
            name = next(
                (n for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue) and (n := _named(p.value, names))),
                None,
            )
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("startswith", "endswith"):
                name = next((n for arg in node.args if (n := _named(arg, names))), None)
        if name is not None:
            at = node.pattern if isinstance(node, ast.match_case) else node  # a case has no line of its own
            found.append((at.lineno, name, ast.unparse(at)[:80]))
    return sorted(found)


def shared_modules(package: Path = PACKAGE, skip: tuple[str, ...] = DATA + PENDING) -> dict[str, Path]:
    """Every module outside the workload packages and the `skip` packages."""
    found = workloads(package)
    return {
        name: path
        for name, path in modules(package).items()
        if not workload_of(name, found, package) and name.partition(".")[2].split(".")[0] not in skip
    }


def branches(names: frozenset[str], package: Path = PACKAGE, skip: tuple[str, ...] = DATA + PENDING) -> list[Branch]:
    return [
        Branch(path, line, name, code)
        for path in shared_modules(package, skip).values()
        for line, name, code in branches_in(path.read_text(), names)
    ]


def test_no_shared_module_branches_on_a_workloads_or_engines_name() -> None:
    assert NAMES >= {"vllm", "jetstream", "saxml", "raytrain", "maxtext", "generic"}  # the scan looks for real names
    found = [b.where(PACKAGE.parent) for b in branches(NAMES)]
    assert found == [], f"shared code branches on a name (ask the descriptor, target or engine record): {found}"


def test_the_policy_pack_branches_on_no_name() -> None:
    files = sorted(POLICIES.rglob("*.py"))
    assert {"engine_args.py", "slo.py", "fit.py"} <= {f.name for f in files}
    found = [
        f"{path.relative_to(POLICIES.parent)}:{line} branches on {name!r}: {code}"
        for path in files
        for line, name, code in branches_in(path.read_text(), NAMES)
    ]
    assert found == [], f"the pack branches on a name (declare it on the engine's record): {found}"


def test_the_scan_covers_shared_monitoring() -> None:
    scanned = shared_modules()
    assert {"tpu_stacks.gcp.monitoring.dashboards", "tpu_stacks.gcp.monitoring.alerts"} <= set(scanned)
    assert "tpu_stacks.gcp.monitoring.plan" in scanned and "tpu_stacks.registry" in scanned
    assert not any(workload_of(name, workloads()) for name in scanned)


def test_each_pending_package_still_branches() -> None:
    """An exemption that is no longer needed is removed, not kept."""
    for package in PENDING:
        assert branches(NAMES, skip=tuple(p for p in DATA + PENDING if p != package)), package


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if t.kind == "raytrain":\n    pass\n', (1, "raytrain", "t.kind == 'raytrain'")),
        ('serving = t.kind != "raytrain"\n', (1, "raytrain", "t.kind != 'raytrain'")),
        ('ok = kind in ("vllm", "jetstream")\n', (1, "vllm", "kind in ('vllm', 'jetstream')")),
        ('SECTIONS = {"saxml": f}\n', (1, "saxml", "{'saxml': f}")),
        ('match t.kind:\n    case "jetstream":\n        pass\n', (2, "jetstream", "'jetstream'")),
        ('vllm_like = t.kind.startswith("vllm")\n', (1, "vllm", "t.kind.startswith('vllm')")),
        ('TRAFFIC = ("vllm", "jetstream")\nok = e in TRAFFIC\n', (2, "vllm", "e in TRAFFIC")),
        ('x = a if b != "jetstream" else c\n', (1, "jetstream", "b != 'jetstream'")),
    ],
)
def test_the_scan_finds_each_shape_of_branch(source: str, expected: tuple[int, str, str]) -> None:
    assert branches_in(source, frozenset({"vllm", "jetstream", "saxml", "raytrain"})) == [expected]


def test_the_scan_leaves_names_that_do_not_branch() -> None:
    """A name used as data (a label, a resource name) or a workload's own module is no branch."""
    source = textwrap.dedent(
        """
        labels = {"tpu-stacks": "", t.kind: ""}
        name = f"{t.kind}-pod-monitoring"
        if t.serving and t.step_log is None:
            pass
        """
    )
    assert branches_in(source, frozenset({"vllm", "raytrain"})) == []
    lookups = (
        'def f(engine):\n    if engine not in EFFICIENCY:\n        return lookup("ray")\n    return engine == "auto"\n'
    )
    assert branches_in(lookups, frozenset({"vllm", "ray"})) == []


def test_a_branch_in_a_shared_module_is_reported_and_a_workloads_own_is_not(tmp_path: Path) -> None:
    package = tmp_path / "tpu_stacks"
    files = {
        "__init__.py": "",
        "gcp/__init__.py": "",
        "gcp/alerts.py": 'def f(t):\n    return t.kind == "toy"\n',
        "catalog/__init__.py": "",
        "catalog/engines.py": 'TOY = {"toy": 1}\n',
        "toy/__init__.py": "",
        "toy/spec.py": "",
        "toy/component.py": 'KIND = "toy"\nSAME = KIND == "toy"\n',
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    found = [b.where(tmp_path) for b in branches(frozenset({"toy"}), package, skip=DATA)]
    assert found == ["tpu_stacks/gcp/alerts.py:2 branches on 'toy': t.kind == 'toy'"]


def test_a_target_naming_no_registered_workload_is_refused_by_name() -> None:
    from tpu_stacks.gcp.monitoring.queries import Scope
    from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
    from tpu_stacks.saxml.engine import SAXML

    target = Target(
        kind="nobody",
        title="a stray target",
        project="p",
        universe="googleapis.com",
        location="us-central2",
        scope=Scope(cluster="c", namespace="n"),
        engine=SAXML,
        monitoring=MonitoringSpec(),
        tpu_containers=("c",),
    )
    with pytest.raises(ValueError, match="names workload 'nobody', which is not registered"):
        capabilities.sections(target)
