"""Replicas from a traffic target: the stack's slice evaluated by the traffic model, decided before any
resource is declared.

The slice is the one the memory sizing chose (or the user's `topology`): a target never changes the slice,
it changes how many of them serve. `predict` asks the traffic model (`tpu_stacks.traffic.evaluate_slice`,
the model `tpu-stacks size --output-tokens-per-second` ranks candidates with) what one replica of that slice
carries within the latency limits, and how many replicas the target needs (R). A slice that cannot keep a
latency limit at any load is refused in one line naming the limit, with the `size` command that finds one
that can. `replica_range` then applies the one rule every engine shares (`slo_replicas` runs both steps for
an engine's plan):

- the user did not set the maximum: the maximum is R (and at least the minimum);
- the user set it: it must be at least R, else a one-line refusal naming it (a smaller maximum cannot carry
  the target however the autoscaler behaves; a larger one is kept: headroom is the user's call);
- the minimum stays the user's (default 1): below the target the HPA scales in, and the pool with it.

With a latency limit, an autoscaled engine also needs a signal that fires before the limit is broken:
`latency_batch` is the most sequences a replica may run and keep the limits (the engine's cap, so requests
beyond it wait instead of slowing everyone), and `waiting_target` the waiting requests per replica that still
start within the TTFT limit, the HPA's per-pod target on a waiting-requests metric.

Pure: no provider SDK.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.engines import served_weight_dtype
from tpu_stacks.catalog.model_shape import DEFAULT_KV_DTYPE
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.tpu import SliceShape, slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.inputs.field_rules import LARGEST_REPLICAS
from tpu_stacks.objects import annotations as keys
from tpu_stacks.sizing import ServingRequest
from tpu_stacks.slo.spec import SloSpec
from tpu_stacks.traffic import Profile, TrafficCandidate, TrafficTarget, evaluate_slice, read_profiles, size_for_traffic


@dataclass(frozen=True)
class EngineSettings:
    """What the traffic model is told of the engine's settings, by the slice choice (`slo_shape`) and the
    prediction (`predict`) alike: the dtypes the plan sized, the tokens per sequence, the engine's own cap on
    sequences decoded together (vLLM `--max-num-seqs`, JetStream's fixed `--batch_size`: a replica never runs a
    larger batch, whatever the KV cache holds) and its tokens per step (None: the engine's traffic default)."""

    engine: str
    weight_dtype: str
    kv_dtype: str
    context: int
    max_batch: int
    batched_tokens: int | None = None
    async_scheduling: bool | None = None
    """vLLM's `--async-scheduling`/`--no-async-scheduling` as the server is given it (None: neither, the build's
    default): whether a request waits one queued step more before its first (traffic/model.py steps_in_flight)."""

    @classmethod
    def of(
        cls,
        request: ServingRequest,
        engine: str,
        max_batch: int,
        batched_tokens: int | None = None,
        async_scheduling: bool | None = None,
    ) -> EngineSettings:
        """The settings of a plan's sized request (its dtypes and context)."""
        return cls(
            engine, request.weight_dtype, request.kv_dtype, request.context, max_batch, batched_tokens, async_scheduling
        )

    def traffic_arguments(self) -> dict[str, Any]:
        """The keyword arguments of the traffic model's evaluate_slice and size_for_traffic."""
        return {
            "engine": self.engine,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "max_model_len": self.context,
            "max_batch": self.max_batch,
            "batched_tokens": self.batched_tokens,
            "async_scheduling": self.async_scheduling,
        }


class SloPrediction(BaseModel):
    """The target and what the traffic model predicts for one replica of the stack's slice."""

    model_config = ConfigDict(frozen=True)

    output_tokens_per_second: float
    ntpot_ms: float | None
    ttft_ms: float | None
    input_tokens: int
    output_tokens: int
    replicas: int
    """Replicas the target needs (R)."""
    replica_output_tokens_per_second: float
    replica_input_tokens_per_second: float | None
    replica_ntpot_ms: float | None
    replica_ttft_ms: float | None
    """TTFT at the median of the queue at the offered load (p50)."""
    batch: int | None
    """Concurrent requests per replica the prediction assumes (None: a profile's point, which does not say)."""
    basis: str
    """measured, profile or model: how much the pack may trust the figure (its enforcement level)."""
    source: str
    replica_ttft_p99_ms: float | None = None

    def annotations(self) -> dict[str, str]:
        """The workload's annotations (the contract in tpu_stacks.objects.annotations)."""
        return keys.for_slo(
            target={
                keys.SLO_OUTPUT_TOKENS_PER_SECOND: self.output_tokens_per_second,
                keys.SLO_NTPOT_MS: self.ntpot_ms,
                keys.SLO_TTFT_MS: self.ttft_ms,
                keys.SLO_INPUT_TOKENS: self.input_tokens,
                keys.SLO_OUTPUT_TOKENS: self.output_tokens,
            },
            prediction={
                keys.SLO_REPLICAS: self.replicas,
                keys.SLO_REPLICA_OUTPUT_TOKENS_PER_SECOND: self.replica_output_tokens_per_second,
                keys.SLO_REPLICA_NTPOT_MS: self.replica_ntpot_ms,
                keys.SLO_REPLICA_TTFT_MS: self.replica_ttft_ms,
                keys.SLO_BASIS: self.basis,
                keys.SLO_SOURCE: self.source,
            },
        )


def target_of(slo: SloSpec) -> TrafficTarget:
    """The traffic model's target for a section's `slo` (its own defaults for unset request lengths)."""
    lengths = {
        name: value
        for name, value in (("input_tokens", slo.input_tokens), ("output_tokens", slo.output_tokens))
        if value is not None
    }
    return TrafficTarget(
        output_tokens_per_second=slo.output_tokens_per_second, ntpot_ms=slo.ntpot_ms, ttft_ms=slo.ttft_ms, **lengths
    )


def read_slo_profiles(section: str, slo: SloSpec) -> tuple[Profile, ...]:
    """The GIQ profiles `slo.profiles` names (none when unset); a bad file is refused under the section's key."""
    if slo.profiles is None:
        return ()
    try:
        return read_profiles(slo.profiles)
    except UserError as error:
        raise UserError(f"{section}.slo.profiles", error.value, error.problem, error.fix) from None


def size_command(
    model: ResolvedModel, target: TrafficTarget, settings: EngineSettings, profiles: str | None = None
) -> str:
    """The `tpu-stacks size --output-tokens-per-second` command that ranks every slice for this target with the
    engine settings the server runs with: its context, sequence cap and step budget, and its dtypes where they are
    not what `size` models by itself. Each changes the answer: without them `size` ranks for its own defaults."""
    parts = [f"tpu-stacks size {model.id} --output-tokens-per-second {target.output_tokens_per_second:g}"]
    parts += [f"--ntpot-ms {target.ntpot_ms:g}"] if target.ntpot_ms else []
    parts += [f"--ttft-ms {target.ttft_ms:g}"] if target.ttft_ms else []
    parts += [f"--input-tokens {target.input_tokens} --output-tokens {target.output_tokens}"]
    parts += [f"--engine {settings.engine} --context {settings.context} --batch {settings.max_batch}"]
    served = served_weight_dtype(settings.engine, model.architecture)
    parts += [f"--dtype {settings.weight_dtype}"] if settings.weight_dtype != served else []
    parts += [f"--kv-dtype {settings.kv_dtype}"] if settings.kv_dtype != DEFAULT_KV_DTYPE else []
    parts += [f"--max-num-batched-tokens {settings.batched_tokens}"] if settings.batched_tokens is not None else []
    if settings.async_scheduling is not None:
        parts += ["--async-scheduling" if settings.async_scheduling else "--no-async-scheduling"]
    parts += [f"--profiles {profiles}"] if profiles else []
    return " ".join(parts)


def _missed_limit(section: str, slo: SloSpec, candidate: TrafficCandidate) -> tuple[str, object]:
    """The key (as the user spells it) the slice misses, and its value: the latency limit the traffic model
    names as binding, else (no KV room for one request) the slice itself."""
    if candidate.binding_limit == "ttft-target" and slo.ttft_ms is not None:
        return f"{section}.slo.ttftMs", slo.ttft_ms
    if candidate.binding_limit == "ntpot-target" and slo.ntpot_ms is not None:
        return f"{section}.slo.ntpotMs", slo.ntpot_ms
    return f"{section}.topology", candidate.topology


def predict(
    section: str, slo: SloSpec, model: ResolvedModel, shape: SliceShape, settings: EngineSettings
) -> SloPrediction:
    """Evaluate the stack's slice for the target; refuse in one line what no replica count can meet."""
    target = target_of(slo)
    context = settings.context
    if target.input_tokens + target.output_tokens > context:
        given = "inputTokens" if slo.input_tokens is not None or slo.output_tokens is None else "outputTokens"
        raise UserError(
            f"{section}.slo.{given}",
            f"{target.input_tokens} + {target.output_tokens} tokens",
            f"is a longer request than the {context} tokens per sequence the {section} section serves",
            f"set {section}.slo.inputTokens and outputTokens to your requests' lengths, or raise the context",
        )
    candidate = evaluate_slice(
        model, shape, target, profiles=read_slo_profiles(section, slo), **settings.traffic_arguments()
    )
    where = f"{shape.generation} {shape.topology}"
    command = size_command(model, target, settings, slo.profiles)
    replicas, replica = candidate.replicas, candidate.per_replica
    if not candidate.meets or replicas is None or replica.output_tokens_per_second is None:
        key, value = _missed_limit(section, slo, candidate)
        latency = key.startswith(f"{section}.slo.")
        raise UserError(
            key,
            value,
            f"cannot be met by one replica of {where} at any load ({candidate.why})"
            if latency
            else f"cannot serve one of the slo's requests at any load ({candidate.why})",
            f"find a slice that meets it with `{command}` and set "
            f"{section}.tpuGeneration and {section}.topology to it, or relax the limit",
        )
    if replicas > LARGEST_REPLICAS:
        raise UserError(
            f"{section}.slo.outputTokensPerSecond",
            slo.output_tokens_per_second,
            f"needs {replicas} replicas of {where} ({replica.output_tokens_per_second:g} tokens/s each), "
            f"more than the {LARGEST_REPLICAS} one stack serves",
            f"choose a larger slice (`{command}`), or split the traffic over stacks",
        )
    return SloPrediction(
        output_tokens_per_second=target.output_tokens_per_second,
        ntpot_ms=target.ntpot_ms,
        ttft_ms=target.ttft_ms,
        input_tokens=target.input_tokens,
        output_tokens=target.output_tokens,
        replicas=replicas,
        replica_output_tokens_per_second=replica.output_tokens_per_second,
        replica_input_tokens_per_second=replica.input_tokens_per_second,
        replica_ntpot_ms=replica.ntpot_ms,
        replica_ttft_ms=replica.ttft_ms,
        batch=replica.batch,
        basis=candidate.basis,
        source=candidate.source,
        replica_ttft_p99_ms=replica.ttft_p99_ms,
    )


def slo_shape(
    section: str, slo: SloSpec, model: ResolvedModel, generation_name: str, settings: EngineSettings
) -> SliceShape | None:
    """The slice a section with an `slo` and no `topology` runs on: the choice `tpu-stacks size MODEL --tpu GEN`
    makes for the same target and engine settings (one code path, `size_for_traffic`), so the stack and `size`
    never disagree. None when no slice of the generation carries the target: the memory sizing's slice is kept
    and `predict` refuses it in one line naming the limit."""
    answer = size_for_traffic(
        model,
        target_of(slo),
        generations=[generation_name],
        profiles=read_slo_profiles(section, slo),
        **settings.traffic_arguments(),
    )
    if answer.choice is None:
        return None
    return slice_shape(generation_name, answer.choice.topology, answer.choice.machine_type)


def latency_batch(prediction: SloPrediction) -> int | None:
    """The batch to cap the engine at: the predicted batch when a latency limit is set (None: no limit, or a
    profile's point, which gives no batch). A larger batch would serve more tokens per step but each slower."""
    if prediction.ntpot_ms is None and prediction.ttft_ms is None:
        return None
    return prediction.batch


def waiting_target(prediction: SloPrediction) -> int | None:
    """Waiting requests per replica that still get their first token within the TTFT limit (None without one).

    A replica at its batch B frees a slot every `output_tokens x NTPOT / B` ms on average (each request holds
    a slot for its whole decode), so the q-th waiting request starts after about q times that; it may spend
    the TTFT limit less the predicted TTFT of its own prefill. At least 1: an HPA on a zero target never rests."""
    batch, ntpot, ttft = prediction.batch, prediction.replica_ntpot_ms, prediction.replica_ttft_ms
    if prediction.ttft_ms is None or not batch or not ntpot or ttft is None:
        return None
    slot_ms = prediction.output_tokens * ntpot / batch
    return max(1, math.floor((prediction.ttft_ms - ttft) / slot_ms))


def replica_range(key: str, prediction: SloPrediction, minimum: int, maximum: int | None) -> tuple[int, int]:
    """(min, max) replicas: the user's minimum; the user's maximum (`None`: not set) if it carries the target,
    else a refusal naming `key`; R when the user set none (never below the minimum)."""
    needed = prediction.replicas
    if maximum is None:
        return minimum, max(minimum, needed)
    if maximum < needed:
        raise UserError(
            key,
            maximum,
            f"replicas carry {maximum * prediction.replica_output_tokens_per_second:g} output tokens/s "
            f"({prediction.replica_output_tokens_per_second:g} each, {prediction.basis}), below the slo's "
            f"{prediction.output_tokens_per_second:g}: the target needs {needed}",
            f"set it to {needed} or more, or remove it (the slo then sets it)",
        )
    return minimum, maximum


def slo_replicas(
    section: str,
    slo: SloSpec,
    request: ServingRequest,
    shape: SliceShape,
    settings: EngineSettings,
    *,
    replicas_key: str,
    minimum: int,
    maximum: int | None,
) -> tuple[SloPrediction, int, int]:
    """An engine's plan asks here for its replicas under `slo`: one replica of `shape` serving `request`'s model
    with the engine's `settings` predicted (`predict`, refusing what no count meets), then (min, max) replicas by
    `replica_range`'s rule (`maximum`: the user's, None when unset; a too small one is refused naming
    `replicas_key`)."""
    prediction = predict(section, slo, request.model, shape, settings)
    low, high = replica_range(replicas_key, prediction, minimum, maximum)
    return prediction, low, high
