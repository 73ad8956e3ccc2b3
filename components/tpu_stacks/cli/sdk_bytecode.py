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
(a test plans every shipped stack both ways and compares them). One thing does differ, and nothing in this process
reads it: a TypedDict (the SDKs' `...ArgsDict`) whose annotations are strings counts every key as required (Python
3.11's `typing` cannot see `NotRequired` inside a string); pulumi only asks whether a type is a TypedDict (ledger:
pulumi.types.typeddict-checked), and the schema inference that reads optional keys runs in the component plugin's
own process, on our own types.

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

import contextlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

PACKAGES = ("pulumi_gcp", "pulumi_kubernetes")
"""Generated provider SDKs: their modules read annotations only through `typing.get_type_hints` (via pulumi)."""

SWITCH = "TPU_STACKS_SDK_BYTECODE"
FLAGS = __future__.annotations.compiler_flag
FORMAT = b"tpu-stacks pep563 1\n"
"""Written before each entry, with the interpreter's bytecode magic: a change of either makes every entry stale."""


def cache_root() -> Path:
    """Where the compiled modules go: `$TPU_STACKS_CACHE`, else the XDG user cache."""
    if os.environ.get("TPU_STACKS_CACHE"):
        return Path(os.environ["TPU_STACKS_CACHE"]) / "sdk-bytecode"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tpu-stacks" / "sdk-bytecode"


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
        code = compile(self.get_data(source), source, "exec", flags=FLAGS, dont_inherit=True)
        partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(header + marshal.dumps(code))
            os.replace(partial, entry)  # another process writing the same entry: the last whole file wins
        except OSError:
            DeferredAnnotationsLoader.writable = False
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)  # a disk that filled mid-write keeps no half entry
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
    try:
        root = cache_root()
    except RuntimeError:  # no $TPU_STACKS_CACHE, no $XDG_CACHE_HOME and no home directory: nowhere to keep it
        return None
    finder = DeferredAnnotationsFinder(root, packages)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder: DeferredAnnotationsFinder | None) -> None:
    if finder is not None and finder in sys.meta_path:
        sys.meta_path.remove(finder)
