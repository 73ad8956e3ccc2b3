"""The registry's look-ups, each against the source tree itself: the workloads are the folders of
components/tpu_stacks holding a descriptor.py (listed here with pathlib, not by the registry's finder), a `Ref`
names `module:attribute`, and a workload from outside is registered only while its block runs, never twice.

Fast: nothing here plans a stack (tests/test_registry.py checks every descriptor against what it names).
"""

from pathlib import Path

import pytest

import tpu_stacks
from tpu_stacks import registry
from tpu_stacks.registry import Ref, Workload

PACKAGE = Path(tpu_stacks.__file__).parent
FOLDERS = sorted(p.parent.name for p in PACKAGE.glob("*/descriptor.py"))


def test_the_workloads_are_the_folders_with_a_descriptor():
    assert FOLDERS  # the tree has workloads at all
    assert registry.names() == tuple(FOLDERS)  # sorted by name, every folder once, no other package
    assert [w.package for w in registry.workloads()] == [f"tpu_stacks.{name}" for name in FOLDERS]
    for name in FOLDERS:
        assert registry.workload(name).name == name


def test_a_ref_is_module_colon_attribute_loaded_on_use():
    ref = Ref("tpu_stacks.registry:Ref.load")
    assert ref.module == "tpu_stacks.registry"
    assert ref.load() is Ref.load  # a dotted attribute, walked part by part
    assert Ref("tpu_stacks.registry").load() is registry  # no attribute: the module itself
    assert Ref("tpu_stacks.registry").module == "tpu_stacks.registry"


def test_a_workloads_secret_keys_and_modules():
    vllm = registry.workload("vllm")
    assert vllm.secret_keys == tuple(key for _, key in vllm.secrets) and vllm.secret_keys
    assert vllm.modules() == tuple(f"tpu_stacks.vllm.{m}" for m in ("spec", "args", "plan", "component", "network"))
    shared = Workload(**{**vllm.__dict__, "args": Ref("tpu_stacks.vllm.spec:VllmArgs")})
    assert shared.modules() == tuple(f"tpu_stacks.vllm.{m}" for m in ("spec", "plan", "component", "network"))


def test_declared_collects_each_workload_that_declares_the_capability_loaded():
    pairs = registry.declared("engine")
    assert [w.name for w, _ in pairs] == [w.name for w in registry.workloads() if w.engine is not None]
    assert pairs and all(value is w.engine.load() for w, value in pairs)


def test_a_registered_workload_is_listed_only_while_its_block_runs_and_only_once():
    extra = Workload(**{**registry.workload("vllm").__dict__, "name": "elsewhere"})
    with registry.registered(extra) as given:
        assert given is extra
        assert registry.names() == tuple(sorted([*FOLDERS, "elsewhere"]))
        with pytest.raises(ValueError, match="'elsewhere' is registered already"):
            with registry.registered(extra):
                pass
    assert registry.names() == tuple(FOLDERS)
    with pytest.raises(ValueError, match="'vllm' is registered already"):  # a folder's workload
        with registry.registered(registry.workload("vllm")):
            pass
