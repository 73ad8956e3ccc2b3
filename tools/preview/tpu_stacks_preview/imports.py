"""Import code from a directory (a program, a policy pack) as its own process would, then forget it.

A Pulumi program or policy pack normally runs in a fresh interpreter with its directory first on
sys.path. Running it in-process, a cached module would make code that creates resources at import
time run once per process, and a module of the same name from another project (`policies`,
`stacks`) would shadow this one. So names importable from the directory are evicted from
`sys.modules` before and after; modules the caller had already loaded from there stay.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _top_level_names(roots: list[Path]) -> set[str]:
    names: set[str] = set()
    for root in roots:
        for entry in root.iterdir():
            if entry.name.startswith((".", "_")) or entry.name in ("venv", ".venv"):
                continue
            if entry.is_file() and entry.suffix == ".py":
                names.add(entry.stem)
            elif entry.is_dir() and entry.name.isidentifier():
                names.add(entry.name)
    return names


def _module_location(module: object) -> Path | None:
    location = getattr(module, "__file__", None)
    if location:
        return Path(location).resolve()
    paths = list(getattr(module, "__path__", []) or [])
    return Path(paths[0]).resolve() if paths else None


def _evict(names: set[str], keep: set[str]) -> None:
    for module_name in list(sys.modules):
        if module_name.split(".", 1)[0] in names and module_name not in keep:
            del sys.modules[module_name]


@contextmanager
def isolated_imports(roots: list[Path], *, cwd: Path | None = None) -> Iterator[None]:
    """`roots` first on sys.path (and `cwd` as working directory) while the block runs."""
    roots = list(dict.fromkeys(root.resolve() for root in roots))
    names = _top_level_names(roots)
    keep = {
        name
        for name, module in list(sys.modules.items())
        if name.split(".", 1)[0] in names
        and (location := _module_location(module)) is not None
        and any(location.is_relative_to(root) for root in roots)
    }
    _evict(names, keep)
    saved_path, saved_cwd = list(sys.path), os.getcwd()
    sys.path[:0] = [str(root) for root in roots]
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        _evict(names, keep)
