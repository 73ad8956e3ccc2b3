"""The decision layer is pure: it imports no provider SDK, and it is found, not listed.

Decisions must be testable, importable by the policy pack and reusable without Pulumi's engine, so a
decision module that pulls in pulumi, pulumi_gcp or pulumi_kubernetes (even for a regex, even through
another module) fails here. The modules are found by walking `components/tpu_stacks`:

- every `spec`, `plan` and `*_plan` module, at any depth (each workload's, the cluster's, monitoring's,
  the smoke test's);
- the catalogue package;
- the top-level modules (sizing, names, errors, ...) and the packages of shared rules (serving/, inputs/,
  objects/),
  except the builders, which use the SDK (they declare resources, or mock them for tests);
- the connectivity contract: `k8s.connectivity` and the k8s modules that state flows with it and
  declare nothing (they import no SDK themselves; the probe holds them to that through their imports);
- and everything those import from the package, wherever the import stands (what a decision imports
  is part of the decision: an import inside a function still runs when the decision does).

Each module is held to what its own imports load, so one module's imports cannot hide another's: one interpreter
imports the modules one after another and records what each adds; while none has added an SDK module, what the
next one adds is exactly what it loads alone (what the earlier ones loaded holds no SDK module, so it cannot hide
one). Once one has, the rest are each imported in a fresh interpreter. (A hand-kept list missed
gcp/monitoring/plan.py loading pulumi_kubernetes through a workload's pods.) One interpreter for the ninety-odd
modules instead of one each saves about a minute of CPU in `make test`.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.module_tree import PACKAGE, imports, modules

SDKS = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")
DECISION_STEMS = ("spec", "plan")
CATALOGUE = "catalog"
CONTRACT = "k8s.connectivity"
SHARED = frozenset({"serving", "inputs", "objects"})
"""Packages of shared rules, as decision-layer as the top-level modules they were."""
BUILDERS = frozenset({"plugin", "testing", "workload"})
"""Top-level modules that work with the SDK and decide nothing: the plugin registration, every workload's
foundation, and the mocks for users' unit tests (a `pulumi.runtime.Mocks`)."""


def _top(name: str) -> str:
    return name.split(".", 1)[1] if "." in name else ""


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _imports_an_sdk(path: Path, package: Path) -> bool:
    return any(n.split(".")[0] in SDKS for statement in imports(path, package) for n in statement.names)


def decision_modules(package: Path = PACKAGE) -> list[str]:
    """The decision layer of `package`, found by the rules in this module's docstring."""
    tree = modules(package)
    contract = f"{package.name}.{CONTRACT}"
    roots = set()
    for name, path in tree.items():
        inner = _top(name)
        stem = _stem(name)
        if stem in DECISION_STEMS or stem.endswith("_plan"):
            roots.add(name)
        elif inner == CATALOGUE or inner.startswith(f"{CATALOGUE}."):
            roots.add(name)
        elif inner and "." not in inner and path.name != "__init__.py" and inner not in BUILDERS:
            roots.add(name)
        elif inner.split(".")[0] in SHARED and path.name != "__init__.py":
            roots.add(name)
        elif name == contract or (
            inner.startswith("k8s.")
            and any(contract in statement.names for statement in imports(path, package))
            and not _imports_an_sdk(path, package)
        ):
            roots.add(name)
    found, todo = set(), sorted(roots)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for statement in imports(tree[name], package):
            todo.extend(n for n in statement.names if n in tree and n not in found)
    return sorted(found)


def loaded_sdks(module: str, path: Path | None = None) -> list[str]:
    """The SDK modules a fresh interpreter holds after importing `module` (with `path` first on sys.path)."""
    probe = (
        f"import json, sys; sys.path[:0] = {[str(path)] if path else []!r}; import {module};"
        f" print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {SDKS!r})))"
    )
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def clean_prefix(modules: list[str], path: Path | None = None) -> list[str]:
    """`modules` imported in order in one fresh interpreter (with `path` first on sys.path) until one adds an SDK
    module: those before it, each of which loads no SDK module alone (see the module docstring)."""
    probe = textwrap.dedent(
        f"""
        import importlib, json, sys
        sys.path[:0] = {[str(path)] if path else []!r}
        clean = []
        for module in {modules!r}:
            importlib.import_module(module)
            if any(m.split('.')[0] in {SDKS!r} for m in sys.modules):
                break
            clean.append(module)
        print(json.dumps(clean))
        """
    )
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


@functools.cache
def _clean_in_sequence() -> frozenset[str]:
    return frozenset(clean_prefix(decision_modules()))


def test_the_shared_interpreter_stops_at_the_first_module_that_loads_an_sdk(tmp_path: Path) -> None:
    """No blind spot: a module that imports an SDK is not clean, nor is any module after it (each of those is
    then probed in a fresh interpreter of its own)."""
    for name, text in {"pure_a": "X = 1\n", "impure_b": "import pulumi\n", "pure_c": "Y = 2\n"}.items():
        (tmp_path / f"{name}.py").write_text(text)
    assert clean_prefix(["pure_a", "impure_b", "pure_c"], tmp_path) == ["pure_a"]
    assert clean_prefix(["pure_a", "pure_c"], tmp_path) == ["pure_a", "pure_c"]


@pytest.mark.parametrize("module", decision_modules())
def test_decision_module_loads_no_provider_sdk(module: str) -> None:
    loaded = [] if module in _clean_in_sequence() else loaded_sdks(module)
    assert loaded == [], f"{module} loads {loaded[:5]}: move what needs the SDK into a component"


def test_the_walk_finds_the_decision_layer() -> None:
    """Every kind the rules name is found on the real tree (so the parametrized test is not vacuous),
    and no builder is."""
    found = set(decision_modules())
    workloads = {"vllm", "saxml", "jetstream", "raytrain"}
    expected = {f"tpu_stacks.{w}.{part}" for w in {*workloads, "cluster"} for part in ("spec", "plan")} | {
        "tpu_stacks.gcp.monitoring.plan",
        "tpu_stacks.gcp.monitoring.spec",
        "tpu_stacks.serving.smoke_plan",
        "tpu_stacks.catalog.tpu",
        "tpu_stacks.catalog.engines",
        "tpu_stacks.sizing",
        "tpu_stacks.inputs.field_rules",
        "tpu_stacks.inputs.validation",
        "tpu_stacks.names",
        "tpu_stacks.errors",
        "tpu_stacks.serving.exposure",
        "tpu_stacks.k8s.connectivity",
        "tpu_stacks.k8s.platform_flows",
    }
    assert expected <= found, sorted(expected - found)
    assert not {name for name in found if _stem(name) in ("component", "pod", "pods") or _top(name) in BUILDERS}


def test_each_builder_imports_an_sdk() -> None:
    """An exemption that is no longer needed is removed: each builder declares resources itself."""
    tree = modules()
    for builder in BUILDERS:
        assert _imports_an_sdk(tree[f"tpu_stacks.{builder}"], PACKAGE), builder


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "toy_stacks"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return package


def test_a_new_plan_that_loads_an_sdk_through_a_helper_is_found_and_fails(tmp_path: Path) -> None:
    """Nobody lists `toy/plan.py`; it imports a helper that imports pulumi_kubernetes. The walk finds
    the plan and, through it, the helper; the probe sees the SDK in both; a pure spec passes and the
    component (a builder) is not held to it."""
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "toy/__init__.py": "",
            "toy/spec.py": "import json\n",
            "toy/helper.py": "import pulumi_kubernetes\n",
            "toy/plan.py": "from toy_stacks.toy.helper import pulumi_kubernetes\n",
            "toy/component.py": "import pulumi\n",
            "rules.py": "import re\n",
            "catalog/__init__.py": "",
            "catalog/things.py": "THINGS = ()\n",
            "k8s/__init__.py": "",
            "k8s/connectivity.py": "FLOWS = ()\n",
            "k8s/flows.py": "from toy_stacks.k8s.connectivity import FLOWS\n",
            "k8s/policy.py": "import pulumi\nfrom toy_stacks.k8s.connectivity import FLOWS\n",
            "workload.py": "import pulumi\n",
        },
    )
    found = decision_modules(package)
    assert found == [
        "toy_stacks.catalog",
        "toy_stacks.catalog.things",
        "toy_stacks.k8s.connectivity",
        "toy_stacks.k8s.flows",
        "toy_stacks.rules",
        "toy_stacks.toy.helper",
        "toy_stacks.toy.plan",
        "toy_stacks.toy.spec",
    ]
    assert "pulumi_kubernetes" in loaded_sdks("toy_stacks.toy.plan", tmp_path)
    assert "pulumi_kubernetes" in loaded_sdks("toy_stacks.toy.helper", tmp_path)
    assert loaded_sdks("toy_stacks.toy.spec", tmp_path) == []


def test_the_policy_pack_loads_no_provider_sdk() -> None:
    """The pack judges wire values with the same decision code; a provider SDK would only slow its start
    (and burden a published pack's install)."""
    probe = (
        "import json, sys; sys.path.insert(0, 'policies'); import tpu_policies;"
        " print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi_gcp', 'pulumi_kubernetes'))))"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=root)
    assert json.loads(result.stdout) == []
