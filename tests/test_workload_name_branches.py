"""Shared code never branches on a workload's name: it asks the workload (issue 34, capabilities on the descriptor).

What a shared layer needs of a workload is declared by the workload and asked for: its descriptor's capabilities
(registry.py `Workload`: the dashboard sections, status cards and alerts monitoring draws,
gcp/monitoring/capabilities.py) and its monitoring target's fields (`serving`, `step_log`). A branch on the name
(`t.kind == "raytrain"`) makes every new workload edit shared code and leaves it out silently where nobody did.

The scan reads every shared module (outside the workload packages, found as tests/module_tree.py finds them) for
the registry's names in
- a comparison (`t.kind == "vllm"`, `kind != "raytrain"`, `kind in ("vllm", "jetstream")`),
- a dict's keys (`{"vllm": vllm_sections, ...}`, the table monitoring had),
- a `match` case (`case "saxml":`),
- `.startswith(...)` / `.endswith(...)`.
The engine catalogue is data and names engines by design (`catalog/`), so it is not scanned.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.module_tree import PACKAGE, modules, workload_of, workloads
from tpu_stacks import registry
from tpu_stacks.gcp.monitoring import capabilities
from tpu_stacks.gcp.monitoring.targets import Target

DATA = ("catalog",)
"""Shared packages that are data, not decisions: they name what they describe."""
PENDING = ("traffic",)
"""Shared packages whose branches on a name another change removes (the traffic model's engine tables, owned by
a parallel change to components/tpu_stacks/traffic/): drop the entry once that lands; the check below fails when
an entry is no longer needed."""


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


def branches_in(source: str, names: frozenset[str]) -> list[tuple[int, str, str]]:
    """(line, name, code) of each branch on one of `names` in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Compare):
            name = next((n for part in (node.left, *node.comparators) if (n := _named(part, names))), None)
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


def test_no_shared_module_branches_on_a_workloads_name() -> None:
    names = frozenset(registry.names())
    assert names >= {"vllm", "jetstream", "saxml", "raytrain"}  # the scan looks for real names
    found = [b.where(PACKAGE.parent) for b in branches(names)]
    assert found == [], f"shared code branches on a workload's name (ask its descriptor or target): {found}"


def test_the_scan_covers_shared_monitoring() -> None:
    scanned = shared_modules()
    assert {"tpu_stacks.gcp.monitoring.dashboards", "tpu_stacks.gcp.monitoring.alerts"} <= set(scanned)
    assert "tpu_stacks.gcp.monitoring.plan" in scanned and "tpu_stacks.registry" in scanned
    assert not any(workload_of(name, workloads()) for name in scanned)


def test_each_pending_package_still_branches() -> None:
    """An exemption that is no longer needed is removed, not kept."""
    names = frozenset(registry.names())
    for package in PENDING:
        assert branches(names, skip=tuple(p for p in DATA + PENDING if p != package)), package


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if t.kind == "raytrain":\n    pass\n', (1, "raytrain", "t.kind == 'raytrain'")),
        ('serving = t.kind != "raytrain"\n', (1, "raytrain", "t.kind != 'raytrain'")),
        ('ok = kind in ("vllm", "jetstream")\n', (1, "vllm", "kind in ('vllm', 'jetstream')")),
        ('SECTIONS = {"saxml": f}\n', (1, "saxml", "{'saxml': f}")),
        ('match t.kind:\n    case "jetstream":\n        pass\n', (2, "jetstream", "'jetstream'")),
        ('vllm_like = t.kind.startswith("vllm")\n', (1, "vllm", "t.kind.startswith('vllm')")),
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
    from tpu_stacks.catalog.engines import SAXML
    from tpu_stacks.gcp.monitoring.queries import Scope
    from tpu_stacks.gcp.monitoring.spec import MonitoringSpec

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
