"""The provider SDKs loaded with their annotations left unevaluated (PEP 563), from a bytecode cache of our own.

Most of a plan's time is importing `pulumi_gcp` and `pulumi_kubernetes`, and most of that is their class bodies
evaluating annotations: every `Optional[pulumi.Input[...]]` of every argument, getter and TypedDict field (tens of
thousands of `typing` subscriptions for a plan's few hundred modules; docs/performance.md). The SDKs do not need
them evaluated: pulumi reads them only through `typing.get_type_hints` in the globals of each class's modules
(ledger: pulumi.types.getter-hints, pulumi.types.annotation-hints, pulumi.types.class-globals), which resolves a
string annotation to the very object the class body would have built, and only for the few classes a program
serializes; the SDKs' own code only binds arguments to a signature (ledger:
pulumi-kubernetes.utilities.signature-binds). So the console script compiles those two packages as if each module
began with `from __future__ import annotations`: the same source, the same names, the same objects once asked for
(a test plans every shipped stack both ways and compares them). A TypedDict (the SDKs' `...ArgsDict`, about a
thousand in a plan) is the one class Python checks as it is made, each annotation compiled again if it is a string:
its fields' annotations are set on it after the class statement instead, the same strings, with the required and
optional keys Python would find in the evaluated annotations (`NotRequired[...]`); pulumi only asks whether a type
is a TypedDict (ledger: pulumi.types.typeddict-checked). A TypedDict the SDKs do not write (a qualifier inside
another, a private field name) is left to Python's check, which counts each of its string-annotated keys required.

The compiled code is kept apart from the interpreter's (`__pycache__` keeps the ordinary bytecode, which `pulumi up`
and every other program go on using) in the user's cache (`$TPU_STACKS_CACHE`, else `$XDG_CACHE_HOME/tpu-stacks`,
else `~/.cache/tpu-stacks`), one file per module, checked against the source's size and modification time, the
interpreter's bytecode version and its optimization level (`-O`, `-OO`), as the interpreter checks its own. Where
bytecode may not be written (`PYTHONDONTWRITEBYTECODE`, as for the interpreter's own cache) or the cache cannot be
written, a module without an entry is loaded the ordinary way, so a plan is never slower than without this.
`TPU_STACKS_SDK_BYTECODE=off` turns it off.
"""

from __future__ import annotations
import __future__

import ast
import contextlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

from tpu_stacks.cli.user_cache import cache_dir

PACKAGES = ("pulumi_gcp", "pulumi_kubernetes")
"""Generated provider SDKs: their modules read annotations only through `typing.get_type_hints` (via pulumi)."""

SWITCH = "TPU_STACKS_SDK_BYTECODE"
FLAGS = __future__.annotations.compiler_flag
FORMAT = b"tpu-stacks pep563 2\n"
"""Written before each entry, with the interpreter's bytecode magic: a change of either makes every entry stale."""


def cache_root() -> Path | None:
    """Where the compiled modules go: the user's tpu-stacks cache (user_cache.py); None: nowhere."""
    root = cache_dir()
    return None if root is None else root / "sdk-bytecode"


def entry_path(root: Path, source: str) -> Path:
    """The module's entry: the source's absolute path under `root`, as the interpreter's `pycache_prefix` lays it,
    with its optimization level as the interpreter names it (`-O` drops asserts, `-OO` docstrings too)."""
    absolute = Path(os.path.abspath(source))
    tag = sys.implementation.cache_tag or "python"
    level = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    return root.joinpath(*absolute.parent.parts[1:], f"{absolute.stem}.{tag}{level}.pyc")


def _header(source: str) -> bytes:
    stat = os.stat(source)
    return (
        FORMAT
        + importlib.util.MAGIC_NUMBER
        + sys.flags.optimize.to_bytes(1, "little")
        + stat.st_mtime_ns.to_bytes(8, "little")
        + stat.st_size.to_bytes(8, "little")
    )


def _rewritten(data: bytes, source: str) -> bytes | ast.Module:
    """The module's source, or its tree with its TypedDicts' fields set after them; the source as it is where the
    rewrite fails (it only saves time: Python compiles and checks the module the ordinary way then)."""
    if b"(TypedDict):" not in data:
        return data
    try:
        return _typed_dict_keys_after_class(ast.parse(data, source))
    except (RecursionError, MemoryError, ValueError):  # a tree too deep, or a source ast.parse refuses
        return data


def _typed_dict_keys_after_class(tree: ast.Module) -> ast.Module:
    """Each `class X(TypedDict):` with its fields' annotations moved out of its body into assignments after it.

    Python's TypedDict checks each annotation of its class body as the class is made, and compiles a string one for
    that (a `ForwardRef`): about 6,000 compilations, 0.12-0.17 s of a plan. Set after the class, the same strings
    are its `__annotations__` unchecked, and its required and optional keys are those Python reads from the evaluated
    annotations: a `NotRequired[...]` field is optional, any other required (the SDKs' TypedDicts are total).
    """
    bodies = [tree.body]
    while bodies:  # the module's statements and its `if`s' (where older SDKs define them: `if not MYPY:`)
        statements = bodies.pop()
        for index in range(len(statements) - 1, -1, -1):
            statement = statements[index]
            if isinstance(statement, ast.If):
                bodies += [statement.body, statement.orelse]
            elif isinstance(statement, ast.ClassDef) and _is_plain_typed_dict(statement):
                statements[index + 1 : index + 1] = _fields_moved_out(statement)
    return tree


def _is_plain_typed_dict(cls: ast.ClassDef) -> bool:
    """`class X(TypedDict):`, no `total=`, no decorator, no other base."""
    bases = cls.bases
    return not cls.keywords and not cls.decorator_list and len(bases) == 1 and ast.unparse(bases[0]) == "TypedDict"


def _fields_moved_out(cls: ast.ClassDef) -> list[ast.stmt]:
    """The assignments that set `cls`'s keys; none, the class left to Python's own check, where a field is not
    plain: a private name (Python mangles it) or a qualifier other than an outermost `NotRequired`/`Required`."""
    fields = [s for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not s.value]
    names = [field.target.id for field in fields]  # type: ignore[union-attr]
    kinds = [_qualifier(field.annotation) for field in fields]
    if not fields or None in kinds or any(name.startswith("__") and not name.endswith("__") for name in names):
        return []
    docstring = ast.get_docstring(cls, clean=False) is not None and cls.body[0]
    kept = [s for s in cls.body if s is docstring or not (s in fields or _is_string(s))]  # a field's string goes too:
    cls.body = kept or [ast.copy_location(ast.Pass(), fields[0])]  # moved up, it would be the class's docstring
    annotations = {name: ast.unparse(field.annotation) for name, field in zip(names, fields, strict=True)}
    optional = sorted(name for name, kind in zip(names, kinds, strict=True) if kind == "NotRequired")
    required = sorted(set(names) - set(optional))
    assignments = ast.parse(
        f"{cls.name}.__annotations__ = {annotations!r}\n"
        f"{cls.name}.__required_keys__ = frozenset({required!r})\n"
        f"{cls.name}.__optional_keys__ = frozenset({optional!r})\n"
    ).body
    for node in (node for statement in assignments for node in ast.walk(statement)):
        ast.copy_location(node, cls)  # a traceback through them points at the class statement
    return assignments


QUALIFIERS = ("NotRequired", "Required", "Annotated")


def _qualifier(annotation: ast.expr) -> str | None:
    """An annotation's outermost `NotRequired` or `Required` (by name or as `typing.` attribute), "" for none, and
    None if a qualifier sits anywhere else in it (`Annotated[NotRequired[...], ...]`), which only Python reads right."""
    outer = annotation.value if isinstance(annotation, ast.Subscript) else None
    kind = _name(outer) if outer is not None and _name(outer) in QUALIFIERS[:2] else ""
    inner = annotation.slice if kind else annotation  # type: ignore[attr-defined]
    return None if any(_name(node) in QUALIFIERS for node in ast.walk(inner)) else kind


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _is_string(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


class DeferredAnnotationsLoader(importlib.machinery.SourceFileLoader):
    """A source module compiled with PEP 563's flag, its code read from and written to the cache."""

    root: Path
    writable = True  # shared: once a write fails, no later module pays a compile it cannot keep

    def get_code(self, fullname: str) -> CodeType | None:
        source = self.get_filename(fullname)
        entry = entry_path(self.root, source)
        header = _header(source)
        try:
            data = entry.read_bytes()
        except OSError:
            data = b""
        if data.startswith(header):
            try:
                return marshal.loads(memoryview(data)[len(header) :])
            except (EOFError, ValueError, TypeError):  # a truncated or foreign entry: compiled again below
                pass
        if sys.dont_write_bytecode or not DeferredAnnotationsLoader.writable:
            return super().get_code(fullname)  # the ordinary bytecode: annotations evaluated, as without this
        code = compile(_rewritten(self.get_data(source), source), source, "exec", flags=FLAGS, dont_inherit=True)
        partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(header + marshal.dumps(code))
            os.replace(partial, entry)  # another process writing the same entry: the last whole file wins
        except OSError:
            DeferredAnnotationsLoader.writable = False
        finally:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)  # a disk that filled or an interrupt mid-write keeps no half entry
        return code


class DeferredAnnotationsFinder:
    """Finds the SDKs' modules as the path finder does and hands their source files to the loader above."""

    def __init__(self, root: Path, packages: Sequence[str] = PACKAGES) -> None:
        self.root = root
        self.packages = tuple(packages)

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name.split(".", 1)[0] not in self.packages:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        loader = DeferredAnnotationsLoader(spec.loader.name, spec.loader.path)
        loader.root = self.root
        spec.loader = loader
        return spec


def install(packages: Sequence[str] = PACKAGES) -> DeferredAnnotationsFinder | None:
    """Load `packages` through the cache from now on (before any of them is imported), unless switched off."""
    if os.environ.get(SWITCH, "").lower() in ("off", "0", "false", "no"):
        return None
    root = cache_root()
    if root is None:  # no $TPU_STACKS_CACHE, no $XDG_CACHE_HOME and no home directory: nowhere to keep it
        return None
    finder = DeferredAnnotationsFinder(root, packages)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder: DeferredAnnotationsFinder | None) -> None:
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
