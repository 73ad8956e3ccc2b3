"""`make test` is the quick, offline loop; `make test-network` runs the rest of tests/; together, the whole suite.

The split is the pytest marker `network` (pytest.ini). `make test` selects `-m "not network"` and
`make test-network` `-m network`, over the same `tests` folder with no other selection, so each test is in
exactly one of them: nothing is dropped. The marker has to be on the right tests, and it is read from the
source, not kept as a list: a test *reaches the network* when it, a function it calls (in its module or
imported from `tests.*`), or a fixture it takes runs pip (a list holding "-m", "pip" in a row, outside a
comparison: an expected command in an assert is not a run). Such a test must be marked, and a marked test
must be one of them (a marker on an offline test would hide it from the quick loop for nothing).
Creating a venv alone is not network (`ensurepip` installs the pip wheel Python bundles); neither is
`make venv/.installed` under `PIP_NO_INDEX=1` (tests/scripts/test_check_python.py).
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
MARK = "pytest.mark.network"


@dataclass
class Function:
    """A top-level function of a module under tests/: what it calls and takes, and whether it runs pip."""

    module: str
    name: str
    runs_pip: bool
    calls: set[tuple[str, str]] = field(default_factory=set)
    params: set[str] = field(default_factory=set)
    marked: bool = False
    fixture: bool = False


def _module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root.parent).with_suffix("").parts)


def _runs_pip(function: ast.AST) -> bool:
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(function):
        if not isinstance(node, (ast.List, ast.Tuple)):
            continue
        words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
        if not any(words[i : i + 2] == ["-m", "pip"] for i in range(len(words) - 1)):
            continue
        up = node
        while up in parents and not isinstance(up, ast.Compare):
            up = parents[up]
        if not isinstance(up, ast.Compare):
            return True
    return False


def _is_mark(decorator: ast.expr) -> bool:
    text = ast.unparse(decorator)
    return text == MARK or text.startswith(MARK + "(")


def index(root: Path = TESTS) -> dict[tuple[str, str], Function]:
    """Every top-level function of every module under `root`, keyed by (dotted module, name)."""
    found: dict[tuple[str, str], Function] = {}
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported: dict[str, tuple[str, str]] = {}
        module_marked = False
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == root.name:
                imported.update({a.asname or a.name: (node.module, a.name) for a in node.names})
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
                module_marked = MARK in ast.unparse(node.value)
        local = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            called = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            calls = {(module, n) for n in called & local} | {imported[n] for n in called if n in imported}
            found[(module, node.name)] = Function(
                module=module,
                name=node.name,
                runs_pip=_runs_pip(node),
                calls=calls,
                params={a.arg for a in node.args.args + node.args.kwonlyargs},
                marked=module_marked or any(_is_mark(d) for d in node.decorator_list),
                fixture=any("fixture" in ast.unparse(d) for d in node.decorator_list),
            )
    return found


def _is_test(f: Function) -> bool:
    return f.name.startswith("test") and f.module.rsplit(".", 1)[-1].startswith("test_")


def _takes_fixtures(f: Function) -> set[str]:
    """The parameters pytest fills with fixtures: a test's or a fixture's (a helper's `nca` is an argument)."""
    return f.params if f.fixture or _is_test(f) else set()


def reaching(functions: dict[tuple[str, str], Function]) -> set[tuple[str, str]]:
    """The functions that run pip themselves, through a call, or through a fixture they take (by name)."""
    reach = {key for key, f in functions.items() if f.runs_pip}
    while True:
        fixtures = {f.name for key, f in functions.items() if f.fixture and key in reach}
        more = {key for key, f in functions.items() if f.calls & reach or _takes_fixtures(f) & fixtures} - reach
        if not more:
            return reach
        reach |= more


def misplaced(root: Path = TESTS) -> list[str]:
    """One line per test on the wrong side of the split."""
    functions = index(root)
    reach = reaching(functions)
    found = []
    for key, f in sorted(functions.items()):
        if not _is_test(f):
            continue
        where = f"{f.module.replace('.', '/')}.py::{f.name}"
        if key in reach and not f.marked:
            found.append(f"{where}: runs pip (a fresh venv from PyPI) but is not marked network")
        elif f.marked and key not in reach:
            found.append(f"{where}: marked network but runs no pip")
    return found


def test_the_marker_is_on_exactly_the_tests_that_install_from_pypi():
    assert misplaced() == []


def test_the_split_finds_each_kind_of_network_test(tmp_path: Path):
    root = tmp_path / "tests"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "venvs.py").write_text(
        "import pytest\n"
        "def install(python):\n"
        "    return [python, '-m', 'pip', 'install', 'x']\n"
        "@pytest.fixture\n"
        "def tool():\n"
        "    return install('python')\n"
    )
    (root / "conftest.py").write_text("from tests.sub.venvs import tool\n")
    (root / "sub" / "test_a.py").write_text(
        "import pytest\n"
        "from tests.sub.venvs import install\n"
        "def _helper():\n"
        "    return install('p')\n"
        "def test_through_a_helper():\n"
        "    _helper()\n"
        "def test_through_a_fixture(tool):\n"
        "    pass\n"
        "def test_an_expected_command_only():\n"
        "    assert ['-m', 'pip', 'download'] == []\n"
        "@pytest.mark.network\n"
        "def test_marked_offline():\n"
        "    pass\n"
        "@pytest.mark.network\n"
        "def test_marked_and_direct():\n"
        "    [1, '-m', 'pip']\n"
        "def check(objects, tool):\n"
        "    return objects\n"
        "def test_a_helper_with_a_fixtures_name_as_argument():\n"
        "    check([], tool=None)\n"
    )
    (root / "sub" / "test_b.py").write_text(
        "import pytest\npytestmark = pytest.mark.network\ndef test_x(tool):\n    pass\n"
    )
    assert misplaced(root) == [
        "tests/sub/test_a.py::test_marked_offline: marked network but runs no pip",
        "tests/sub/test_a.py::test_through_a_fixture: runs pip (a fresh venv from PyPI) but is not marked network",
        "tests/sub/test_a.py::test_through_a_helper: runs pip (a fresh venv from PyPI) but is not marked network",
    ]


def _recipe(target: str) -> list[list[str]]:
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"{target}:")))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(shlex.split(line.strip()))
    return recipe


def _pytest(target: str) -> list[str]:
    (command,) = [words for words in _recipe(target) if words[1:3] == ["-m", "pytest"]]
    return command[3:]


def test_the_two_targets_select_complements_of_the_same_suite():
    quick, network = _pytest("test"), _pytest("test-network")
    assert quick == ["-q", "-n", "auto", "-m", "not network", "tests"]
    assert network == ["-q", "-n", "auto", "-m", "network", "tests"]
    # no other selection (-k, --deselect, --ignore, a narrower path) could leave a test out of both
    assert not {"-k", "--deselect", "--ignore", "--ignore-glob", "-x"} & {*quick, *network}


def test_ci_and_the_readme_run_both():
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert ci[:2] == ["make test", "make test-network"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\nmake plan .*?```", readme, re.S).group(0)
    assert [line.split()[1] for line in block.splitlines()[1:-1]] == ["plan", "test", "test-network"]
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "make test-network" in testing.split("\n## ", 1)[0]
