"""The cheapest (generation, topology, replicas) that carries a traffic target within its latency limits.

Every slice shape of every generation considered is judged on its own (`evaluate_slice`): what one replica
serves (a GIQ profile that matches, else a published measurement of the pinned engine build that matches, with
the roofline scaled to it, else the calibrated roofline of tpu_stacks.traffic.model), how many replicas the
target needs, and what they cost on the target's pricing model. `size_for_traffic` ranks them: candidates
that meet the target first; among those, priced before unknown, then by the price per hour of all replicas,
then by cost per million output tokens; unknown prices by total chips. A price no source gives is never taken as free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic_of
from tpu_stacks.catalog.engines.record import Engine
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, Measurement
from tpu_stacks.catalog.tpu import GENERATIONS, SliceShape, all_slice_shapes, generation
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import serving_parallelism
from tpu_stacks.traffic.model import (
    ENGINE_EFFICIENCY,
    MAX_BATCH,
    Limit,
    OperatingPoint,
    Workload,
    choose,
    efficiency,
    operating_point,
    replicas_for,
)
from tpu_stacks.traffic.pricing import cost_per_million, hourly_price
from tpu_stacks.traffic.profiles import Profile
from tpu_stacks.traffic.target import TrafficTarget

MAX_REPLICA_CHIPS = 256
"""Largest slice one serving replica is sized on: one v5e/v6e pod. Llama 3.1 405B in bf16 fits in 64 v5e
chips; beyond a pod, more replicas are the answer, not a larger one."""
LENGTH_TOLERANCE = 2.0
"""A measurement speaks for a target whose input and output lengths are each within this factor of its own."""


@dataclass(frozen=True)
class PerReplica:
    output_tokens_per_second: float | None
    input_tokens_per_second: float | None
    ntpot_ms: float | None
    ttft_ms: float | None
    batch: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "output_tokens_per_second": _round(self.output_tokens_per_second, 1),
            "input_tokens_per_second": _round(self.input_tokens_per_second, 1),
            "ntpot_ms": _round(self.ntpot_ms, 2),
            "ttft_ms": _round(self.ttft_ms, 1),
            "batch": self.batch,
        }


def _round(value: float | None, digits: int) -> float | None:
    return round(value, digits) if value is not None else None


@dataclass(frozen=True)
class TrafficCandidate:
    """One slice shape judged for a target: replicas, per-replica figures, the basis and the price."""

    generation: str
    topology: str
    machine_type: str
    chips_per_replica: int
    hosts: int
    chips_per_host: int
    tensor_parallel: int
    pipeline_parallel: int
    replicas: int | None
    meets: bool
    why: str
    per_replica: PerReplica
    basis: str
    source: str
    measured_figures: tuple[str, ...]
    """Which `per_replica` figures a measurement or profile gave (the others are modelled or derived)."""
    binding_limit: Limit | None
    price_per_hour: float | None
    price_source: str
    price_as_of: str | None
    cost_per_million_output_tokens: float | None
    cost_per_million_input_tokens: float | None

    @property
    def total_chips(self) -> int:
        return self.chips_per_replica * (self.replicas or 1)

    def rank(self) -> tuple[object, ...]:
        unknown = self.price_per_hour is None
        return (
            not self.meets,
            unknown,
            self.total_chips if unknown else self.price_per_hour,
            self.cost_per_million_output_tokens or 0.0,
            self.total_chips,
            self.hosts,  # on a tie, one VM per replica over several (ct6e-standard-8t over two 4t VMs)
            self.generation,
            self.chips_per_replica,
            self.machine_type,
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "generation": self.generation,
            "topology": self.topology,
            "machine_type": self.machine_type,
            "chips_per_replica": self.chips_per_replica,
            "hosts": self.hosts,
            "chips_per_host": self.chips_per_host,
            "tensor_parallel": self.tensor_parallel,
            "pipeline_parallel": self.pipeline_parallel,
            "replicas": self.replicas,
            "meets": self.meets,
            "why": self.why,
            "per_replica": self.per_replica.as_dict(),
            "basis": self.basis,
            "source": self.source,
            "measured_figures": list(self.measured_figures),
            "binding_limit": self.binding_limit,
            "price_per_hour": self.price_per_hour,
            "price_source": self.price_source,
            "price_as_of": self.price_as_of,
            "cost_per_million_output_tokens": _round(self.cost_per_million_output_tokens, 4),
            "cost_per_million_input_tokens": _round(self.cost_per_million_input_tokens, 4),
        }


@dataclass(frozen=True)
class TrafficAnswer:
    model: ResolvedModel
    target: TrafficTarget
    choice: TrafficCandidate | None
    candidates: tuple[TrafficCandidate, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model.id,
            "target": self.target.as_dict(),
            "choice": self.choice.as_dict() if self.choice else None,
            "candidates": [candidate.as_dict() for candidate in self.candidates],
        }


PINNED_VERSIONS: dict[str, tuple[str, ...]] = {name: traffic.versions for name, traffic in TRAFFIC.items()}
"""The engine versions the stacks run (tpu_stacks.catalog.engine_traffic): a row is evidence only for its own
build."""


def matching_measurement(
    model: ResolvedModel, shape: SliceShape, workload: Workload, rows: Sequence[Measurement] = MEASUREMENTS
) -> Measurement | None:
    """The newest published row of the pinned engine build, model, generation, chips and dtype at a similar
    request shape (a row of another build calibrates the model but is no evidence for this stack)."""

    def near(a: int, b: int) -> bool:
        return max(a, b) / min(a, b) <= LENGTH_TOLERANCE

    found = [
        row
        for row in rows
        if row.engine == workload.engine
        and row.engine_version in PINNED_VERSIONS.get(workload.engine, ())
        and row.model == model.architecture.name
        and row.generation == shape.generation
        and row.chips == shape.chips
        and row.weight_dtype == workload.weight_dtype
        and near(row.input_tokens, workload.input_tokens)
        and near(row.output_tokens, workload.output_tokens)
    ]
    return max(found, key=lambda row: row.date) if found else None


@dataclass(frozen=True)
class _Served:
    per_replica: PerReplica
    basis: str
    source: str
    limit: Limit | None
    why: str = ""
    measured: tuple[str, ...] = ()
    """The per-replica figures a measurement or profile gave; the others are modelled or derived."""


def _given(**figures: float | None) -> tuple[str, ...]:
    return tuple(name for name, value in figures.items() if value is not None)


def _from_profile(profile: Profile, target: TrafficTarget, label: str) -> _Served:
    """The profile's operating point with the most output that meets the latency limits."""

    def meets(ntpot: float | None, ttft: float | None) -> bool:
        ntpot_ok = target.ntpot_ms is None or (ntpot is not None and ntpot <= target.ntpot_ms)
        ttft_ok = target.ttft_ms is None or (ttft is not None and ttft <= target.ttft_ms)
        return ntpot_ok and ttft_ok

    usable = [p for p in profile.points if meets(p.ntpot_ms, p.ttft_ms)]
    if not usable:
        return _Served(
            PerReplica(None, None, None, None, None),
            "profile",
            label,
            "ntpot-target" if target.ntpot_ms is not None else "ttft-target",
            "no operating point of the GIQ profile meets the latency limits",
        )
    best = max(usable, key=lambda p: p.output_tokens_per_second)
    busier = [p for p in profile.points if p.output_tokens_per_second > best.output_tokens_per_second]
    limit: Limit | None = None  # the profile's busiest point: nothing measured beyond it
    if busier:
        nearest = min(busier, key=lambda p: p.output_tokens_per_second)
        missed_ttft = target.ttft_ms is not None and (nearest.ttft_ms is None or nearest.ttft_ms > target.ttft_ms)
        limit = "ttft-target" if missed_ttft else "ntpot-target"
    derived = best.queries_per_second * target.input_tokens if best.queries_per_second else None
    return _Served(
        PerReplica(best.output_tokens_per_second, derived, best.ntpot_ms, best.ttft_ms, None),
        "profile",
        label,
        limit,
        measured=_given(
            output_tokens_per_second=best.output_tokens_per_second, ntpot_ms=best.ntpot_ms, ttft_ms=best.ttft_ms
        ),
    )


def _modelled(
    model: ResolvedModel,
    shape: SliceShape,
    workload: Workload,
    target: TrafficTarget,
    cap: int,
    scale: float = 1.0,
    row: Measurement | None = None,
) -> _Served:
    """The roofline's operating point; `scale` and `row` when a measurement of this slice scales it (below)."""
    choice = choose(
        model, shape, workload, ntpot_ms=target.ntpot_ms, ttft_ms=target.ttft_ms, max_batch=cap, scale=scale
    )
    source = (
        f"roofline model ({workload.engine} at {ENGINE_EFFICIENCY[workload.engine]:.0%} of the HBM-bandwidth and"
        f" compute bounds; docs/sizing-for-traffic.md)"
    )
    if row is not None:
        source += f" scaled by {scale:.2f} to the measured {row.engine_build} row on this slice: {row.source}"
    if choice.point is None:
        return _Served(PerReplica(None, None, None, None, None), "model", source, choice.limit, choice.why)
    return _Served(_per_replica(choice.point), "model", source, choice.limit)


def _per_replica(point: OperatingPoint) -> PerReplica:
    return PerReplica(
        point.output_tokens_per_second, point.input_tokens_per_second, point.ntpot_ms, point.ttft_ms, point.batch
    )


def _measured(
    row: Measurement,
    model: ResolvedModel,
    shape: SliceShape,
    workload: Workload,
    target: TrafficTarget,
    max_batch: int,
) -> _Served | None:
    """The published throughput at the row's batch, with latencies that agree with it; else the model scaled to it.

    The roofline is scaled by measured / modelled rate at the row's batch (every modelled time scales with
    1 / that factor), so at the row's batch the model gives the measured rate and per-token time is batch /
    measured rate, not the unscaled model's (which would contradict the measurement). The row's own latencies
    win where it gives them. When the row's load misses a latency limit or runs more sequences than the cap
    allows, the scaled model picks a smaller batch (nothing is measured beyond the row's batch): a tighter
    limit then never yields more per replica than the measurement. None when the model cannot reach the row's
    batch (the measurement does not fit the model's view of this slice)."""
    if row.batch is not None:
        batch_size = row.batch
    else:  # the engine's scheduler chose it: as many as the KV cache holds, under the row's cap
        cap = row.batch_cap or MAX_BATCH
        chosen = choose(model, shape, workload, ntpot_ms=None, ttft_ms=None, max_batch=cap).point
        if chosen is None:
            return None
        batch_size = chosen.batch
    scale = row.output_tokens_per_second / operating_point(model, shape, workload, batch_size).output_tokens_per_second
    modelled = operating_point(model, shape, workload, batch_size, scale=scale)
    ntpot = row.ntpot_ms if row.ntpot_ms is not None else modelled.ntpot_ms
    ttft = row.ttft_ms if row.ttft_ms is not None else modelled.ttft_ms
    misses = (target.ntpot_ms is not None and ntpot > target.ntpot_ms) or (
        target.ttft_ms is not None and ttft > target.ttft_ms
    )
    if misses or batch_size > max_batch:
        cap = min(max_batch, batch_size - 1 if misses else batch_size)
        if cap < 1:
            return _Served(
                PerReplica(None, None, None, None, None),
                "measured",
                row.source,
                "ttft-target" if target.ttft_ms is not None and ttft > target.ttft_ms else "ntpot-target",
                "the measured load misses the latency limits and no smaller batch is left",
            )
        return _modelled(model, shape, workload, target, cap, scale=scale, row=row)
    output = row.output_tokens_per_second
    shown_batch = f"batch {batch_size}" if row.batch is not None else f"batch {batch_size} (modelled)"
    source = f"{row.engine_build}, {row.input_tokens}/{row.output_tokens} tokens, {shown_batch}: {row.source}"
    return _Served(
        PerReplica(output, output * workload.input_tokens / workload.output_tokens, ntpot, ttft, batch_size),
        "measured",
        source,
        modelled.bound,
        measured=_given(output_tokens_per_second=output, ntpot_ms=row.ntpot_ms, ttft_ms=row.ttft_ms, batch=row.batch),
    )


def evaluate_slice(
    model: ResolvedModel,
    shape: SliceShape,
    target: TrafficTarget,
    *,
    engine: Engine = "vllm",
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    max_model_len: int | None = None,
    max_batch: int = MAX_BATCH,
    profiles: Sequence[Profile] = (),
    measurements: Sequence[Measurement] = MEASUREMENTS,
) -> TrafficCandidate:
    """Replicas of `shape` the target needs, whether they meet it (and why not), and what they cost."""
    efficiency(engine)  # refuses an engine without a calibrated model, before any work
    workload = Workload(
        engine=engine,
        input_tokens=target.input_tokens,
        output_tokens=target.output_tokens,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        max_model_len=max_model_len,
    )
    served: _Served | None = None
    profile = next((p for p in profiles if p.matches(model, shape, engine)), None)
    if profile is not None:
        served = _from_profile(profile, target, profile.label)
    if served is None:
        row = matching_measurement(model, shape, workload, measurements)
        served = _measured(row, model, shape, workload, target, max_batch) if row else None
    if served is None:
        served = _modelled(model, shape, workload, target, max_batch)
    plan = serving_parallelism(shape)
    price = hourly_price(shape.generation, shape.chips, target.pricing)
    per = served.per_replica
    replicas = (
        replicas_for(target.output_tokens_per_second, per.output_tokens_per_second)
        if per.output_tokens_per_second
        else None
    )
    cost = (
        cost_per_million(price.usd_per_hour, per.output_tokens_per_second, per.input_tokens_per_second)
        if price.usd_per_hour is not None and per.output_tokens_per_second
        else None
    )
    return TrafficCandidate(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        chips_per_replica=shape.chips,
        hosts=plan.hosts,
        chips_per_host=plan.chips_per_host,
        tensor_parallel=plan.tensor_parallel,
        pipeline_parallel=plan.pipeline_parallel,
        replicas=replicas,
        meets=replicas is not None,
        why=served.why,
        per_replica=per,
        basis=served.basis,
        source=served.source,
        measured_figures=served.measured,
        binding_limit=served.limit,
        price_per_hour=round(price.usd_per_hour * replicas, 4) if price.usd_per_hour is not None and replicas else None,
        price_source=price.source,
        price_as_of=price.as_of,
        cost_per_million_output_tokens=cost.per_million_output if cost else None,
        cost_per_million_input_tokens=cost.per_million_input if cost else None,
    )


def deployable(shape: SliceShape, engine: Engine) -> bool:
    """Whether the stacks can serve `engine` on `shape`, from the engine's traffic record (catalog/engine_traffic.py):
    JetStream on one host of a generation its pinned images serve (jetstream/plan.py refuses the rest), vLLM on one
    host of any generation or across the hosts of a slice Ray Serve LLM takes (vllm/multihost_plan.py)."""
    return traffic_of(engine).deploys(shape)


def candidate_shapes(generations: Sequence[str] | None = None, engine: Engine = "vllm") -> list[SliceShape]:
    """Every slice shape a replica may run on: each (topology, machine type) up to MAX_REPLICA_CHIPS chips that the
    engine's stack can deploy; a `--tpu` the engine serves on no slice is refused in one line."""
    names = (
        [generation(name, key="--tpu").name for name in generations] if generations else [g.name for g in GENERATIONS]
    )
    shapes = [
        shape
        for name in names
        for shape in all_slice_shapes(name)
        if shape.chips <= MAX_REPLICA_CHIPS and deployable(shape, engine)
    ]
    if generations and not shapes:
        served = [g.name for g in GENERATIONS if any(deployable(s, engine) for s in all_slice_shapes(g.name))]
        raise UserError(
            "--tpu",
            ", ".join(generations),
            f"has no slice the {engine} stack deploys",
            f"use one of {', '.join(served)}",
        )
    return shapes


def size_for_traffic(
    model: ResolvedModel,
    target: TrafficTarget,
    *,
    engine: Engine = "vllm",
    generations: Sequence[str] | None = None,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    max_model_len: int | None = None,
    max_batch: int = MAX_BATCH,
    profiles: Sequence[Profile] = (),
) -> TrafficAnswer:
    """Judge every candidate shape and pick the cheapest that meets the target (None when none does)."""
    candidates = sorted(
        (
            evaluate_slice(
                model,
                shape,
                target,
                engine=engine,
                weight_dtype=weight_dtype,
                kv_dtype=kv_dtype,
                max_model_len=max_model_len,
                max_batch=max_batch,
                profiles=profiles,
            )
            for shape in candidate_shapes(generations, engine)
        ),
        key=TrafficCandidate.rank,
    )
    choice = candidates[0] if candidates and candidates[0].meets else None
    return TrafficAnswer(model=model, target=target, choice=choice, candidates=tuple(candidates))
