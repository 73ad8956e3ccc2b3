"""What the traffic model and the policy pack need to know of a serving engine, per engine, as frozen data.

Why: shared code (the traffic model, its optimizer, the pack's traffic and argument checks) must not branch
on an engine's name. Each engine the traffic model knows declares how it holds the KV cache, which sizing engine
its memory is counted as, the builds whose published measurements count as evidence, and which records bound the
slices its stack deploys; the shared code looks the record up by name and asks it. vLLM's entry is here (its record
is shared: catalog/engines WHY_HERE); an engine one workload runs declares its entry in that workload's folder
(`<workload>/engine.py`: JetStream's, SGLang-JAX's), collected by `traffic()`.

Sources: how vLLM holds the KV cache is [SB] inference.md (vLLM pages the tokens a sequence has), as
tpu_stacks.sizing counts it; the deployable slices are the stack's own (vllm/multihost_plan.py serves a multi-host
slice through Ray Serve LLM, catalog/engines/ray.py RAY_SERVE).
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.catalog.engine_models import VLLM_IMPLEMENTATIONS, vllm_implementation
from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.traffic_record import Calibration as Calibration
from tpu_stacks.catalog.engines.traffic_record import EngineTraffic as EngineTraffic
from tpu_stacks.catalog.engines.traffic_record import KvCache as KvCache
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.kv_pages import tpu_page_size
from tpu_stacks.catalog.tpu import GENERATIONS
from tpu_stacks.catalog.upstream import fraction, number, text
from tpu_stacks.errors import UserError

# Fitted by tpu_stacks.traffic.fit (`python -m tpu_stacks.traffic.calibration` prints the table and each row's
# leave-one-out error; tests/traffic/test_calibration.py refits and compares these constants). Keyed by generation and
# the model implementation the rows ran (throughput_measurements.py `implementation`; catalog/engine_models.py
# VLLM_IMPLEMENTATIONS): no published row ran tpu-inference's JAX model (flax_nnx), which the pinned build runs for
# Llama, Qwen2 and dense Qwen3, so those figures stand on another implementation's fit, flagged.
VLLM_CALIBRATIONS = (
    Calibration(
        "v6e",
        "vLLM main 2025-04-11 (PyTorch/XLA)",
        0.43,
        0.43,
        0.43,
        ("vllm-v6e-llama3-8b",),
        implementation="torch_xla",
    ),
    Calibration(
        "tpu7x",
        "vllm/vllm-tpu nightly-20260624 (tpu-inference)",
        0.58,
        0.26,
        0.13,
        ("vllm-tpu7x-qwen3coder-1k1k", "vllm-tpu7x-qwen3coder-1k8k", "vllm-tpu7x-qwen3coder-8k1k"),
        implementation="vllm",
    ),
)

# vLLM's own --max-num-batched-tokens when the server is not given one (a stack always gives it: vllm/spec.py), at the
# pinned vllm-tpu with its tpu-inference, worked the way EngineArgs.get_batch_defaults works it. The API server asks
# in the OPENAI_API_SERVER usage context (ledger: vllm.batch-default.api-server-context, ray.serve-llm.usage-context),
# and only when the flag is absent (ledger: vllm.batch-default.unset-only). tpu-inference's platform cannot give the
# device memory (ledger: tpu-inference.device-total-memory), so the memory branches are skipped and the generic one
# holds (ledger: vllm.batch-default.device-memory, vllm.batch-default.unknown-device, vllm.batch-default.api-server).
# vLLM's TPU table then replaces it by chip name, compared exactly (ledger: vllm.batch-default.tpu-chip-name,
# vllm.batch-default.v6e-chip, vllm.batch-default.v6e, vllm.batch-default.v5e-chip, vllm.batch-default.v5e,
# vllm.batch-default.v5p-chip, vllm.batch-default.v5p), but tpu-inference names the device "TPU " + tpu-info's chip
# member (ledger: tpu-inference.device-name, tpu-inference.requires.tpu-info; "TPU v6 lite" under Pathways and "TPU"
# when unknown, ledger: tpu-inference.device-name.pathways, tpu-inference.device-name.unknown), so at this pin no TPU
# generation matches and every one gets the generic default. Chunked prefill is on for the catalogue's decoder models,
# so the default is not raised to max-model-len (ledger: vllm.chunked-prefill.default, vllm.chunked-prefill.generative,
# vllm.chunked-prefill.off-raises); --performance-mode throughput would double it, but its default is balanced
# (ledger: vllm.performance-mode.default, vllm.performance-mode.throughput-doubles) and that flag is not read.
VLLM_TPU_DEVICE_NAMES = {
    "v4": f"TPU {text('tpu-info.chip.v4')}",
    "v5e": f"TPU {text('tpu-info.chip.v5e')}",
    "v5p": f"TPU {text('tpu-info.chip.v5p')}",
    "v6e": f"TPU {text('tpu-info.chip.v6e')}",
    "tpu7x": f"TPU {text('tpu-info.chip.tpu7x')}",
}
"""What tpu-inference's `get_device_name()` returns on each catalogued generation (tpu-info's chip names)."""
VLLM_TPU_CHIP_BATCHED_TOKENS = {
    text("vllm.batch-default.v6e-chip"): number("vllm.batch-default.v6e"),
    text("vllm.batch-default.v5e-chip"): number("vllm.batch-default.v5e"),
    text("vllm.batch-default.v5p-chip"): number("vllm.batch-default.v5p"),
}
"""vLLM's API-server default by the device name it compares with; any other name keeps the generic default."""
VLLM_DEFAULT_BATCHED_TOKENS = {
    g.name: VLLM_TPU_CHIP_BATCHED_TOKENS.get(VLLM_TPU_DEVICE_NAMES[g.name], number("vllm.batch-default.api-server"))
    for g in GENERATIONS
}
"""The one table: vLLM's --max-num-batched-tokens on each generation when the server's arguments give none."""

# Async scheduling at the pinned vllm-tpu, for the servers the stacks run: no stack gives --async-scheduling or
# --no-async-scheduling itself (a user's extraArgs may: vllm/plan.py reads them into the traffic model, and so does
# the policy pack), and left unset vLLM turns it on (ledger: vllm.async-scheduling.unset,
# vllm.async-scheduling.default-on) unless the model is a pooling one, a speculative method other than
# EAGLE/MTP/draft model/ngram_gpu/DSpark is configured (ledger: vllm.async-scheduling.pooling-off,
# vllm.async-scheduling.speculative-off; the stacks configure neither), or the executor class does not support it
# (ledger: vllm.async-scheduling.executor-off).
# That executor is the one the parallel config names when the decision is made, before tpu-inference's platform swaps
# in its own (ledger: vllm.async-scheduling.executor-at-decision, vllm.async-scheduling.platform-after): on one host
# `mp` for tensor parallel > 1 and `uni` for one device (ledger: vllm.executor.default-mp, vllm.executor.default-uni),
# both supporting it (ledger: vllm.executor.mp-async, vllm.executor.uni-async); across hosts Ray Serve LLM forces `ray`
# (ledger: ray.serve-llm.executor-ray), which is vLLM's RayExecutorV2 unless VLLM_USE_RAY_V2_EXECUTOR_BACKEND=0, a
# MultiprocExecutor that supports it (ledger: vllm.executor.ray-v2-default, vllm.executor.ray-v2-class,
# vllm.executor.ray-v2-async). What then runs keeps it: tpu-inference's UniProcExecutor on one host without pipeline
# parallelism, its Ray executor (a RayExecutorV2) across hosts (ledger: tpu-inference.executor.single-host-uni,
# tpu-inference.executor.ray-v2-async); the engine's batch queue is max_concurrent_batches, two with async scheduling
# and pipeline parallel 1 (ledger: vllm.engine.batch-queue-size, vllm.engine.async-batches).
VLLM_ASYNC_BY_DEFAULT = True
"""Whether the pinned vLLM schedules asynchronously on the stacks' servers (single host and Ray Serve LLM alike)."""
ASYNC_SCHEDULING = f"--{text('vllm.flag.async-scheduling')}"
"""vLLM's flag for it (and `--no-async-scheduling`: ledger: vllm.args.boolean-switches)."""

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
        default_batched_tokens=VLLM_DEFAULT_BATCHED_TOKENS,  # vLLM's own, not the stack's (which always sets it)
        multi_host=RAY_SERVE,
        page_tokens=tpu_page_size,
        memory_fraction=fraction("vllm.default.gpu-memory-utilization"),  # the stack does not set it
        implementation=vllm_implementation,  # no stack sets MODEL_IMPL_TYPE (vllm/engine_env.py): `auto`
        implementation_names=VLLM_IMPLEMENTATIONS,
        async_batches=number("vllm.engine.async-batches"),  # pipeline parallel 1: every stack's (sizing.Parallelism)
        async_by_default=VLLM_ASYNC_BY_DEFAULT,
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
