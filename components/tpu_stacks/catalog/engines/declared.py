"""An engine a workload folder declares itself (`<workload>/engine.py`), and the collection of them.

Why: adding an engine should be a folder, not edits across the catalogue. The catalogue's shared tables (the engine
records, the traffic model's entries, the serving APIs, the model-class checks) each hold the engines shared code
names (catalog/engines CATALOGUED, each with its reason in WHY_HERE) and add every `EngineDeclaration` a workload's
descriptor names (`Workload.engine`, a `Ref` loaded on first use through the registry), so the decision layer stays
pure and no shared module names the engine. An engine that one workload runs is declared this way, in its folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tpu_stacks.catalog.engines.record import EngineVersion

if TYPE_CHECKING:
    from tpu_stacks.catalog.engines.dtypes import DtypeRule
    from tpu_stacks.catalog.engines.serving_api import ServingApi
    from tpu_stacks.catalog.engines.traffic_record import EngineTraffic
    from tpu_stacks.catalog.model_shape import ModelArchitecture


@dataclass(frozen=True)
class GatewaySupport:
    """Whether GKE Inference Gateway's endpoint picker can front the engine's replicas, and why (not)."""

    fronts: bool
    why: str
    """The reason, in a sentence a user reads: what the picker needs that the pinned engine has or lacks."""


@dataclass(frozen=True)
class EngineDeclaration:
    """Everything the catalogue's shared tables know of one engine, declared in its workload's folder."""

    versions: tuple[EngineVersion, ...]
    """Its pinned records, oldest first (the last is the newest); appended to catalog/engines ENGINES."""
    api: ServingApi
    """What its server speaks over HTTP (catalog/inference_gateway.SERVING_APIS)."""
    gateway: GatewaySupport
    """Can the gateway front it, and if not why: a capability, not a name list in gateway code."""
    traffic: EngineTraffic | None = None
    """Its traffic-model entry (catalog/engine_traffic.TRAFFIC), None when the traffic model does not know it."""
    check_architecture: Callable[[ModelArchitecture, str, str], None] | None = None
    """`(model, key, value)`: refuse a config.json class the pinned release cannot serve in one line
    (catalog/engine_models.check_architecture); None: it judges none."""
    dtypes: DtypeRule | None = None
    """How its `--dtype`, `--kv-cache-dtype` and `--quantization` values and `--dtype auto` map to the sizing's dtypes
    (catalog/engines/dtypes.py), read by its plan and the policy pack; None: the pack does not size its servers."""

    @property
    def name(self) -> str:
        """The engine's catalogue name (EngineVersion.engine)."""
        return self.versions[-1].engine


def declarations() -> tuple[EngineDeclaration, ...]:
    """Every engine the workload folders declare, by workload name (the registry finds and loads them)."""
    from tpu_stacks import registry  # the registry finds the folders; imported here so the catalogue loads first

    found: list[EngineDeclaration] = []
    for workload, value in registry.declared("engine"):
        if not isinstance(value, EngineDeclaration):
            raise TypeError(f"{workload.package}: Workload.engine names {value!r}, not an EngineDeclaration")
        found.append(value)
    return tuple(found)
