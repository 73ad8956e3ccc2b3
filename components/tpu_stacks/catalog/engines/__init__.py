"""The engine catalogue and the lookups over it: per serving or training engine and pinned version (one module
each in this package, their record in record.py), which container flags size the workload and which metrics the
engine exports, as frozen typed data with their sources.

Why: the policy pack must judge programs it did not write. A raw vLLM Deployment carries no
`tpu-stacks.dev/*` annotations, but its own arguments say what it serves (`--model`,
`--max-model-len`, ...); an HPA names the metric it scales on. This package is the one place that
says what those flags mean and which metric names exist, per engine version the components pin,
so the vLLM component's HPA and the pack's checks read the same list.

Sources, per entry (`source`): the tutorials' manifests ([K-VLLM], [K-JETSTREAM], [K-JETSTREAM-CONV],
[K-RAY]; keys resolve in docs/sources.md), the engines' own source at the pinned version, and the engines' docs.
Metric names are given as Managed Prometheus stores them: `prometheus.googleapis.com/<name>/<kind>`,
which the Custom Metrics Stackdriver Adapter spells `prometheus.googleapis.com|<name>|<kind>`
([K-VLLM] vllm-hpa.yaml). A Prometheus counter is exported with `_total` appended.
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.epp import EPP
from tpu_stacks.catalog.engines.jetstream import JETSTREAM
from tpu_stacks.catalog.engines.maxtext import MAXTEXT
from tpu_stacks.catalog.engines.ray import RAY, RAY_SERVE
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.image_users import HELPER_IMAGE_USERS, ImageUser

CATALOGUED: tuple[EngineVersion, ...] = (VLLM, *JETSTREAM, MAXTEXT, RAY, RAY_SERVE, EPP, ROUTER)
"""The engines this package records itself; a workload folder declares its own (`<workload>/engine.py`)."""


def engines() -> tuple[EngineVersion, ...]:
    """Every catalogued engine version: this package's, then each workload folder's (declared.py), in that order."""
    return (*CATALOGUED, *(version for declared in declarations() for version in declared.versions))


def __getattr__(name: str) -> Any:
    """`ENGINES`, collected on use (PEP 562), so the folders' declarations can import this package."""
    if name == "ENGINES":
        return engines()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def image_repository(image: str) -> tuple[str, str]:
    """`repo`, `tag` of an image reference (digest dropped, tag may be empty)."""
    reference = image.split("@", 1)[0]
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, tag = reference.rpartition(":")
        return repo, tag
    return reference, ""


def engine_of_image(image: str) -> EngineVersion | None:
    """The catalogued engine an image runs: the pinned version when the tag matches, else the newest entry."""
    repo, tag = image_repository(image)
    matches = [
        e for e in engines() if repo in e.images or any(repo.endswith(f"/{i.rsplit('/', 1)[-1]}") for i in e.images)
    ]
    if not matches:
        return None
    return next((e for e in matches if e.version == tag), matches[-1])


def engine(name: str) -> EngineVersion:
    """The newest catalogued version of an engine."""
    return [e for e in engines() if e.engine == name][-1]


def trains(name: str) -> bool:
    """Whether the catalogued engine of this name is a trainer (False: a server, or no engine has the name)."""
    return any(e.engine == name and e.workload == "train" for e in engines())


def engine_of_command(tokens: list[str]) -> EngineVersion | None:
    """The first catalogued engine (in `ENGINES` order) whose command markers the container's tokens carry."""
    return next((e for e in engines() if any(m.marks(tokens) for m in e.commands)), None)


def image_users() -> dict[str, ImageUser]:
    """Who every pinned image runs as, by family: the engines' (from their records) and the helper images'."""
    return {**{e.engine: e.user for e in engines() if e.user is not None}, **HELPER_IMAGE_USERS}


def metric_owner(metric_name: str) -> EngineVersion | None:
    """The engine whose metric prefix the name carries (only engines with catalogued metrics)."""
    return next((e for e in engines() if e.metric_prefix and metric_name.startswith(e.metric_prefix)), None)


def managed_prometheus_name(engine_version: EngineVersion, metric_name: str) -> str:
    """The HPA metric name of a catalogued metric; KeyError when the engine does not export it."""
    metric = engine_version.metric(metric_name)
    if metric is None:
        raise KeyError(metric_name)
    return metric.managed_prometheus
