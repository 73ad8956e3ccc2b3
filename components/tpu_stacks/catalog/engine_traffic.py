"""What the traffic model and the policy pack need to know of a serving engine, per engine, as frozen data.

Why: shared code (the traffic model, its optimizer, the pack's traffic and argument checks) must not branch
on an engine's name. Each engine the traffic model is calibrated for declares here how it holds the KV cache,
which sizing engine its memory is counted as, the builds whose published measurements count as evidence, and
which records bound the slices its stack deploys; the shared code looks the record up by name and asks it.

Sources: how vLLM and JetStream hold the KV cache is [SB] inference.md (vLLM pages the tokens a sequence has;
JetStream reserves a full cache length per slot, the batch fixed by `--batch_size`), as tpu_stacks.sizing counts
them; the deployable slices are the stacks' own (jetstream/plan.py serves one host of a generation its images
serve; vllm/multihost_plan.py serves a multi-host slice through Ray Serve LLM, catalog/engines/ray.py RAY_SERVE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.jetstream import JETSTREAM
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.record import Engine, EngineVersion
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.kv_pages import tpu_page_size
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.catalog.upstream import fraction
from tpu_stacks.errors import UserError

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
    default_batched_tokens: int | None = None
    """Tokens one engine step takes when the workload does not say (vLLM `--max-num-batched-tokens`, the stack's
    default in vllm/spec.py); None: the engine prefills a whole prompt apart from the decode steps (JetStream)."""
    multi_host: EngineVersion | None = None
    """The record whose served generations bound a replica across the hosts of a slice (None: single host only)."""
    page_tokens: Callable[[int, int], int] | None = None
    """Tokens per KV page the pinned build picks when the server is not given one, from (max model length, max
    sequences); None: the traffic model's fallback (catalog says why per engine)."""
    memory_fraction: float | None = None
    """Fraction of HBM the pinned build takes for weights, activations and KV cache when not told (vLLM
    `--gpu-memory-utilization`); None: sizing's usable fraction."""
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

    def calibration(self, generation: str) -> tuple[Calibration | None, str]:
        """The generation's calibration and a flag (empty when it is the generation's own); (None, why) when
        the engine has none for it."""
        own = next((c for c in self.calibrations if c.generation == generation), None)
        if own is not None:
            return own, ""
        lender = dict(self.borrowed).get(generation)
        if lender is not None:
            found = next(c for c in self.calibrations if c.generation == lender)
            return found, f"no published row on {generation}: efficiencies of {lender} ({found.build}) used"
        if not self.calibrations and self.uncalibrated:
            return None, self.uncalibrated
        calibrated = ", ".join(c.generation for c in self.calibrations)
        return None, f"no calibration for {self.sizing_engine} on {generation} (calibrated: {calibrated})"

    def deploys(self, shape: SliceShape) -> bool:
        """Whether the engine's stack serves one replica on `shape`."""
        if shape.multi_host:
            return self.multi_host is not None and self.multi_host.serves_generation(shape.generation)
        return self.builds[-1].serves_generation(shape.generation)


# Fitted by tpu_stacks.traffic.fit (`python -m tpu_stacks.traffic.calibration` prints the table and each row's
# leave-one-out error; tests/traffic/test_calibration.py refits and compares these constants).
VLLM_CALIBRATIONS = (
    Calibration("v6e", "vLLM main 2025-04-11 (PyTorch/XLA)", 0.43, 0.43, 0.43, ("vllm-v6e-llama3-8b",)),
    Calibration(
        "tpu7x",
        "vllm/vllm-tpu nightly-20260624 (tpu-inference)",
        0.58,
        0.26,
        0.13,
        ("vllm-tpu7x-qwen3coder-1k1k", "vllm-tpu7x-qwen3coder-1k8k", "vllm-tpu7x-qwen3coder-8k1k"),
    ),
)
JETSTREAM_CALIBRATIONS = (
    Calibration(
        "v5e",
        "JetStream-PyTorch (2024-04 to 2024-07)",
        0.67,
        0.5,
        0.27,
        (
            "jspt-llama3-8b-bf16",
            "jspt-llama3-8b-int8",
            "jspt-llama3-8b-int8-0729",
            "jspt-gemma-7b-bf16",
            "jspt-gemma-7b-int8",
        ),
    ),
)

CATALOGUED_TRAFFIC: dict[str, EngineTraffic] = {
    "vllm": EngineTraffic(
        sizing_engine="vllm",
        kv_cache="paged",
        builds=(VLLM,),
        calibrations=VLLM_CALIBRATIONS,
        # tpu-inference 0.29.0 (the pinned image's backend) lists its "Compatible TPU Generations" as v7x, v5e and
        # v6e (https://pypi.org/project/tpu-inference/0.29.0/): v5e and v5p borrow v6e's fit, flagged in every
        # figure; v4 is not among them, so vLLM on v4 has no calibration and is refused.
        borrowed=(("v5e", "v6e"), ("v5p", "v6e")),
        default_batched_tokens=512,  # vllm/spec.py maxNumBatchedTokens default
        multi_host=RAY_SERVE,
        page_tokens=tpu_page_size,
        memory_fraction=fraction("vllm.default.gpu-memory-utilization"),  # the stack does not set it
    ),
    "jetstream": EngineTraffic(
        sizing_engine="jetstream",
        kv_cache="per-slot",
        builds=JETSTREAM,
        calibrations=JETSTREAM_CALIBRATIONS,
        borrowed=(("v4", "v5e"), ("v5p", "v5e"), ("v6e", "v5e"), ("tpu7x", "v5e")),
    ),
}
"""The engines the traffic model knows from this module; a workload folder declares its own engine's entry."""


def traffic() -> dict[str, EngineTraffic]:
    """The engines the traffic model knows: calibrated on published rows, or (`uncalibrated`) only their KV model;
    this module's, then each workload folder's (catalog/engines/declared.py)."""
    return {**CATALOGUED_TRAFFIC, **{d.name: d.traffic for d in declarations() if d.traffic is not None}}


def __getattr__(name: str) -> Any:
    """`TRAFFIC`, collected on use (PEP 562), so a folder's declaration can import this module."""
    if name == "TRAFFIC":
        return traffic()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def traffic_of(name: str) -> EngineTraffic:
    """The engine's traffic record; a UserError naming `--engine` when the traffic model has none."""
    known = traffic()
    found = known.get(name)
    if found is None:
        raise UserError("--engine", name, "has no calibrated performance model", f"use {' or '.join(known)}")
    return found
