"""The workloads of the house, each declared once, in its own folder (`<workload>/descriptor.py`).

A workload is a folder of `tpu_stacks` with the same files as the others (`spec.py`, `args.py`,
`plan.py`, `network.py`, `component.py`, `descriptor.py`). Its `descriptor.py` holds one `Workload`:
everything a list of workloads elsewhere needs to know of it. Every such list derives from here: the
stack scenarios (stacks/scenarios.py), the plugin's components (plugin.py), the generated Args docs
(scripts/args_docs.py), the mutation targets (scripts/mutation.py), the security scan's stacks
(scripts/security_scan.py), the plan benchmark's imports (benchmarks/plan_stacks.py). The type
Literals that name workloads stay for the type checker; tests/test_registry.py checks each of them
against this registry, and docs/architecture.md lists the files a new workload touches.

Workloads are found, not listed: every subpackage with a `descriptor` module is one. Importing this
module, or asking it for the workloads, loads no provider SDK: a descriptor names its classes and
functions by dotted path (`Ref`), resolved only on use, so the decision layer stays pure.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib.machinery import PathFinder
from typing import Any

import tpu_stacks

DESCRIPTOR = "descriptor"
"""The module name that makes a subpackage of `tpu_stacks` a workload."""


@dataclass(frozen=True)
class Ref:
    """A module attribute by dotted path, `package.module:attribute` (the attribute may be dotted too),
    loaded on first use: a descriptor can name a component class without importing pulumi."""

    path: str

    @property
    def module(self) -> str:
        return self.path.partition(":")[0]

    def load(self) -> Any:
        module, _, attribute = self.path.partition(":")
        value: Any = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            value = getattr(value, part)
        return value


@dataclass(frozen=True)
class Export:
    """A stack output: `name` is the component attribute at `path` (dotted), or one `key` of that
    attribute's map (one export per request of a map of commands)."""

    name: str
    path: str
    key: str | None = None
    optional: bool = False
    """Only some plans have it (multi-host vLLM's image build): exported when the component sets it."""


@dataclass(frozen=True)
class Workload:
    """One workload, as everything outside its folder sees it."""

    name: str
    """The scenario name (`tpu-stacks:scenario`), the component's resource name, the monitoring target's kind."""
    section: str
    """The stack config key of its own section (`tpu-stacks:<section>`)."""
    spec: Ref
    """The pydantic model that validates the section."""
    args: Ref
    """The TypedDict of the component's inputs (the schema other languages see)."""
    plan: Ref
    """The pure function from the spec (and the cluster's) to every decision."""
    component: Ref
    """The ComponentResource that declares the resources (loads the provider SDKs when resolved)."""
    monitoring_target: Ref
    """The builder of the monitoring target (gcp/monitoring) from the plan."""
    dashboard_sections: Ref
    """The dashboard sections particular to this workload, `(Target) -> list[Section]`, in its own package: the
    dashboard (gcp/monitoring/dashboards.py) draws them between its status row and the TPU and pod sections."""
    network: Ref
    """The connectivity contract: the flows its pods need and admit (the workload's `network.py`)."""
    smoke_test: Ref | None
    """What the first `pulumi up` checks on the running server (smoke_plan.SmokeTest), None for a training job."""
    args_docs: tuple[tuple[str, str], ...]
    """(Args TypedDict, spec model) pairs of `args` and `spec`'s modules whose docstrings are generated."""
    exports: tuple[Export, ...]
    """The stack outputs of its scenario, in order."""
    smoke_answer: str | None = None
    """The shape of the server's answer its smoke test judges, a key of k8s/smoke_check.CHECKS
    (`openai-completion` for any OpenAI-compatible server); None for a training job. A capability, not a name:
    shared code asks it and never branches on the workload (tests/test_registry.py checks each server has one the
    script knows)."""
    status_cards: Ref | None = None
    """Its own cards in the dashboard's first row, `(Target) -> list[Widget]` (a queue, a run's state), after the
    replica and slice cards every workload gets; None: none of its own."""
    alerts: Ref | None = None
    """Its own alert policies, `(Target) -> list[Alert]` (gcp/monitoring/alerts.py), beside the ones every stack
    gets; None: none of its own."""
    secrets: tuple[tuple[str, str], ...] = ()
    """(component input, stack secret key): secret config values the scenario hands the component."""
    prepare_args: Ref | None = None
    """A function `(args) -> args` the scenario applies before the component parses them (a default
    that depends on the checkout, such as an image tag), or None."""
    engines: tuple[str, ...] = ()
    """The engines of the engine catalogue (catalog/engines/) it runs."""
    sizing_engine: str | None = None
    """Its engine as `tpu-stacks size` names it (sizing.Engine), None when sizing does not serve it."""
    engine: Ref | None = None
    """The engine only this workload runs, declared in its own folder (`<workload>/engine.py`, an
    `EngineDeclaration`): the pinned record, the traffic entry, the HTTP API, the model classes it serves and whether
    the gateway can front it. Shared code collects these through `declared()` and never names the engine; None: its
    engines are ones shared code names, the catalogue's own (catalog/engines/ CATALOGUED, with WHY_HERE)."""
    example_stack: str = ""
    """The shipped stack (`Pulumi.<stack>.yaml`) that shows it: the security scan plans it."""
    package: str = field(default="", compare=False)
    """The workload's package (`tpu_stacks.<folder>`), filled in when it is found."""

    @property
    def secret_keys(self) -> tuple[str, ...]:
        return tuple(key for _, key in self.secrets)

    def modules(self) -> tuple[str, ...]:
        """The modules its references name, each once, in declaration order."""
        refs = (self.spec, self.args, self.plan, self.component, self.network)
        return tuple(dict.fromkeys(ref.module for ref in refs))


_registered: dict[str, Workload] = {}


def _has_descriptor(info: pkgutil.ModuleInfo, package: str) -> bool:
    """Whether a subpackage has a descriptor module, looked up in its folders without importing it: a package that
    is not a workload (traffic, catalog, ...) is not loaded only to be asked (`find_spec` of a dotted name would)."""
    spec = info.module_finder.find_spec(package)  # a path entry finder (iter_modules over folders): FileFinder
    locations = spec.submodule_search_locations if spec is not None else None
    return bool(locations) and PathFinder.find_spec(f"{package}.{DESCRIPTOR}", list(locations)) is not None


def _found() -> Iterator[Workload]:
    for info in sorted(pkgutil.iter_modules(tpu_stacks.__path__), key=lambda i: i.name):
        package = f"{tpu_stacks.__name__}.{info.name}"
        if not info.ispkg or not _has_descriptor(info, package):
            continue
        workload = importlib.import_module(f"{package}.{DESCRIPTOR}").WORKLOAD
        if not isinstance(workload, Workload):
            raise TypeError(f"{package}.{DESCRIPTOR}.WORKLOAD is not a Workload")
        yield Workload(**{**workload.__dict__, "package": package})


@cache
def _found_in(path: tuple[str, ...]) -> tuple[Workload, ...]:
    """The package's workloads for one search path of `tpu_stacks` (a test may add a folder to it)."""
    return tuple(_found())


def workloads() -> tuple[Workload, ...]:
    """Every workload, found in the package and registered, by name."""
    found = {w.name: w for w in _found_in(tuple(tpu_stacks.__path__))}
    clash = found.keys() & _registered.keys()
    if clash:
        raise ValueError(f"workloads registered twice: {', '.join(sorted(clash))}")
    return tuple(sorted({**found, **_registered}.values(), key=lambda w: w.name))


def workload(name: str) -> Workload:
    return next(w for w in workloads() if w.name == name)


def names() -> tuple[str, ...]:
    return tuple(w.name for w in workloads())


@cache
def _declared_in(
    key: tuple[tuple[str, ...], tuple[Workload, ...]], capability: str
) -> tuple[tuple[Workload, Any], ...]:
    return tuple((w, ref.load()) for w in workloads() if isinstance(ref := getattr(w, capability), Ref))


def declared(capability: str) -> tuple[tuple[Workload, Any], ...]:
    """(workload, loaded value) of every workload that declares the optional capability `capability` (a `Ref` field
    of `Workload`), by workload name: how shared code collects what the folders declare without naming one. Loaded
    once per set of workloads; a workload that declares none is left out."""
    return _declared_in((tuple(tpu_stacks.__path__), tuple(_registered.values())), capability)


@contextmanager
def registered(extra: Workload) -> Iterator[Workload]:
    """A workload from outside the package (a plugin of a user, a test's toy) while the block runs."""
    if extra.name in _registered or extra.name in {w.name for w in _found_in(tuple(tpu_stacks.__path__))}:
        raise ValueError(f"workload {extra.name!r} is registered already")
    _registered[extra.name] = extra
    try:
        yield extra
    finally:
        del _registered[extra.name]
