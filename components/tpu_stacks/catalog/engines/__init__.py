"""The engine catalogue and the lookups over it: per serving or training engine and pinned version (their record in
record.py), which container flags size the workload and which metrics the engine exports, as frozen typed data with
their sources.

Where an engine is declared (issue 34, docs/architecture.md "Adding a workload"): an engine that one workload runs
is declared in that workload's folder (`<workload>/engine.py`, an `EngineDeclaration` its descriptor names:
JetStream, MaxText, Saxml, SGLang-JAX), and this package collects it through the registry (declared.py). An engine
that shared code must name has its module here (CATALOGUED), with the reason in `WHY_HERE`;
tests/catalog/test_engine_homes.py fails when a record here is imported by no shared code outside the folders of
the workloads that run it.

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

from typing import TYPE_CHECKING, Any

from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.dtypes import DtypeRule
from tpu_stacks.catalog.engines.epp import EPP
from tpu_stacks.catalog.engines.ray import RAY, RAY_SERVE
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.engines.vllm import VLLM, VLLM_DTYPES
from tpu_stacks.catalog.image_users import HELPER_IMAGE_USERS, ImageUser

if TYPE_CHECKING:
    from tpu_stacks.catalog.model_shape import ModelArchitecture

CATALOGUED: tuple[EngineVersion, ...] = (VLLM, RAY, RAY_SERVE, EPP, ROUTER)
"""The engines this package records itself, because shared code names them (`WHY_HERE`); a workload folder declares
the engine only it runs (`<workload>/engine.py`)."""

WHY_HERE: dict[str, str] = {
    "vllm": "shared code outside the vLLM folder imports its record: Ray Serve's multi-host path (RAY_SERVE exports "
    "its metrics through Ray; gcp/monitoring/rayserve.py) and the policy pack's ray_serve, inference_pools (the "
    "picker's pool checks read vLLM TPU's flags) and engine_args rules",
    "ray": "two workloads run it (Ray Train's RayCluster and multi-host vLLM's RayService), and the policy pack's "
    "ray_serve rule and the preview's dashboard check import its records",
    "epp": "the gateway's endpoint picker and its successor llm-d's router: the gateway, not a workload "
    "(catalog/inference_gateway.py and catalog/pickers.py read their records)",
}
"""Why each engine of CATALOGUED is recorded here and not in a workload's folder: which shared code names it."""


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


CATALOGUED_DTYPES: dict[str, DtypeRule] = {VLLM.engine: VLLM_DTYPES}
"""The dtype rules of the catalogue's own paged-KV engines; a workload folder's engine declares its own."""


def dtype_rules() -> dict[str, DtypeRule]:
    """Every engine's dtype rule by engine name: each workload folder's declaration's and the catalogue's own (which
    a declaration of the same name does not override)."""
    declared = {d.name: d.dtypes for d in declarations() if d.dtypes is not None}
    return {**declared, **CATALOGUED_DTYPES}


def dtype_rule(engine: EngineVersion | str) -> DtypeRule | None:
    """The engine's dtype rule: the catalogue's own or its workload folder's declaration's; None when it declares
    none (the pack then says it cannot size the server, never guesses)."""
    return dtype_rules().get(engine if isinstance(engine, str) else engine.engine)


def served_weight_dtype(engine: str, architecture: ModelArchitecture) -> str:
    """The weight dtype an engine serves a model in when told nothing (its `--dtype auto` rule), else the
    checkpoint's own: what `tpu-stacks size` models without `--dtype`, and so what its command leaves out."""
    rule = dtype_rule(engine)
    return rule.auto(architecture) if rule is not None else architecture.serving_dtype
