"""The console script loads the provider SDKs with their annotations unevaluated (tpu_stacks/cli/sdk_bytecode.py):
only the packages it names, from a cache of its own checked against the source, never writing where bytecode may
not be written and never slower where it cannot write; switched off by its environment variable. That a plan is
the same either way is tests/cli/test_sources_in_output.py's (every shipped stack, planned by the console script,
against the same stacks planned in this process the ordinary way)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pulumi_gcp.storage
import pulumi_kubernetes.rbac.v1
import pytest

from tpu_stacks.cli import sdk_bytecode
from tpu_stacks.cli.user_cache import cache_dir
from tpu_stacks_preview.schema import VENDORED_CRDS, _converted_crd

# A name no module defines: evaluating the annotation raises NameError, so importing shows which way it compiled.
SOURCE = "def greet(name: Undefined) -> Undefined:\n    return 'hello ' + name\n\nclass Args:\n    size: Undefined\n"


# TypedDicts as the SDKs write them (a docstring or none, a field's own docstring, optional fields, one under an
# `if`, `typing.NotRequired`), and three left to Python's own check (a private name, `total=False`, `Annotated`).
DICTS = """\
import typing
from typing import Annotated, NotRequired, Required, TypedDict

class Documented(TypedDict):
    \"\"\"The class's own docstring.\"\"\"
    name: str
    \"\"\"A field's docstring.\"\"\"
    size: NotRequired[int]

class Undocumented(TypedDict):
    label: NotRequired[str]
    \"\"\"A field's docstring, not the class's.\"\"\"
    count: int
    must: Required[int]

if True:
    class Nested(TypedDict):
        kind: NotRequired[str]

class Qualified(TypedDict):
    size: typing.NotRequired[int]
    name: str

class Private(TypedDict):
    __secret: int

class Partial(TypedDict, total=False):
    note: str

class Marked(TypedDict):
    note: Annotated[NotRequired[str], "a mark"]
"""
WRITTEN = ("Documented", "Undocumented", "Nested", "Qualified")
CHECKED = ("Private", "Partial", "Marked")


def _keys(typed_dict: type) -> tuple[object, ...]:
    """What Python makes of a TypedDict's fields: their order, which are required and optional, its docstring."""
    return (
        list(typed_dict.__annotations__),
        sorted(typed_dict.__required_keys__),  # type: ignore[attr-defined]
        sorted(typed_dict.__optional_keys__),  # type: ignore[attr-defined]
        typed_dict.__total__,  # type: ignore[attr-defined]
        typed_dict.__doc__,
    )


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two packages of the same source on the import path, `named_sdk` handled and `other_sdk` not; a cache root."""
    for package in ("named_sdk", "other_sdk"):
        (tmp_path / "src" / package).mkdir(parents=True)
        (tmp_path / "src" / package / "__init__.py").write_text("")
        (tmp_path / "src" / package / "types.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sdk_bytecode.DeferredAnnotationsLoader, "writable", True)
    monkeypatch.setenv("TPU_STACKS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(sdk_bytecode.SWITCH, raising=False)
    finder = sdk_bytecode.install(("named_sdk",))
    yield tmp_path
    sdk_bytecode.uninstall(finder)
    _forget()


def _forget() -> None:
    for name in [n for n in sys.modules if n.split(".")[0] in ("named_sdk", "other_sdk")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _entry(root: Path) -> Path:
    return sdk_bytecode.entry_path(root / "cache" / "sdk-bytecode", str(root / "src" / "named_sdk" / "types.py"))


def test_only_the_named_packages_leave_annotations_unevaluated(packages: Path) -> None:
    module = importlib.import_module("named_sdk.types")
    assert module.greet("you") == "hello you"
    assert module.greet.__annotations__ == {"name": "Undefined", "return": "Undefined"}
    assert module.Args.__annotations__ == {"size": "Undefined"}
    with pytest.raises(NameError, match="Undefined"):  # the same source, compiled the ordinary way
        importlib.import_module("other_sdk.types")


def test_the_compiled_module_is_kept_and_read_back_until_its_source_changes(
    packages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    importlib.import_module("named_sdk.types")
    entry = _entry(packages)
    assert entry.is_file() and entry.read_bytes().startswith(sdk_bytecode.FORMAT)
    compiled: list[str] = []

    def counting(source: bytes, path: str, *args: object, **kwargs: object) -> object:
        compiled.append(path)
        return compile(source, path, *args, **kwargs)

    monkeypatch.setattr(sdk_bytecode, "compile", counting, raising=False)
    _forget()
    assert importlib.import_module("named_sdk.types").greet("again") == "hello again"
    assert compiled == []  # read from the cache
    source = packages / "src" / "named_sdk" / "types.py"
    source.write_text(SOURCE.replace("hello ", "hi "))  # another size: the entry is stale
    _forget()
    assert importlib.import_module("named_sdk.types").greet("you") == "hi you"
    assert compiled == [str(source)]
    entry.write_bytes(entry.read_bytes()[:-40])  # a truncated entry (a crash mid-write elsewhere): compiled again
    _forget()
    assert importlib.import_module("named_sdk.types").greet("you") == "hi you"
    assert compiled == [str(source)] * 2 and not list(entry.parent.glob("*.tmp"))


def test_where_bytecode_may_not_be_written_a_module_without_an_entry_loads_the_ordinary_way(
    packages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with pytest.raises(NameError):  # evaluated: the interpreter's own bytecode, nothing compiled or written
        importlib.import_module("named_sdk.types")
    assert not (packages / "cache").exists()


def test_an_unwritable_cache_costs_one_compile_then_the_ordinary_way(packages: Path) -> None:
    (packages / "cache").write_text("a file where the cache directory would be")
    package = importlib.import_module("named_sdk")  # compiled the deferred way, and the write fails
    assert package.__spec__.loader.__class__ is sdk_bytecode.DeferredAnnotationsLoader
    assert sdk_bytecode.DeferredAnnotationsLoader.writable is False
    with pytest.raises(NameError):  # no compile it could not keep: the ordinary bytecode from then on
        importlib.import_module("named_sdk.types")


def test_the_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    before = list(sys.meta_path)
    monkeypatch.setenv(sdk_bytecode.SWITCH, "off")
    assert sdk_bytecode.install() is None
    assert sys.meta_path == before


def test_the_cache_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TPU_STACKS_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert sdk_bytecode.cache_root() == tmp_path / "xdg" / "tpu-stacks" / "sdk-bytecode"
    monkeypatch.setenv("TPU_STACKS_CACHE", str(tmp_path / "own"))
    assert sdk_bytecode.cache_root() == tmp_path / "own" / "sdk-bytecode"
    tag = sys.implementation.cache_tag
    assert (
        sdk_bytecode.entry_path(tmp_path, "/venv/lib/pulumi_gcp/_inputs.py")
        == tmp_path / "venv" / "lib" / "pulumi_gcp" / f"_inputs.{tag}.pyc"
    )


def test_an_optimized_interpreter_keeps_entries_of_its_own():
    """`python -O` compiles without asserts (`-OO` without docstrings too): its code is another entry, as the
    interpreter's own `opt-1` bytecode is another file."""
    program = "from pathlib import Path; from tpu_stacks.cli import sdk_bytecode as b; print(b.entry_path(Path('/r'), '/a/m.py'))"
    plain, optimized = (
        subprocess.run([sys.executable, *flags, "-c", program], capture_output=True, text=True, check=True).stdout
        for flags in ([], ["-OO"])
    )
    tag = sys.implementation.cache_tag
    assert (plain.strip(), optimized.strip()) == (f"/r/a/m.{tag}.pyc", f"/r/a/m.{tag}.opt-2.pyc")


def test_without_a_home_or_a_cache_variable_nothing_is_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A container user with no home directory and neither variable set: the SDKs load the ordinary way, and the
    command runs (no traceback from `Path.home()`)."""
    for name in ("TPU_STACKS_CACHE", "XDG_CACHE_HOME", sdk_bytecode.SWITCH):
        monkeypatch.delenv(name, raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    before = list(sys.meta_path)
    assert sdk_bytecode.install() is None
    assert sys.meta_path == before
    # the planner's CRD schemas, the other thing cached (user_cache.py): converted, nothing kept
    crd = tmp_path / "computeclasses.yaml"
    crd.write_bytes((VENDORED_CRDS / "cloud.google.com_computeclasses.yaml").read_bytes())
    stat = crd.stat()
    assert _converted_crd(str(crd), stat.st_mtime_ns, stat.st_size)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["computeclasses.yaml"]


def test_a_relative_cache_folder_is_read_as_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A plan moves into the program's directory while it runs (isolated_imports): a relative `TPU_STACKS_CACHE`
    means the folder where the command started, as the user wrote it there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TPU_STACKS_CACHE", "relcache")
    assert sdk_bytecode.cache_root() == tmp_path / "relcache" / "sdk-bytecode"
    monkeypatch.delenv("TPU_STACKS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    assert cache_dir() == tmp_path / "xdg" / "tpu-stacks"


def test_a_typed_dict_has_the_keys_python_gives_it_without_checking_its_annotations(packages: Path) -> None:
    """The SDKs' TypedDicts have their fields set after the class (no ForwardRef compiled per field): the same keys,
    required and optional, and docstring as the ordinary import; a field's docstring does not become the class's."""
    for package in ("named_sdk", "other_sdk"):
        (packages / "src" / package / "dicts.py").write_text(DICTS)
    deferred, ordinary = importlib.import_module("named_sdk.dicts"), importlib.import_module("other_sdk.dicts")
    for name in WRITTEN:
        assert _keys(getattr(deferred, name)) == _keys(getattr(ordinary, name)), name
    assert deferred.Documented.__annotations__ == {"name": "str", "size": "NotRequired[int]"}  # strings, unchecked
    assert deferred.Undocumented.__doc__ is None and deferred.Undocumented.__optional_keys__ == {"label"}
    for name in CHECKED:  # left to Python's own check: its annotations became ForwardRefs
        assert all(not isinstance(a, str) for a in getattr(deferred, name).__annotations__.values()), name


def test_the_sdks_typed_dicts_keep_their_keys(request: pytest.FixtureRequest) -> None:
    """The pinned SDKs' own TypedDicts (two modules of each), loaded by the console script's way in a child process,
    against this process's ordinary import: every class, its keys required and optional, its docstring."""
    modules = {module.__name__: module for module in (pulumi_kubernetes.rbac.v1._inputs, pulumi_gcp.storage._inputs)}
    program = (
        "import importlib, json, sys, typing\n"
        "from tpu_stacks.cli import sdk_bytecode\n"
        "sdk_bytecode.install()\n"
        f"from tests.cli.test_sdk_bytecode import _keys, _typed_dicts\n"
        f"print(json.dumps({{m: _typed_dicts(importlib.import_module(m)) for m in {sorted(modules)!r}}}))\n"
    )
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", sdk_bytecode.SWITCH)}
    cache = request.config.cache.mkdir("tpu-stacks-cache")  # pytest's, as the plan test's
    for module in modules.values():  # compiled again below: a kept entry would not show a change of the rewrite
        sdk_bytecode.entry_path(Path(cache) / "sdk-bytecode", module.__file__).unlink(missing_ok=True)
    result = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**environment, "TPU_STACKS_CACHE": str(cache)},
    )
    deferred = json.loads(result.stdout)
    for module in modules.values():  # compiled the console script's way: the entries are back
        assert sdk_bytecode.entry_path(Path(cache) / "sdk-bytecode", module.__file__).is_file()
    for name, module in modules.items():
        ordinary = json.loads(json.dumps(_typed_dicts(module)))
        assert len(ordinary) >= 10 and deferred[name] == ordinary, name
    assert any(keys[2] for keys in ordinary.values())  # optional keys among them


def _typed_dicts(module: object) -> dict[str, tuple[object, ...]]:
    return {
        name: _keys(value)
        for name, value in vars(module).items()
        if isinstance(value, type) and typing.is_typeddict(value) and value.__module__ == module.__name__  # type: ignore[attr-defined]
    }
