"""Shared layers never import a workload.

The catalogue, the rules (field_rules, validation, names, errors, exposure, ...), k8s, gcp (with
gcp/monitoring) and the cluster serve every workload, so they take what they need as arguments: a
workload hands monitoring its `Target` (`<workload>/monitoring.py`), never the reverse. An arrow from a
shared layer into a workload makes that layer carry the workload (and its SDK imports) wherever it is
used, and makes adding a workload touch shared code.

Workloads are found, not listed (`module_tree.workloads`). Shared is every module that is not in a
workload package, except the composition roots: the modules whose job is to list the workloads.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.module_tree import PACKAGE, Import, imports, modules, workload_of, workloads

COMPOSITION_ROOTS: frozenset[str] = frozenset()
"""Modules allowed to import workloads. None since the registry (registry.py) names each workload's parts
by dotted path and the plugin registers the components from it; an entry here must really import one."""


def arrows(package: Path = PACKAGE) -> list[tuple[Import, str]]:
    """Each import in a shared module that names a workload's module, with that module's name."""
    found, tree = workloads(package), modules(package)
    result = []
    for name, path in tree.items():
        if workload_of(name, found, package) or name in COMPOSITION_ROOTS:
            continue
        for statement in imports(path, package):
            hits = [n for n in statement.names if workload_of(n, found, package)]
            if hits:  # the deepest module it loads: `a.b` of `from a.b import NAME` and of `from a import b`
                result.append((statement, max(hits, key=lambda n: (n in tree, len(n) if n in tree else 0))))
    return result


def report(found: list[tuple[Import, str]], root: Path = PACKAGE.parent) -> list[str]:
    return [f"{statement.where(root)} imports {target}" for statement, target in found]


def test_no_shared_layer_imports_a_workload() -> None:
    found = arrows()
    assert not found, f"a shared layer imports a workload (hand it what it needs instead): {report(found)}"


def crossings(package: Path = PACKAGE) -> list[tuple[Import, str]]:
    """Each import in a workload's module that names another workload's module."""
    found, tree = workloads(package), modules(package)
    result = []
    for name, path in tree.items():
        own = workload_of(name, found, package)
        if own is None:
            continue
        for statement in imports(path, package):
            others = [n for n in statement.names if workload_of(n, found, package) not in (None, own)]
            if others:
                result.append((statement, max(others, key=lambda n: (n in tree, len(n) if n in tree else 0))))
    return result


def test_no_workload_imports_another() -> None:
    """What two workloads share lives in a shared home (Ray's: `tpu_stacks/ray/`), so removing or changing one
    workload never breaks another."""
    found = crossings()
    assert not found, f"a workload imports another (move what they share to a shared home): {report(found)}"


def test_a_workload_reaching_into_another_is_reported(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "one/__init__.py": "",
            "one/spec.py": "",
            "one/component.py": "from tpu_stacks.two.spec import PORTS\nfrom tpu_stacks.one.spec import X\n",
            "two/__init__.py": "",
            "two/spec.py": "",
            "two/component.py": "",
        },
    )
    assert report(crossings(package), tmp_path) == ["tpu_stacks/one/component.py:1 imports tpu_stacks.two.spec"]


def test_the_workloads_are_found() -> None:
    """The walk sees every shipped workload (so the check above is not vacuous) and not the cluster layer."""
    assert {"vllm", "saxml", "jetstream", "raytrain"} <= set(workloads())
    assert "cluster" not in workloads()


def test_each_composition_root_lists_workloads() -> None:
    """An exemption that is no longer needed is removed, not kept."""
    found = workloads()
    for root in COMPOSITION_ROOTS:
        statements = imports(modules()[root])
        assert any(workload_of(n, found) for s in statements for n in s.names), root


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "tpu_stacks"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return package


def test_every_kind_of_import_into_a_new_workload_is_an_arrow(tmp_path: Path) -> None:
    """A workload nobody listed (`toy`: a spec and a component) is found, and a shared layer reaching it
    at module level, in a function, under TYPE_CHECKING, relatively or by `import_module` is reported
    with its file and line; the workload's own imports and imports of the cluster layer are not."""
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "toy/__init__.py": "",
            "toy/spec.py": "from tpu_stacks.k8s import tpu\n",
            "toy/component.py": "from tpu_stacks.toy.spec import X\nfrom tpu_stacks.cluster.plan import P\n",
            "cluster/__init__.py": "",
            "cluster/spec.py": "",
            "cluster/component.py": "",
            "cluster/plan.py": "",
            "k8s/__init__.py": "",
            "k8s/tpu.py": "import tpu_stacks.toy.spec\n",
            "k8s/late.py": """\
                def f():
                    from tpu_stacks.toy import spec
                    return spec
                """,
            "gcp/__init__.py": "",
            "gcp/typed.py": """\
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from tpu_stacks.toy.spec import X
                """,
            "gcp/relative.py": "from ..toy.spec import X\n",
            "gcp/dynamic.py": "import importlib\nimportlib.import_module('tpu_stacks.toy.component')\n",
            "names.py": "from tpu_stacks.cluster.plan import P\nfrom tpu_stacks import errors\n",
        },
    )
    assert workloads(package) == ("toy",)
    assert sorted(report(arrows(package), tmp_path)) == [
        "tpu_stacks/gcp/dynamic.py:2 imports tpu_stacks.toy.component",
        "tpu_stacks/gcp/relative.py:1 imports tpu_stacks.toy.spec",
        "tpu_stacks/gcp/typed.py:3 imports tpu_stacks.toy.spec",
        "tpu_stacks/k8s/late.py:2 imports tpu_stacks.toy.spec",
        "tpu_stacks/k8s/tpu.py:1 imports tpu_stacks.toy.spec",
    ]


def test_a_tree_without_arrows_passes(tmp_path: Path) -> None:
    """The other direction is the design: a workload imports the shared layers freely."""
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "toy/__init__.py": "",
            "toy/spec.py": "from tpu_stacks.gcp.targets import Target\n",
            "toy/component.py": "from tpu_stacks.toy.spec import X\n",
            "gcp/__init__.py": "",
            "gcp/targets.py": "from tpu_stacks import errors\n",
        },
    )
    assert workloads(package) == ("toy",)
    assert arrows(package) == []
