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

from tpu_stacks.catalog.engine_traffic import traffic_of
from tpu_stacks.catalog.engines.record import Engine
from tpu_stacks.catalog.model_shape import DEFAULT_KV_DTYPE
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, Measurement
from tpu_stacks.catalog.tpu import GENERATIONS, SliceShape, all_slice_shapes, generation
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import serving_parallelism
from tpu_stacks.traffic.evidence import (
    PINNED_VERSIONS,
    PerReplica,
    Served,
    flagged,
    from_measurement,
    from_model,
    from_profile,
    matching_measurement,
    refuted,
    round_to,
)
from tpu_stacks.traffic.model import MAX_BATCH, Limit, Workload, replicas_for
from tpu_stacks.traffic.pricing import cost_per_million, hourly_price
from tpu_stacks.traffic.profiles import Profile
from tpu_stacks.traffic.target import TrafficTarget

MAX_REPLICA_CHIPS = 256
"""Largest slice one serving replica is sized on: one v5e/v6e pod. Llama 3.1 405B in bf16 fits in 64 v5e
chips; beyond a pod, more replicas are the answer, not a larger one."""

__all__ = ["PINNED_VERSIONS", "PerReplica", "TrafficAnswer", "TrafficCandidate", "evaluate_slice", "size_for_traffic"]


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
            "cost_per_million_output_tokens": round_to(self.cost_per_million_output_tokens, 4),
            "cost_per_million_input_tokens": round_to(self.cost_per_million_input_tokens, 4),
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


def evaluate_slice(
    model: ResolvedModel,
    shape: SliceShape,
    target: TrafficTarget,
    *,
    engine: Engine = "vllm",
    weight_dtype: str = "bf16",
    kv_dtype: str = DEFAULT_KV_DTYPE,
    max_model_len: int | None = None,
    max_batch: int = MAX_BATCH,
    profiles: Sequence[Profile] = (),
    measurements: Sequence[Measurement] = MEASUREMENTS,
    batched_tokens: int | None = None,
    async_scheduling: bool | None = None,
) -> TrafficCandidate:
    """Replicas of `shape` the target needs, whether they meet it (and why not), and what they cost."""
    traffic_of(engine)  # refuses an engine without a calibrated model, before any work
    workload = Workload(
        engine=engine,
        input_tokens=target.input_tokens,
        output_tokens=target.output_tokens,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        max_model_len=max_model_len,
        batched_tokens=batched_tokens,
        max_num_seqs=max_batch,
        async_scheduling=async_scheduling,
    )
    served: Served | None = None
    profile = next((p for p in profiles if p.matches(model, shape, engine)), None)
    if profile is not None:
        served = from_profile(profile, target, profile.label)
    if served is None:
        row = matching_measurement(model, shape, workload, measurements)
        served = from_measurement(row, model, shape, workload, target, max_batch) if row else None
    if served is None:
        served = refuted(from_model(model, shape, workload, target, max_batch), model, shape, engine, target, profiles)
    plan = serving_parallelism(shape)
    served = flagged(served, model, shape, plan.tensor_parallel, plan.hosts)
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
    kv_dtype: str = DEFAULT_KV_DTYPE,
    max_model_len: int | None = None,
    max_batch: int = MAX_BATCH,
    profiles: Sequence[Profile] = (),
    batched_tokens: int | None = None,
    async_scheduling: bool | None = None,
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
                batched_tokens=batched_tokens,
                async_scheduling=async_scheduling,
            )
            for shape in candidate_shapes(generations, engine)
        ),
        key=TrafficCandidate.rank,
    )
    choice = candidates[0] if candidates and candidates[0].meets else None
    return TrafficAnswer(model=model, target=target, choice=choice, candidates=tuple(candidates))
