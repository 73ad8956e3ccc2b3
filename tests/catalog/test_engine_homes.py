"""Where an engine is declared (issue 34, "a new engine is a folder"): an engine that one workload runs is declared
in that workload's folder (`<workload>/engine.py`); an engine shared code must name lives in catalog/engines, with
the reason written there (`WHY_HERE`). The rule is stated in catalog/engines/__init__.py and docs/architecture.md.

How a record is "named by shared code": a module of the library, the policy pack, the tools or the scripts imports
the catalog/engines module that defines it, and that module is neither one of the catalogue's own tables (they collect
every engine: catalog/engines/, catalog/engine_traffic.py) nor in the folder of a workload that runs the engine
(the descriptors' `engines`)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

from tpu_stacks import registry
from tpu_stacks.catalog import engines
from tpu_stacks.catalog.engines.record import EngineVersion

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = engines.__name__
SHARED_CODE = ("components/tpu_stacks", "policies", "tools", "scripts", "stacks")
"""Where shared code lives (tests are not shared code: they may import any record)."""
TABLES = ("components/tpu_stacks/catalog/engines/", "components/tpu_stacks/catalog/engine_traffic.py")
"""The catalogue's own tables: they collect the engines, so their imports say nothing of who needs a record."""


def record_modules() -> dict[str, set[str]]:
    """Engine name -> the catalog/engines modules that define (assign, not import) one of its CATALOGUED records."""
    catalogued = {id(record): record.engine for record in engines.CATALOGUED}
    found: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(engines.__path__):
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        for name in assigned(Path(module.__file__ or "")):
            value = getattr(module, name)
            records = value if isinstance(value, tuple) else (value,)
            for record in records:
                if isinstance(record, EngineVersion) and id(record) in catalogued:
                    found.setdefault(catalogued[id(record)], set()).add(module.__name__)
    return found


def assigned(path: Path) -> set[str]:
    """The names a module binds at its top level by assignment (a record it imports is another module's)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def python_files() -> Iterator[Path]:
    for root in SHARED_CODE:
        yield from (p for p in (ROOT / root).rglob("*.py") if "egg-info" not in str(p))


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, `from package import module` counted as the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def shared_users(modules: set[str], folders: tuple[str, ...]) -> list[str]:
    """The shared files that import one of `modules`, outside the catalogue's tables and `folders`."""
    users: list[str] = []
    for path in python_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(TABLES) or relative.startswith(folders):
            continue
        if imported_modules(path) & modules:
            users.append(relative)
    return sorted(users)


def runners(engine: str) -> tuple[str, ...]:
    """The folders of the workloads whose descriptors say they run `engine`."""
    return tuple(
        f"components/tpu_stacks/{w.package.rsplit('.', 1)[-1]}/" for w in registry.workloads() if engine in w.engines
    )


def test_an_engine_only_its_workload_names_is_declared_in_that_workload_folder():
    """A CATALOGUED engine that no shared code names belongs in the folder of the workload that runs it."""
    misplaced = {
        engine: runners(engine)
        for engine, modules in record_modules().items()
        if not shared_users(modules, runners(engine))
    }
    assert misplaced == {}, (
        "these catalogued engines are named only by their workloads' folders: declare each in its workload's "
        "engine.py (an EngineDeclaration its descriptor names as `engine`), as sglang/engine.py does: "
        + "; ".join(f"{engine}: {', '.join(folders) or 'no workload runs it'}" for engine, folders in misplaced.items())
    )


def test_every_catalogued_engine_says_why_it_is_not_in_a_workload_folder():
    """The reason is written where the record is: one per catalogued engine, none for an engine that left."""
    assert set(engines.WHY_HERE) == {record.engine for record in engines.CATALOGUED}
    assert all(len(why) > 40 for why in engines.WHY_HERE.values())


def test_the_check_finds_the_shared_users_it_relies_on():
    """Not vacuous: vLLM's record is imported by the policy pack, Ray's (run by Ray Train and multi-host vLLM) by
    the pack's Ray Serve rule too, and the walk reads the workload folders it then leaves out."""
    modules = record_modules()
    assert modules["vllm"] == {f"{PACKAGE}.vllm"} and modules["epp"] == {f"{PACKAGE}.epp", f"{PACKAGE}.router"}
    assert "policies/tpu_policies/ray_serve.py" in shared_users(modules["vllm"], runners("vllm"))
    assert set(runners("ray")) == {"components/tpu_stacks/raytrain/", "components/tpu_stacks/vllm/"}
    assert "policies/tpu_policies/ray_serve.py" in shared_users(modules["ray"], runners("ray"))
    assert any(u.startswith("components/tpu_stacks/vllm/") for u in shared_users(modules["vllm"], ()))
