"""One workload lifecycle (issue 34, item 1): every registered workload's component is a `WorkloadComponent`
(components/tpu_stacks/lifecycle/component.py) that implements only the hooks.

- No constructor over 60 lines, the lifecycle's own included; a workload's only hands its typed `args` over,
  `super().__init__(name, args, opts)` (the schema inference reads that annotation), and nothing else.
- No module of a workload's package re-implements a lifecycle step: none calls what the lifecycle calls (the
  inputs' parsing, the monitoring plan, the foundation, the network policies, the smoke test, the PodMonitoring
  of the servers, the dashboard, `register_outputs`) nor initialises a ComponentResource itself.

The workloads come from the registry (tpu_stacks.registry), so a new one is held to this the day it is added.
Each check is a function of source text, shown to fail on a component that breaks it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from tpu_stacks import registry
from tpu_stacks.lifecycle import component as lifecycle
from tpu_stacks.lifecycle.component import WorkloadComponent

LONGEST_CONSTRUCTOR = 60
"""Lines of a component's `__init__`, its signature and docstring included."""
LIFECYCLE_CALLS = frozenset(
    {
        "component_inputs",
        "parse_section",
        "cluster_of",
        "plan_monitoring",
        "declare_foundation",
        "declare_network_policies",
        "smoke_test_group",
        "smoke_test_job",
        "declare_pod_monitoring",
        "declare_monitoring",
        "register_outputs",
    }
)
"""What the lifecycle calls, once for every workload (lifecycle/component.py)."""
DELEGATION = "super().__init__(name, args, opts)"
NAMES = registry.names()


def workload_modules(workload: registry.Workload) -> list[Path]:
    """Every module of the workload's package (its folder), found."""
    folder = Path(inspect.getfile(importlib.import_module(workload.package))).parent
    return sorted(folder.rglob("*.py"))


def _called(node: ast.Call) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _is_super_init(node: ast.Call) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and (
            (isinstance(func.value, ast.Call) and _called(func.value) == "super")  # super().__init__
            or (isinstance(func.value, ast.Attribute) and func.value.attr == "ComponentResource")
        )
    )


def _delegating_inits(tree: ast.Module) -> set[int]:
    """The line of each `__init__` whose body is the delegation to the lifecycle alone (a docstring aside)."""
    lines = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.name == "__init__":
            body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Expr) and ast.unparse(body[0]) == DELEGATION:
                lines.add(body[0].lineno)
    return lines


def reimplemented_steps(source: str, where: str = "<source>") -> list[str]:
    """Each call in `source` to a lifecycle step, and each ComponentResource initialised other than by the one
    delegating statement a workload's constructor is."""
    tree = ast.parse(source)
    allowed = _delegating_inits(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_super_init(node) and node.lineno not in allowed:
            found.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}(...): a component initialised by hand")
        elif _called(node) in LIFECYCLE_CALLS:
            found.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}(...) is the lifecycle's step")
    return found


def constructor_lengths(source: str) -> dict[str, int]:
    """Lines of each class's `__init__` in `source`, by class name."""
    return {
        cls.name: function.end_lineno - function.lineno + 1
        for cls in ast.walk(ast.parse(source))
        if isinstance(cls, ast.ClassDef)
        for function in cls.body
        if isinstance(function, ast.FunctionDef) and function.name == "__init__" and function.end_lineno
    }


# --- the registered workloads ----------------------------------------------------------------------------


def test_the_workloads_come_from_the_registry():
    assert NAMES, "no workload registered"


@pytest.mark.parametrize("name", NAMES)
def test_each_component_is_a_workload_component(name: str):
    component = registry.workload(name).component.load()
    assert issubclass(component, WorkloadComponent), f"{component.__name__} does not run the one lifecycle"
    assert component._workload.name == name
    assert component._token == f"tpu-stacks:index:{component.__name__}"


@pytest.mark.parametrize("name", NAMES)
def test_no_workload_module_reimplements_a_lifecycle_step(name: str):
    workload = registry.workload(name)
    found = [line for path in workload_modules(workload) for line in reimplemented_steps(path.read_text(), path.name)]
    assert not found, f"{name} re-implements the lifecycle (implement a hook instead): {found}"


@pytest.mark.parametrize("name", NAMES)
def test_each_constructor_is_at_most_60_lines_and_only_delegates(name: str):
    component = registry.workload(name).component.load()
    source = Path(inspect.getfile(component)).read_text()
    length = constructor_lengths(source)[component.__name__]
    assert length <= LONGEST_CONSTRUCTOR, f"{component.__name__}.__init__ is {length} lines"
    assert _delegating_inits(ast.parse(source)), f"{component.__name__}.__init__ does more than delegate"


def test_the_lifecycle_constructor_is_at_most_60_lines_too():
    lengths = constructor_lengths(Path(inspect.getfile(lifecycle)).read_text())
    assert 20 < lengths["WorkloadComponent"] <= LONGEST_CONSTRUCTOR


def test_a_workload_names_its_token_and_descriptor_in_its_class_line():
    with pytest.raises(TypeError, match="token"):
        type("Nameless", (WorkloadComponent,), {})


def test_a_workload_that_misses_a_required_hook_cannot_be_built():
    class Partial(WorkloadComponent, token="tpu-stacks:index:Partial", workload=registry.workload(NAMES[0])):
        def monitoring_target(self, plan):  # the other required hooks are missing
            raise AssertionError("never reached: the class cannot be instantiated")

    with pytest.raises(TypeError, match="abstract.*declare_objects"):
        Partial("partial", {})


# --- the checks fail where they should -------------------------------------------------------------------

DELEGATING = """
    class Good(WorkloadComponent[Plan], token=TYPE, workload=WORKLOAD):
        def __init__(self, name: str, args: GoodArgs, opts=None) -> None:
            \"\"\"The lifecycle does it.\"\"\"
            super().__init__(name, args, opts)

        def foundation(self, plan):
            return FoundationSettings("weights", "model-weights", False, "ns", "ksa")
    """


def test_a_delegating_component_passes():
    assert reimplemented_steps(textwrap.dedent(DELEGATING)) == []


@pytest.mark.parametrize(
    "statement",
    [
        "base = declare_foundation(self, name, plan.cluster, bucket_suffix='w')",
        "self.register_outputs({'curl': self.curl})",
        "declare_network_policies(name, ns, groups, opts)",
        "smoke_test_job(f'{name}-smoke-test', smoke, provider, self, [])",
        "self.monitoring = declare_monitoring(self, name, monitoring)",
        "monitoring = plan_monitoring(target, 'toy')",
        "pulumi.ComponentResource.__init__(self, TYPE, name, {}, opts)",
    ],
)
def test_a_component_that_runs_a_lifecycle_step_itself_is_reported(statement: str):
    source = textwrap.dedent(DELEGATING) + f"\n    def declare_objects(self):\n        {statement}\n"
    found = reimplemented_steps(source)
    assert len(found) == 1 and found[0].startswith("<source>:"), found


def test_a_constructor_that_does_more_than_delegate_is_reported():
    source = """
    class Own(pulumi.ComponentResource):
        def __init__(self, name, args, opts=None):
            super().__init__(TYPE, name, {}, opts)
            self.curl = "curl"
    """
    found = reimplemented_steps(textwrap.dedent(source))
    assert found == ["<source>:4: super().__init__(...): a component initialised by hand"]
    assert not _delegating_inits(ast.parse(textwrap.dedent(source)))


def test_a_long_constructor_is_measured():
    body = "\n".join(f"        x{i} = {i}" for i in range(61))
    source = f"class Long:\n    def __init__(self):\n{body}\n"
    assert constructor_lengths(source) == {"Long": 62}
