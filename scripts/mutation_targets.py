"""What `make mutation` mutates and which tests pin each module: found by walking the tree, not listed.

The targets are the decision layer as the purity walk finds it (`decision_modules` in
tests/test_pure_decisions.py: every spec and plan, the catalogue, the top-level rules, the connectivity
contract and all they import), so a new plan is measured the day it lands. Two kinds of module that
decide but live outside that walk are added: each registered workload's connectivity contract (its
`network` module, from the registry) and the policy pack's judging rules (`policies/tpu_policies`).

The tests that pin a module are the test files that import it (`import tpu_stacks.x`,
`from tpu_stacks.x import y`, anywhere in the file; `tests/live` is left out: it needs a cluster), and
those of the plans of its own package that import it. A file imports what a helper module of tests/ it
imports does, but from another test file only what the definitions it takes need: tests/test_registry.py
calls one test of tests/traffic/test_engine_traffic.py, which reads the engine records, not
traffic/model.py, though that file imports it (pytest collects a test function imported at module level
again: what that test uses is reached). A plan builds and reads its package's records, spec and rules,
so its tests pin them without naming them: cluster/plan.py's for cluster/decided.py (0 of 55 mutants
killed by tests/test_first_up.py, the one file that imported it then). A module no file reaches so is
pinned by the tests of the decision modules that import it, nearest first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

POLICY_RULES = ("fit", "matching", "ray_serve")
"""The policy pack's modules that judge a wire value with the decision layer's rules (the pack's other
modules register policies and format messages)."""

WORKLOAD_NETWORK_TESTS = ["tests/test_workload_networks.py"]
"""Every workload's connectivity contract is tested there, with the shared flows it composes (through
the registry, so no test file imports a workload's network module by name)."""

LEFT_OUT = ("live",)
"""Test folders a mutation run never uses: tests/live talks to a real cluster."""


def _helper_path(root: Path, name: str) -> Path | None:
    """A module of tests/ (`tests.policies.harness`, `tests.vllm.test_plan`) as a file, if `name` is one."""
    if not name.startswith("tests."):
        return None
    parts = name.split(".")
    for path in (root.joinpath(*parts[:-1], f"{parts[-1]}.py"), root.joinpath(*parts, "__init__.py")):
        if path.is_file():
            return path
    return None


def _is_test_file(path: Path) -> bool:
    """A file pytest collects (`test_*.py`), as against a helper module of tests/ (mocks.py, harness.py)."""
    return path.name.startswith("test_")


Binding = tuple[str, "str | None", str]
"""What one import gives a file: (module, the name taken from it or None for the module itself, the local name)."""


@dataclass
class _Facts:
    """What one statement of a file holds, read in one walk: the imports in it, the names it refers to (a function's
    parameters too: pytest passes fixtures by name), the names it assigns, and per name the attributes read from it
    (None when the name is also used bare, so all of it may be)."""

    bindings: list[Binding] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    stored: set[str] = field(default_factory=set)
    attributes: dict[str, set[str] | None] = field(default_factory=dict)

    @classmethod
    def of(cls, statement: ast.AST) -> _Facts:
        facts, bases = cls(), set()
        for node in ast.walk(statement):  # breadth first: an attribute is met before the name it is read from
            kind = type(node)
            if kind is ast.Name:
                facts.names.add(node.id)
                if type(node.ctx) is ast.Store:
                    facts.stored.add(node.id)
                if id(node) not in bases:
                    facts.attributes[node.id] = None
            elif kind is ast.Attribute and type(node.value) is ast.Name:
                bases.add(id(node.value))
                read = facts.attributes.setdefault(node.value.id, set())
                if read is not None:
                    read.add(node.attr)
            elif kind is ast.arg:
                facts.names.add(node.arg)
            elif kind is ast.Import:
                facts.bindings += [(a.name, None, a.asname or a.name.split(".")[0]) for a in node.names]
            elif kind is ast.ImportFrom and node.module and not node.level:
                facts.bindings += [(node.module, a.name, a.asname or a.name) for a in node.names]
        return facts


def _attributes(facts: list[_Facts], local: str) -> set[str] | None:
    """The attributes the statements read from `local` (None: all of it may be)."""
    out: set[str] = set()
    for fact in facts:
        read = fact.attributes.get(local, set())
        if read is None:
            return None
        out |= read
    return out


class _TestsTree:
    """What a test file reaches through the modules of tests/ it imports (`test_imports`)."""

    def __init__(self, root: Path):
        self.root = root
        self.files: dict[Path, list[tuple[ast.stmt, _Facts]]] = {}
        self.tops: dict[Path, tuple[dict[str, list[_Facts]], dict[str, list[Binding]]]] = {}
        self.memo: dict[tuple[Path, frozenset[str] | None], set[str]] = {}

    def _file(self, path: Path) -> list[tuple[ast.stmt, _Facts]]:
        if path not in self.files:
            tree = ast.parse(path.read_text(), filename=str(path))
            self.files[path] = [(statement, _Facts.of(statement)) for statement in tree.body]
        return self.files[path]

    def _top(self, path: Path) -> tuple[dict[str, list[_Facts]], dict[str, list[Binding]]]:
        """A file's top-level definitions (function, class, assignment) and import bindings, by local name."""
        if path not in self.tops:
            defined: dict[str, list[_Facts]] = {}
            bound: dict[str, list[Binding]] = {}
            for statement, facts in self._file(path):
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defined.setdefault(statement.name, []).append(facts)
                    continue
                for binding in facts.bindings:
                    bound.setdefault(binding[2], []).append(binding)
                for name in facts.stored:
                    defined.setdefault(name, []).append(facts)
            self.tops[path] = (defined, bound)
        return self.tops[path]

    def reach(self, path: Path, used: frozenset[str] | None = None) -> set[str]:
        """The dotted names `path` imports, all of the file (`used` None) or only what the top-level definitions
        named in `used` need (their bodies, defaults and decorators, the definitions and imports those name)."""
        key = (path, used)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = set()  # a cycle of test files importing each other adds nothing the first pass lacks
        if used is None:
            facts = [f for _, f in self._file(path)]
            taken = [binding for f in facts for binding in f.bindings]
        else:
            defined, bound = self._top(path)
            facts, taken, todo, seen = [], [], sorted(used), set()
            while todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                taken.extend(bound.get(name, []))
                for fact in defined.get(name, []):
                    facts.append(fact)
                    taken.extend(fact.bindings)
                    todo.extend(sorted(fact.names - seen))
        out: set[str] = set()
        for module, name, local in taken:
            out |= {module, f"{module}.{name}"} if name else {module}  # `name` may be a module or a name in it
            if name is None:
                # `import tests.a.test_b` binds `tests`: its attributes do not tell what is read from test_b
                whole = "." in module and local == module.split(".")[0]
                out |= self._through(module, None, None if whole else local, facts)
            else:
                out |= self._through(module, name, None, facts)
                out |= self._through(f"{module}.{name}", None, local, facts)
        self.memo[key] = out
        return out

    def _through(self, module: str, name: str | None, local: str | None, facts: list[_Facts]) -> set[str]:
        """What importing `name` from a module of tests/ (or the module itself, bound to `local`: what `facts` read
        of it; all of it when `local` is None) reaches: all of a helper module; of another test file, only the
        definitions taken from it."""
        path = _helper_path(self.root, module)
        if path is None:
            return set()
        if not _is_test_file(path) or name == "*":
            return self.reach(path)
        if name is not None:
            return self.reach(path, frozenset({name}))
        read = None if local is None else _attributes(facts, local)
        return self.reach(path, None if read is None else frozenset(read))


def test_imports(root: Path = REPO) -> dict[str, set[str]]:
    """Each test file (relative path) -> the dotted names it imports, itself or through the modules of tests/ it
    imports: all that a helper module imports (a policy test reaches the pack through tests/policies/harness.py),
    but from another test file only what the definitions it takes from it need."""
    tests = root / "tests"
    tree = _TestsTree(root)
    return {
        str(path.relative_to(root)): tree.reach(path)
        for path in sorted(tests.rglob("test_*.py"))
        if not set(path.relative_to(tests).parts[:-1]) & set(LEFT_OUT)
    }


def pinning_tests(
    module: str,
    tests: dict[str, set[str]],
    importers: dict[str, set[str]],
    seen: frozenset[str] = frozenset(),
    packages: frozenset[str] = frozenset(),
) -> list[str]:
    """The test files that import `module` or a package that re-exports it (`packages`: those whose `__init__`
    imports it, `from tpu_stacks.traffic import evaluate_slice`); if none, those of the modules that import it
    (recursively)."""
    direct = sorted(test for test, names in tests.items() if names & {module, *packages})
    if direct:
        return direct
    found: set[str] = set()
    for parent in sorted(importers.get(module, set()) - seen - {module}):
        found |= set(pinning_tests(parent, tests, importers, seen | {module}))
    return sorted(found)


def _packages(module: str, importers: dict[str, set[str]], is_package: dict[str, bool]) -> frozenset[str]:
    """The packages whose `__init__` imports `module`, directly or through another such package."""
    found: set[str] = set()
    todo = [module]
    while todo:
        for parent in importers.get(todo.pop(), set()):
            if is_package.get(parent) and parent not in found:
                found.add(parent)
                todo.append(parent)
    return frozenset(found)


def is_plan(module: str) -> bool:
    """A plan (`plan`, `*_plan`): a package's decision, which builds and reads the package's other modules."""
    stem = module.rsplit(".", 1)[-1]
    return stem == "plan" or stem.endswith("_plan")


def package_plans(module: str, importers: dict[str, set[str]], is_package: dict[str, bool]) -> list[str]:
    """The plans of `module`'s own package that import it (cluster/plan.py for cluster/decided.py): their tests pin
    the records, spec and rules the plan builds and reads, though they need not import them."""
    package = module if is_package.get(module) else module.rpartition(".")[0]
    return sorted(
        parent
        for parent in importers.get(module, set())
        if is_plan(parent) and not is_package.get(parent) and parent.rpartition(".")[0] == package
    )


def source_of(root: Path, dotted: str, package_dir: Path) -> str:
    """`tpu_stacks.vllm.plan` -> `components/tpu_stacks/vllm/plan.py` (a package: its `__init__.py`)."""
    parts = dotted.split(".")[1:]
    path = package_dir.joinpath(*parts[:-1], f"{parts[-1]}.py") if parts else package_dir / "__init__.py"
    if not path.is_file():
        path = package_dir.joinpath(*parts, "__init__.py")
    return str(path.relative_to(root))


def decision_layer(package_dir: Path) -> list[str]:
    """The purity walk's decision layer (defined once, where the purity test states its rules)."""
    from tests.test_pure_decisions import decision_modules

    return decision_modules(package_dir)


def _importers(modules: Iterable[str], package_dir: Path) -> dict[str, set[str]]:
    from tests.module_tree import imports
    from tests.module_tree import modules as tree_modules

    tree = tree_modules(package_dir)
    chosen = set(modules)
    out: dict[str, set[str]] = {}
    for name in chosen:
        for statement in imports(tree[name], package_dir):
            for imported in statement.names:
                if imported in chosen and imported != name:
                    out.setdefault(imported, set()).add(name)
    return out


def targets(root: Path = REPO, package_dir: Path | None = None, networks: Iterable[str] = ()) -> dict[str, list[str]]:
    """Every mutation target (path relative to `root`) -> the test files that pin it.

    `networks` are extra dotted modules of the package (the workloads' connectivity contracts), pinned
    by `WORKLOAD_NETWORK_TESTS` as well as by any test importing them."""
    package_dir = package_dir or root / "components" / "tpu_stacks"
    tests = test_imports(root)
    layer = decision_layer(package_dir)
    importers = _importers(layer, package_dir)
    is_package = {m: source_of(root, m, package_dir).endswith("__init__.py") for m in layer}
    own = {m: pinning_tests(m, tests, importers, packages=_packages(m, importers, is_package)) for m in layer}
    out = {
        source_of(root, m, package_dir): sorted(
            {*own[m], *(test for plan in package_plans(m, importers, is_package) for test in own[plan])}
        )
        for m in layer
    }
    for network in networks:
        found = pinning_tests(network, tests, {})
        out[source_of(root, network, package_dir)] = sorted({*found, *WORKLOAD_NETWORK_TESTS})
    pack = root / "policies" / "tpu_policies"
    for rule in POLICY_RULES:
        if (pack / f"{rule}.py").is_file():  # the pack's package registers every rule: its tests reach each
            name = f"tpu_policies.{rule}"
            found = {test for test, names in tests.items() if name in names or "tpu_policies" in names}
            out[f"policies/tpu_policies/{rule}.py"] = sorted(found)
    return out
