"""What the traffic model and the policy pack need to know of a serving engine, per engine, as frozen data.

Why: shared code (the traffic model, its optimizer, the pack's traffic and argument checks) must not branch
on an engine's name. Each engine the traffic model is calibrated for declares here how it holds the KV cache,
which sizing engine its memory is counted as, the builds whose published measurements count as evidence, and
which records bound the slices its stack deploys; the shared code looks the record up by name and asks it.

Sources: how vLLM and JetStream hold the KV cache is [SB] inference.md (vLLM pages the tokens a sequence has;
JetStream reserves a full cache length per slot, the batch fixed by `--batch_size`), as tpu_stacks.sizing counts
them; the deployable slices are the stacks' own (jetstream/plan.py serves one host of a generation its images
serve; vllm/multihost_plan.py serves a multi-host slice through Ray Serve LLM, catalog/engines.py RAY_SERVE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tpu_stacks.catalog.engines import JETSTREAM, RAY_SERVE, SGLANG, VLLM, EngineVersion
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import Engine

KvCache = Literal["paged", "per-slot"]


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
    efficiency: float
    """Fraction of the roofline the engine reaches, fitted (least squares on log error) to the published rows of
    tpu_stacks.catalog.throughput_measurements; tests/traffic/test_calibration.py refits and compares."""
    multi_host: EngineVersion | None = None
    """The record whose served generations bound a replica across the hosts of a slice (None: single host only)."""
    calibrated: bool = True
    """False: no published row measures one of `builds`, so `efficiency` is borrowed, not fitted (the calibration
    tests skip it, and its predictions are a roofline guess until a measurement of the pinned build exists)."""

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

    def deploys(self, shape: SliceShape) -> bool:
        """Whether the engine's stack serves one replica on `shape`."""
        if shape.multi_host:
            return self.multi_host is not None and self.multi_host.serves_generation(shape.generation)
        return self.builds[-1].serves_generation(shape.generation)


TRAFFIC: dict[str, EngineTraffic] = {
    "vllm": EngineTraffic(
        sizing_engine="vllm", kv_cache="paged", builds=(VLLM,), efficiency=0.57, multi_host=RAY_SERVE
    ),
    "jetstream": EngineTraffic(sizing_engine="jetstream", kv_cache="per-slot", builds=JETSTREAM, efficiency=0.15),
    # SGLang-JAX pages its KV cache (a token pool behind the radix cache, sgl_jax/srt/mem_cache) like vLLM. Its only
    # published numbers (https://lmsys.org/blog/2025-10-29-sglang-jax) measure a build the post does not pin, not the
    # pinned wheel, so the efficiency is vLLM's fitted one, borrowed, and the record says it is uncalibrated.
    "sglang": EngineTraffic(
        sizing_engine="sglang", kv_cache="paged", builds=(SGLANG,), efficiency=0.57, calibrated=False
    ),
}
"""The engines the traffic model knows; those whose `calibrated` is False borrow their efficiency."""


def traffic_of(name: str) -> EngineTraffic:
    """The engine's traffic record; a UserError naming `--engine` when the traffic model has none."""
    found = TRAFFIC.get(name)
    if found is None:
        raise UserError("--engine", name, "has no calibrated performance model", f"use {' or '.join(TRAFFIC)}")
    return found
