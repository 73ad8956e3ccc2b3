"""No circle in the package's imports: a module that imports, through any chain, a module that imports it back
loads in an order that depends on who imported first, and the circle grows each time a rule is added on either side
(issue 34's house: `farm-studio look` counts them; this test keeps the count at zero between its readings). Every
import counts, wherever it stands (module level, inside a function, under TYPE_CHECKING), as the house counts them."""

from __future__ import annotations

from tests.module_tree import imports, modules


def import_graph(found: dict[str, object] | None = None) -> dict[str, set[str]]:
    """Module -> the package's modules it imports. `from a.b import c` names `a.b.c` when that is a module (the
    package `a.b` then is only the path to it, as Python loads it: its face's own lazy names are not run), else
    `a.b`."""
    found = found if found is not None else modules()
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        targets: set[str] = set()
        for statement in imports(path):
            named = {target for target in statement.names if target in found and target != name}
            targets |= {t for t in named if not any(other.startswith(f"{t}.") for other in named)}
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_imports_no_circle():
    assert circles(import_graph()) == []


def test_a_circle_is_found():
    """Not vacuous: the circle the dtype rule once made (dtypes -> vllm -> dtypes) and a longer one are found."""
    graph = {
        "a.dtypes": {"a.vllm"},
        "a.vllm": {"a.dtypes", "a.record"},
        "a.record": set(),
        "b.one": {"b.two"},
        "b.two": {"b.three"},
        "b.three": {"b.one"},
    }
    assert sorted(circles(graph)) == [["a.dtypes", "a.vllm"], ["b.one", "b.three", "b.two"]]
