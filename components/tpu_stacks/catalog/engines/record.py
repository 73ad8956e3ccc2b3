"""What the engine catalogue records of one engine at one pinned version (EngineVersion): the flags that size its
workload, the metrics it exports, its image and its user, as frozen typed data. The records themselves are in this
package's modules, one per engine; the package (__init__.py) holds them all and answers lookups.

Metric names are given as Managed Prometheus stores them: `prometheus.googleapis.com/<name>/<kind>`,
which the Custom Metrics Stackdriver Adapter spells `prometheus.googleapis.com|<name>|<kind>`
([K-VLLM] vllm-hpa.yaml). A Prometheus counter is exported with `_total` appended.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.image_users import ImageUser

Engine = Literal["vllm", "jetstream", "saxml", "sglang", "generic"]
"""How `tpu-stacks size` counts a server's memory (tpu_stacks.sizing): the engines it knows by name, any other
sized as `generic`."""

MetricKind = Literal["gauge", "counter", "histogram"]
Meaning = Literal[
    "model",
    "model_name",
    "model_size",
    "tensor_parallel",
    "context",
    "input_length",
    "output_length",
    "batch",
    "max_sequences",
    "prefill_tokens",
    "kv_dtype",
    "weight_dtype",
    "quantization",
    "quantize_weights",
    "quantize_kv_cache",
    "per_device_batch",
    "parallelism",
]
MANAGED_PROMETHEUS_PREFIX = "prometheus.googleapis.com"


class Flag(BaseModel):
    """One container flag that sizes the workload."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """As written: `--max-model-len` (vLLM, JetStream) or `max_target_length` (a MaxText key=value)."""
    meaning: Meaning
    """What the sizing code reads it as."""
    default: str | None = None
    """The engine's default when the flag is absent (None: no default the sizing can use)."""
    aliases: tuple[str, ...] = ()
    """Other spellings the engine accepts (vLLM's `-q` for `--quantization`); the name wins when both are given."""
    note: str = ""


class Metric(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The exported name (counters with `_total`)."""
    kind: MetricKind

    @property
    def managed_prometheus(self) -> str:
        """The name the Custom Metrics Stackdriver Adapter serves it under (an HPA's metric name)."""
        return f"{MANAGED_PROMETHEUS_PREFIX}|{self.name}|{self.kind}"


class Served(BaseModel):
    """A TPU generation an engine version is known to serve, and its own name for it where it needs one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generation: str
    """The catalogue's name (catalog/tpu.py); tests/catalog/test_engines.py checks it is one."""
    platform: str | None = None
    """The engine's name for the generation (Saxml's `--platform_chip`, Ray's accelerator type)."""
    source: str


class Renamed(BaseModel):
    """A metric the engine exported under another name before the pinned version (a user's old HPA or query)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    old: str
    new: str
    since: str
    """The engine version that deprecated the old name (it was hidden, then removed, after it)."""
    source: str


class CommandMarker(BaseModel):
    """One way a container's command shows that it runs this engine (for a raw workload whose image is not
    catalogued): `contains` is text of its command line (the arguments joined by spaces); `program` a token that
    ends with it, followed by the token `then` when one is given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contains: str | None = None
    program: str | None = None
    then: str | None = None

    def marks(self, tokens: list[str]) -> bool:
        """Whether the command's tokens carry this marker."""
        if self.contains is not None and self.contains in " ".join(tokens):
            return True
        if self.program is None:
            return False
        if self.then is None:
            return any(t.endswith(self.program) for t in tokens)
        return any(t.endswith(self.program) and n == self.then for t, n in zip(tokens, tokens[1:], strict=False))


EngineName = Literal["vllm", "jetstream", "maxtext", "saxml", "ray", "epp", "sglang"]
"""The catalogued engines, for the type checker (a test checks it against `ENGINES`)."""


class EngineVersion(BaseModel):
    """One engine at one pinned version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: EngineName
    version: str
    """The image tag or source revision the components pin."""
    images: tuple[str, ...]
    """Image repositories (no tag) that run this engine; a raw workload is recognised by them."""
    flags: tuple[Flag, ...] = ()
    metric_prefix: str | None = None
    """Every metric this engine exports starts with it; None when no metrics are catalogued."""
    metrics: tuple[Metric, ...] = ()
    metrics_source: str | None = None
    """Where the metric names of this version are defined (a URL at the pinned revision where one exists)."""
    renamed: tuple[Renamed, ...] = ()
    """Metric names earlier versions exported that this one exports under a new name only."""
    metrics_port: int | None = None
    """The port its pods serve Prometheus metrics on, `/metrics` (None: it serves none at this version)."""
    user: ImageUser | None = None
    """Who its image runs as (k8s/security.harden applies it); None: it runs in another engine's image."""
    serves: tuple[Served, ...] | None = None
    """The TPU generations it is known to serve; None: every catalogued generation."""
    workload: Literal["serve", "train"] | None = None
    """What it runs: a model server or a trainer (None: neither, e.g. Ray's own or the endpoint picker's)."""
    arguments: Literal["flags", "settings"] = "flags"
    """How its container arguments are written: `--flag value` / `--flag=value`, or MaxText's `key=value`."""
    underscored_flags: bool = False
    """Its parser reads a flag's name with underscores as with dashes (`--max_num_seqs` is `--max-num-seqs`): the
    pack reads the server's arguments the same way."""
    commands: tuple[CommandMarker, ...] = ()
    """How a container's command shows it runs this engine when its image is not catalogued."""
    model_after: str | None = None
    """The subcommand whose next argument is the model when no model flag is given (`vllm serve <model>`)."""
    source: str

    @property
    def served_generations(self) -> tuple[str, ...] | None:
        """The generations' names, in catalogue order as written (None: all of them)."""
        return None if self.serves is None else tuple(s.generation for s in self.serves)

    def serves_generation(self, name: str) -> bool:
        return self.serves is None or any(s.generation == name for s in self.serves)

    def platform(self, generation_name: str) -> str | None:
        """The engine's own name for a generation (None when it names none or does not serve it)."""
        return next((s.platform for s in self.serves or () if s.generation == generation_name), None)

    def image_user(self) -> ImageUser:
        """`user` for a pod that runs this engine's own image (ValueError when it has none)."""
        if self.user is None:
            raise ValueError(f"{self.engine} {self.version} has no image of its own")
        return self.user

    def scrape_port(self) -> int:
        """`metrics_port` where the caller knows the engine exports metrics (ValueError otherwise)."""
        if self.metrics_port is None:
            raise ValueError(f"{self.engine} {self.version} serves no metrics")
        return self.metrics_port

    def flag(self, meaning: Meaning) -> Flag | None:
        return next((f for f in self.flags if f.meaning == meaning), None)

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def renamed_to(self, name: str) -> Renamed | None:
        """The rename of an old metric name this version no longer exports (None: never renamed)."""
        return next((r for r in self.renamed if r.old == name), None)


def gauges(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="gauge") for n in names)


def counters(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="counter") for n in names)


def histograms(*names: str) -> tuple[Metric, ...]:
    return tuple(Metric(name=n, kind="histogram") for n in names)
