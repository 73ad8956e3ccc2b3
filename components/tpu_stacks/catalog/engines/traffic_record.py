"""The traffic model's record of one serving engine (`EngineTraffic`) and one build's fitted efficiencies
(`Calibration`), apart from the tables (catalog/engine_traffic.py) so that a workload folder's engine declaration
(catalog/engines/declared.py) can name the type without importing the tables that collect it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from tpu_stacks.catalog.engines.record import Engine, EngineVersion
from tpu_stacks.catalog.model_shape import ModelArchitecture
from tpu_stacks.catalog.tpu import SliceShape

KvCache = Literal["paged", "per-slot"]


@dataclass(frozen=True)
class Calibration:
    """The fractions of the roofline one engine build reaches on one generation, fitted to published rows.

    A decode step reads the weights (`weights`: fraction of HBM bandwidth) and every cached token of every
    sequence, attending over it (`kv`: its own fraction, since paged-attention kernels reach less of the
    bandwidth than a weight matmul); a step's matmuls over all its tokens run at `compute` of the peak for the
    dtype the matmuls run in."""

    generation: str
    build: str
    """The engine build the rows measured (not necessarily the build a stack pins: the figure says which)."""
    weights: float
    kv: float
    compute: float
    rows: tuple[str, ...]
    """Ids of the rows of tpu_stacks.catalog.throughput_measurements the numbers are fitted on."""
    implementation: str | None = None
    """The model implementation every one of those rows ran (`Measurement.implementation`): an engine that runs a
    model through one of several implementations (vLLM TPU: tpu-inference's JAX model or vLLM's PyTorch one) reaches
    different fractions with each, so a calibration speaks for its own; None: the engine has one."""


@dataclass(frozen=True)
class EngineTraffic:
    """One serving engine as the traffic model and the pack's checks use it."""

    sizing_engine: Engine
    """The engine tpu_stacks.sizing counts its memory as (ServingRequest.engine)."""
    kv_cache: KvCache
    """`paged`: pages hold the tokens a sequence has, so one sequence of the max length is the floor and the
    engine's max-sequences flag only a cap; `per-slot`: a full cache length is reserved per batch slot and the
    batch is the engine's fixed batch flag."""
    builds: tuple[EngineVersion, ...]
    """The pinned builds the stacks run: a published measurement is evidence only for one of these. The last is the
    newest, whose served generations bound a single-host replica."""
    calibrations: tuple[Calibration, ...]
    """One fitted record per generation the published rows cover (tpu_stacks.traffic.fit refits them and
    tests/traffic/test_calibration.py fails when these constants drift from the fit)."""
    borrowed: tuple[tuple[str, str], ...] = ()
    """(generation, calibrated generation): a generation the engine serves with no row of its own is modelled
    with another generation's efficiencies, and every figure says so (flagged, never silent)."""
    default_batched_tokens: Mapping[str, int] | None = None
    """Tokens one engine step takes when the server's arguments do not say (vLLM `--max-num-batched-tokens`), by
    generation: the engine's own default there, not a stack's; None: the engine prefills a whole prompt apart from the
    decode steps (JetStream)."""
    multi_host: EngineVersion | None = None
    """The record whose served generations bound a replica across the hosts of a slice (None: single host only)."""
    page_tokens: Callable[[int, int], int] | None = None
    """Tokens per KV page the pinned build picks when the server is not given one, from (max model length, max
    sequences); None: the traffic model's fallback (catalog says why per engine)."""
    memory_fraction: float | None = None
    """Fraction of HBM the pinned build takes for weights, activations and KV cache when not told (vLLM
    `--gpu-memory-utilization`); None: sizing's usable fraction."""
    implementation: Callable[[ModelArchitecture], str | None] | None = None
    """Which implementation the pinned build runs a model with, from its recorded registry (vLLM:
    catalog/engine_models.py `vllm_implementation`); None: the engine has one implementation."""
    implementation_names: Mapping[str, str] | None = None
    """What each implementation is, in words a user reads in a flag (vLLM: catalog/engine_models.py
    `VLLM_IMPLEMENTATIONS`); the code name stands alone where none is given."""
    async_batches: int = 1
    """Engine steps scheduled ahead (the engine's batch queue) when the server schedules asynchronously: the engine
    schedules the next step before it waits for the last one's output (vLLM `--async-scheduling`: two); 1: it
    schedules a step only once the last one returned (or the engine has no such mode)."""
    async_by_default: bool = False
    """Whether the pinned build schedules asynchronously when the server's arguments do not say."""
    uncalibrated: str = ""
    """Why an engine has no calibration at all (no published row measures it): its traffic figures are refused with
    this reason, while its KV-cache model and deployable slices still serve the pack and the sizing."""

    @property
    def fixed_batch(self) -> bool:
        """The engine decodes exactly its configured batch (per-slot KV), not up to a cap."""
        return self.kv_cache == "per-slot"

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(build.version for build in self.builds)

    def kv_tokens(self, context: int, input_tokens: int, output_tokens: int) -> int:
        """Tokens of KV one sequence holds: the full context per slot, or the tokens it has when paged."""
        return context if self.kv_cache == "per-slot" else input_tokens + output_tokens

    def implementation_of(self, model: ModelArchitecture) -> str | None:
        """The implementation the pinned build runs `model` with (None: the engine has one, or it is unknown)."""
        return self.implementation(model) if self.implementation is not None else None

    def calibration(self, generation: str, model: ModelArchitecture | None = None) -> tuple[Calibration | None, str]:
        """The calibration for `model` on the generation and a flag (empty when it is the generation's own, fitted
        on rows of the implementation the pinned build runs `model` with); (None, why) when the engine has none
        for the generation. The nearest stands in, flagged: the generation's own of another implementation (the
        first listed), else the generation it borrows from (its calibration of the same implementation first)."""
        wanted = self.implementation_of(model) if model is not None and self.implementation is not None else None
        lender = None
        candidates = [c for c in self.calibrations if c.generation == generation]
        if not candidates:
            lender = dict(self.borrowed).get(generation)
            if lender is None:
                if not self.calibrations and self.uncalibrated:
                    return None, self.uncalibrated
                calibrated = ", ".join(dict.fromkeys(c.generation for c in self.calibrations))
                return None, f"no calibration for {self.sizing_engine} on {generation} (calibrated: {calibrated})"
            candidates = [c for c in self.calibrations if c.generation == lender]
        found = next((c for c in candidates if c.implementation == wanted), candidates[0])
        flags = []
        if lender is not None:
            flags.append(f"no published row on {generation}: efficiencies of {lender} ({found.build}) used")
        if model is not None and self.implementation is not None and found.implementation != wanted:
            where = found.generation
            named = self._named(wanted)
            runs = (
                f"the pinned build runs {model.architecture} as {named}, which no fitted row on {where} ran"
                if wanted
                else f"which implementation the pinned build runs {model.name} with is unknown (no model class)"
            )
            flags.append(f"{runs}: efficiencies fitted on rows of {self._named(found.implementation)} used")
        return found, "; ".join(flags)

    def _named(self, implementation: str | None) -> str:
        """An implementation as a flag names it: what it is, then its code name (`MODEL_IMPL_TYPE`'s value)."""
        return (self.implementation_names or {}).get(implementation or "", str(implementation))

    def batched_tokens(self, generation: str, given: int | None) -> int | None:
        """Tokens one step takes on `generation`: the server's own setting when it gives one, else the engine's
        default there (None: the engine does not chunk prompts into its decode steps)."""
        if given is not None or self.default_batched_tokens is None:
            return given
        return self.default_batched_tokens[generation]

    @property
    def async_switch(self) -> bool:
        """Whether the server has an asynchronous scheduling mode to switch (`async_batches` above 1)."""
        return self.async_batches > 1

    def steps_in_flight(self, async_scheduling: bool | None) -> int:
        """Steps already scheduled when the engine next takes a request that arrived while it stepped (its batch
        queue): `async_batches` when the server schedules asynchronously (`async_scheduling`, None: the pinned
        build's default), else 1."""
        scheduling_ahead = self.async_by_default if async_scheduling is None else async_scheduling
        return self.async_batches if scheduling_ahead else 1

    def deploys(self, shape: SliceShape) -> bool:
        """Whether the engine's stack serves one replica on `shape`."""
        if shape.multi_host:
            return self.multi_host is not None and self.multi_host.serves_generation(shape.generation)
        return self.builds[-1].serves_generation(shape.generation)
