"""The package's modules and their imports, read from the source tree (not from a list kept by hand).

Two architecture tests stand on this: shared layers never import a workload (`test_shared_layers`)
and the decision layer loads no provider SDK (`test_pure_decisions`). Both find what they check by
walking `components/tpu_stacks`, so a new workload, spec or plan is checked the day it is added.
"""

from __future__ import annotations

import ast
import gc
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "components" / "tpu_stacks"

CLUSTER = "cluster"
"""The one package with a spec and a component that is not a workload: the shared layer every
workload's cluster is planned and built by."""


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """`components/tpu_stacks/vllm/spec.py` -> `tpu_stacks.vllm.spec` (a package's `__init__` is the package)."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(path, package): path for path in sorted(package.rglob("*.py"))}


def workloads(package: Path = PACKAGE) -> tuple[str, ...]:
    """The workload packages, found: a top-level package with a `spec.py` (what the user writes) and a
    `component.py` (what it builds), other than the cluster layer."""
    return tuple(
        sorted(
            child.name
            for child in package.iterdir()
            if child.is_dir()
            and child.name != CLUSTER
            and (child / "spec.py").is_file()
            and (child / "component.py").is_file()
        )
    )


def workload_of(name: str, found: tuple[str, ...], package: Path = PACKAGE) -> str | None:
    """The workload a dotted module name belongs to (`tpu_stacks.vllm.spec` -> `vllm`), if any."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == package.name and parts[1] in found else None


@dataclass(frozen=True)
class Import:
    importer: str
    """The importing module's dotted name."""
    path: Path
    line: int
    names: tuple[str, ...]
    """Every dotted name the statement may load: `from a.b import c` may load `a.b` and `a.b.c`."""

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


def _absolute(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of a relative import (`from ..k8s import tpu` in `tpu_stacks.vllm.pod`)."""
    if not level:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def parse(path: Path) -> ast.Module:
    """`ast.parse` with the garbage collector held off. CPython 3.11's AST-to-object conversion checks that its
    recursion counter ends where it began, and in one worker, after tests/vllm/test_gateway.py, a parse failed with
    "SystemError: AST constructor recursion depth mismatch" (reproduced twice with collection on, not with it off:
    a collection inside the conversion, running finalizers of objects earlier tests left, is the likely cause)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text(), filename=str(path))
    finally:
        if enabled:
            gc.enable()


def imports(path: Path, package: Path = PACKAGE) -> list[Import]:
    """Every import in a module, wherever it stands: top level, inside a function, under
    `if TYPE_CHECKING:` or `try:`, and `importlib.import_module("...")` / `__import__("...")` with a
    literal name. (`ast.walk` visits every node, so no block hides one.)"""
    importer = module_name(path, package)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(parse(path)):
        names: tuple[str, ...] = ()
        if isinstance(node, ast.Import):
            names = tuple(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(importer, is_package, node.level, node.module)
            names = (base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*"))
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            names = tuple(
                arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
        if names:
            found.append(Import(importer=importer, path=path, line=node.lineno, names=names))
    return found
