"""The mutants of scripts/mutation.py: one change at a time to a module's source, the usual operators.

- comparisons flipped (`<` <-> `<=`, `>` <-> `>=`, `==` <-> `!=`, `in` <-> `not in`, `is` <-> `is not`);
- number constants +1 and -1 (`True`/`False` are not numbers here);
- arithmetic swapped (`*` <-> `/`, `+` <-> `-`, `//` -> `*`);
- `and` <-> `or`, `not x` -> `x`;
- conditions negated (`if`, `while`, conditional expressions);
- `return value` -> `return None`.

Each mutant is the original file with one source span replaced, so line numbers stay put.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_COMPARE_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP = {ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.FloorDiv: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    line: int
    function: str
    original: str
    mutated: str
    start: tuple[int, int]  # (line, byte column), 1-based line
    end: tuple[int, int]
    occurrence: int = 0

    @property
    def key(self) -> str:
        """Stable across edits elsewhere in the file: the function, the change, its occurrence."""
        suffix = f" #{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.function}: {self.original!r} -> {self.mutated!r}{suffix}"


def _segment(lines: list[bytes], node: ast.AST) -> str:
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return _slice(lines, start, end).decode()


def _slice(lines: list[bytes], start: tuple[int, int], end: tuple[int, int]) -> bytes:
    (sl, sc), (el, ec) = start, end
    if sl == el:
        return lines[sl - 1][sc:ec]
    return lines[sl - 1][sc:] + b"".join(lines[sl : el - 1]) + lines[el - 1][:ec]


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Expr) and isinstance(node, ast.Constant) and isinstance(node.value, str)


class _Collector(ast.NodeVisitor):
    """Walks the module and yields one Mutant per (node, operator), skipping annotations."""

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.scope: list[str] = []
        self.mutants: list[Mutant] = []
        self._seen: dict[tuple[str, str, str], int] = {}

    def _add(self, node: ast.AST, mutated: str) -> None:
        original = _segment(self.lines, node)
        if original == mutated:
            return
        function = ".".join(self.scope) or "<module>"
        k = (function, original, mutated)
        occurrence = self._seen.get(k, 0)
        self._seen[k] = occurrence + 1
        self.mutants.append(
            Mutant(
                line=node.lineno,
                function=function,
                original=original,
                mutated=mutated,
                start=(node.lineno, node.col_offset),
                end=(node.end_lineno, node.end_col_offset),
                occurrence=occurrence,
            )
        )

    # scopes; annotations are not behaviour
    def _scoped(self, node, name: str) -> None:
        self.scope.append(name)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]:
            self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._scoped(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, node.name)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.visit(node.value)

    def visit_If(self, node: ast.If) -> None:
        test_src = _segment(self.lines, node.test)
        if not (test_src == "TYPE_CHECKING" or "__name__" in test_src):
            self._add(node.test, f"not ({test_src})")
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._add(node.test, f"not ({_segment(self.lines, node.test)})")
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._add(node.test, f"(not ({_segment(self.lines, node.test)}))")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, "return None")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is None:
                continue
            ops = list(node.ops)
            ops[i] = swap()
            self._add(node, ast.unparse(ast.Compare(left=node.left, ops=ops, comparators=node.comparators)))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _BINOP_SWAP.get(type(node.op))
        if swap is not None and not _is_string_format(node):
            self._add(node, ast.unparse(ast.BinOp(left=node.left, op=swap(), right=node.right)))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add(node, ast.unparse(ast.BoolOp(op=other, values=node.values)))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, f"({_segment(self.lines, node.operand)})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return
        for mutated in (value + 1, value - 1):
            self._add(node, repr(mutated))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # messages: their numbers are format specs, not behaviour


def _is_string_format(node: ast.BinOp) -> bool:
    return isinstance(node.left, (ast.JoinedStr,)) or (
        isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
    )


def collect(source: str) -> list[Mutant]:
    lines = source.encode().splitlines(keepends=True)
    collector = _Collector(lines)
    collector.visit(ast.parse(source))
    return collector.mutants


def apply(source: str, mutant: Mutant) -> str:
    lines = source.encode().splitlines(keepends=True)
    (sl, sc), (el, ec) = mutant.start, mutant.end
    head = b"".join(lines[: sl - 1]) + lines[sl - 1][:sc]
    tail = lines[el - 1][ec:] + b"".join(lines[el:])
    return (head + mutant.mutated.encode() + tail).decode()
