"""Will it fit? The memory model for serving and training, and slice selection.

Pure Python, no Pulumi: the CLI, the components and the policy pack all call these functions,
so a slice that `tpu-stacks size` recommends is the slice a stack builds and the policy accepts.

Assumptions (also printed by `tpu-stacks size`):
- Usable HBM is 90% of the slice's HBM, a little under the pinned vLLM's default `--gpu-memory-utilization`,
  0.92 (ledger: vllm.default.gpu-memory-utilization); the other 10% is left to the XLA runtime (compiled
  programs, scratch, fragmentation). Training keeps the same margin for the compiler's temporaries.
- Serving: weights (params x weight bytes) + KV cache + overhead. The KV cache follows
  [SB] inference.md: 2 x bytes x head_dim x kv_heads x layers x tokens. How many tokens depends on
  the engine: vLLM must hold at least one full `max_model_len` sequence beyond its weights
  (batch 1 is the floor), JetStream pre-allocates `batch x max_cache_length`, Saxml holds
  `batch x (input + decode)` tokens. When tensor parallelism exceeds the KV heads, each KV head is
  replicated on tp/kv_heads chips, so the cache grows by that factor.
- Overhead: a runtime reserve of 512 MiB per chip (XLA executables, collectives buffers) plus the
  activation workspace of one prefill step (tokens x (d_model + d_ff) x 2 bytes x 2), which is
  small ([SB]: an 8k-token prefill needs about 80 MB).
- Training: weights, gradients and optimizer state in MaxText's defaults (fp32 weights, fp32
  gradients, AdamW moments in the weight dtype: 16 bytes per parameter, [MT] base.yml), fully
  sharded across the slice (FSDP x tensor parallelism = chips); activations with three
  checkpoints per layer, 2 x L x tokens x (d_model + 2 d_ff) bytes ([SB] applied-training.md),
  plus fp32 logits for every token.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.catalog.engines.record import Engine
from tpu_stacks.catalog.model_shape import DEFAULT_KV_DTYPE
from tpu_stacks.catalog.models import ResolvedModel, dtype_bytes
from tpu_stacks.catalog.tpu import Generation, SliceShape, all_slice_shapes, generation, slice_shape
from tpu_stacks.errors import UserError

Workload = Literal["serve", "train"]

USABLE_HBM_FRACTION = 0.90
RUNTIME_RESERVE_PER_CHIP = 512 * 1024**2
TRAINING_BYTES = {"fp32": 4, "bf16": 2}
OPTIMIZER_MOMENTS = {"adamw": 2, "adam": 2, "sgd": 0, "adafactor": 0}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ServingRequest(_Frozen):
    """What a serving engine must hold: the model, its dtypes, and the tokens it keeps."""

    model: ResolvedModel
    engine: Engine = "vllm"
    weight_dtype: str = "bf16"
    kv_dtype: str = DEFAULT_KV_DTYPE
    context: int = Field(default=8192, gt=0)
    """Tokens per sequence: vLLM `max_model_len`, JetStream `max_cache_length`."""
    batch: int = Field(default=1, gt=0)
    """Sequences whose KV cache must fit at once (vLLM: 1 is the floor; JetStream: batch_size)."""
    prefill_tokens: int = Field(default=8192, gt=0)
    """Tokens in one prefill step (vLLM `max_num_batched_tokens`)."""


class TrainingRequest(_Frozen):
    """A training run: the model, per-device batch and sequence length, and the state dtypes."""

    model: ResolvedModel
    per_device_batch: float = Field(default=1, gt=0)
    seq_len: int = Field(default=4096, gt=0)
    weight_dtype: str = "fp32"
    grad_dtype: str = "fp32"
    optimizer: str = "adamw"
    moment_dtype: str = "fp32"
    activation_dtype: str = "bf16"


class MemoryPart(_Frozen):
    name: str
    bytes: int
    how: str


class MemoryEstimate(_Frozen):
    """Memory a workload needs on one slice, part by part."""

    workload: Workload
    parts: tuple[MemoryPart, ...]
    notes: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(part.bytes for part in self.parts)

    def part(self, name: str) -> int:
        return sum(p.bytes for p in self.parts if p.name == name)

    def as_dict(self) -> dict[str, int]:
        result = {f"{p.name}_bytes": p.bytes for p in self.parts}
        for required in ("weights", "kv_cache", "overhead"):
            result.setdefault(f"{required}_bytes", 0)
        result["total_bytes"] = self.total_bytes
        return result


class Candidate(_Frozen):
    """One slice judged for one workload."""

    shape: SliceShape
    memory: MemoryEstimate
    usable_bytes: int
    tensor_parallel_size: int | None

    @property
    def fits(self) -> bool:
        return self.memory.total_bytes <= self.usable_bytes

    @property
    def headroom_bytes(self) -> int:
        return self.usable_bytes - self.memory.total_bytes

    def as_dict(self) -> dict[str, object]:
        return {
            "topology": self.shape.topology,
            "machine_type": self.shape.machine_type,
            "chips": self.shape.chips,
            "nodes": self.shape.nodes,
            "hbm_bytes": self.shape.hbm_bytes,
            "usable_bytes": self.usable_bytes,
            "fits": self.fits,
            "headroom_bytes": self.headroom_bytes,
            "hourly_usd": self.shape.hourly_usd,
            "tensor_parallel_size": self.tensor_parallel_size,
            **(serving_parallelism(self.shape).as_dict() if self.tensor_parallel_size else {}),
        }


class SizingResult(_Frozen):
    model: ResolvedModel
    generation: str
    workload: Workload
    candidates: tuple[Candidate, ...]
    assumptions: tuple[str, ...]

    @property
    def recommended(self) -> Candidate | None:
        """The smallest slice that fits; ties by hourly cost, then by fewer VMs."""
        fitting = [c for c in self.candidates if c.fits]
        if not fitting:
            return None
        return min(fitting, key=lambda c: (c.shape.chips, c.shape.hourly_usd or 0.0, c.shape.nodes))

    @property
    def memory(self) -> MemoryEstimate:
        """The breakdown for the recommended slice (or the largest one when nothing fits)."""
        chosen = self.recommended or self.candidates[-1]
        return chosen.memory

    def as_dict(self) -> dict[str, object]:
        recommended = self.recommended
        return {
            "model": self.model.id,
            "generation": self.generation,
            "workload": self.workload,
            "params": self.model.params,
            "active_params": self.model.architecture.active_params,
            "memory": self.memory.as_dict(),
            "candidates": [c.as_dict() for c in self.candidates],
            "recommended": recommended.as_dict() if recommended else None,
            "assumptions": list(self.assumptions),
        }


def usable_bytes(shape: SliceShape) -> int:
    return int(shape.hbm_bytes * USABLE_HBM_FRACTION)


def serving_memory(request: ServingRequest, shape: SliceShape) -> MemoryEstimate:
    """Weights + KV cache + overhead for serving `request` on `shape` (tensor parallel over all chips)."""
    arch = request.model.architecture
    weights, weights_how = arch.weights(request.weight_dtype)
    kv_per_byte = dtype_bytes(request.kv_dtype, "kv_dtype")
    notes: list[str] = []
    kv_cache = 0
    if arch.attention is None:
        notes.append("attention shape unknown: KV cache not counted (give layers, kv_heads, head_dim)")
    else:
        kv_cache = arch.attention.kv_bytes(request.context, request.batch, kv_per_byte)
        tp = tensor_parallel_size(shape)
        replication = max(1, tp // arch.attention.kv_heads)
        if replication > 1:
            kv_cache *= replication
            notes.append(
                f"tensor parallel {tp} > {arch.attention.kv_heads} KV heads: KV cache replicated x{replication}"
            )
    activations = 0
    if arch.d_model and arch.d_ff:
        activations = int(
            min(request.prefill_tokens, request.context * request.batch) * (arch.d_model + arch.d_ff) * 2 * 2
        )
    overhead = RUNTIME_RESERVE_PER_CHIP * shape.chips + activations
    parts = (
        MemoryPart(name="weights", bytes=weights, how=weights_how),
        MemoryPart(
            name="kv_cache",
            bytes=kv_cache,
            how=f"{request.batch} x {request.context} tokens x {request.kv_dtype} ({request.engine})",
        ),
        MemoryPart(
            name="overhead", bytes=overhead, how="512 MiB runtime reserve per chip + one prefill step's activations"
        ),
    )
    return MemoryEstimate(workload="serve", parts=parts, notes=tuple(notes))


def training_memory(request: TrainingRequest, shape: SliceShape) -> MemoryEstimate:
    """Weights + gradients + optimizer state + activations, fully sharded over `shape`."""
    arch = request.model.architecture
    params = arch.params
    for key, value in (
        ("weight_dtype", request.weight_dtype),
        ("grad_dtype", request.grad_dtype),
        ("moment_dtype", request.moment_dtype),
    ):
        if value not in TRAINING_BYTES:
            raise UserError(key, value, "is not a training dtype", f"valid: {', '.join(TRAINING_BYTES)}")
    if request.optimizer not in OPTIMIZER_MOMENTS:
        raise UserError(
            "optimizer", request.optimizer, "is not a known optimizer", f"valid: {', '.join(OPTIMIZER_MOMENTS)}"
        )
    weights = params * TRAINING_BYTES[request.weight_dtype]
    gradients = params * TRAINING_BYTES[request.grad_dtype]
    optimizer = params * TRAINING_BYTES[request.moment_dtype] * OPTIMIZER_MOMENTS[request.optimizer]
    tokens = int(request.per_device_batch * request.seq_len * shape.jax_devices)
    notes: list[str] = []
    activations = 0
    if arch.attention and arch.d_model and arch.d_ff:
        act_bytes = dtype_bytes(request.activation_dtype, "activation_dtype")
        activations = int(act_bytes * arch.attention.layers * tokens * (arch.d_model + 2 * arch.d_ff))
        activations += int(tokens * (arch.vocab or 0) * 4)
    else:
        notes.append("model shape unknown: activations not counted")
    parts = (
        MemoryPart(name="weights", bytes=weights, how=f"{params:,} params x {request.weight_dtype}"),
        MemoryPart(name="gradients", bytes=gradients, how=f"params x {request.grad_dtype}"),
        MemoryPart(
            name="optimizer",
            bytes=optimizer,
            how=f"{request.optimizer}: {OPTIMIZER_MOMENTS[request.optimizer]} moments x {request.moment_dtype}",
        ),
        MemoryPart(
            name="activations",
            bytes=activations,
            how=f"{tokens:,} tokens in flight, 3 checkpoints per layer + fp32 logits",
        ),
        MemoryPart(
            name="overhead", bytes=RUNTIME_RESERVE_PER_CHIP * shape.chips, how="512 MiB runtime reserve per chip"
        ),
    )
    return MemoryEstimate(workload="train", parts=parts, notes=tuple(notes))


def tensor_parallel_size(shape: SliceShape) -> int:
    """Serving engines shard the model over every device of the slice (2 per tpu7x chip)."""
    return shape.jax_devices


def heads_not_divided(model: ResolvedModel, shape: SliceShape) -> str | None:
    """The one tensor-parallel rule of every serving engine here: each shards the attention heads over every device
    of the slice, so the device count must divide the model's query heads. The refusal's reason when it does not
    (worded to follow "<engine>.topology: '<topology>'"), else None. A model without a catalogued head count passes."""
    heads = model.architecture.attention.query_heads if model.architecture.attention else None
    tp = tensor_parallel_size(shape)
    if heads and heads % tp:
        return (
            f"gives tensor parallelism {tp} ({shape.generation} devices), which does not divide "
            f"{model.id}'s {heads} attention heads"
        )
    return None


class Parallelism(_Frozen):
    """How one serving replica spreads over its slice: the names `size --json`, the plans and the pack share.

    One replica is one slice. Tensor parallelism spans every device of the slice, across hosts too on a
    multi-host slice (vLLM TPU's Ray executor shards one model over the slice's chips); pipeline
    parallelism is 1 until an engine documents a multi-host split by stages for TPU.
    """

    hosts: int
    chips_per_host: int
    tensor_parallel: int
    pipeline_parallel: int = 1

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1

    def as_dict(self) -> dict[str, int]:
        return {
            "hosts": self.hosts,
            "chips_per_host": self.chips_per_host,
            "tensor_parallel": self.tensor_parallel,
            "pipeline_parallel": self.pipeline_parallel,
        }


def serving_parallelism(shape: SliceShape) -> Parallelism:
    """The parallelism a serving replica on `shape` runs with (one source for every caller)."""
    return Parallelism(
        hosts=shape.nodes, chips_per_host=shape.chips_per_vm, tensor_parallel=tensor_parallel_size(shape)
    )


def judge(request: ServingRequest | TrainingRequest, shape: SliceShape) -> Candidate:
    """One slice's verdict for one request."""
    if isinstance(request, ServingRequest):
        memory = serving_memory(request, shape)
        tp: int | None = tensor_parallel_size(shape)
    else:
        memory = training_memory(request, shape)
        tp = None
    return Candidate(shape=shape, memory=memory, usable_bytes=usable_bytes(shape), tensor_parallel_size=tp)


def size(request: ServingRequest | TrainingRequest, gen: str | Generation) -> SizingResult:
    """Judge every slice shape of a generation for the request, smallest first."""
    chosen = gen if isinstance(gen, Generation) else generation(gen)
    candidates = tuple(judge(request, shape) for shape in all_slice_shapes(chosen))
    workload: Workload = "serve" if isinstance(request, ServingRequest) else "train"
    return SizingResult(
        model=request.model,
        generation=chosen.name,
        workload=workload,
        candidates=candidates,
        assumptions=ASSUMPTIONS[workload],
    )


def smallest_fit(request: ServingRequest | TrainingRequest, gen: str | Generation, key: str = "model") -> Candidate:
    """The recommended slice, or a UserError (on `key`) that says how far the largest slice falls short."""
    result = size(request, gen)
    recommended = result.recommended
    if recommended is None:
        largest = result.candidates[-1]
        raise UserError(
            key,
            request.model.id,
            f"fits no {result.generation} slice: needs {gib(largest.memory.total_bytes)} but the largest "
            f"({largest.shape.topology}) has {gib(largest.usable_bytes)} usable",
            "choose a TPU generation with more HBM, a smaller dtype, or a shorter context",
        )
    return recommended


def choose_slice(
    request: ServingRequest | TrainingRequest,
    gen: Generation,
    topology: str | None,
    section: str,
    machine_type: str | None = None,
) -> Candidate:
    """The user's topology, checked to hold the model, or the smallest slice that does.

    Errors are keyed under the config section (`vllm.topology`, `saxml.model`, ...).
    """
    if topology is None:
        return smallest_fit(request, gen, key=f"{section}.model")
    try:
        shape = slice_shape(gen, topology, machine_type)
    except UserError as error:
        raise error.under(section) from None
    return check_fits(request, shape, key=f"{section}.topology")


def slice_refusal(
    section: str, topology: str | None, model: str, shape: SliceShape, problem: str, fix: str
) -> UserError:
    """A refusal of the slice a workload runs on: under `<section>.topology` when the user wrote `topology`;
    otherwise `choose_slice` sized it from the model, so the line names the model as the user wrote it and
    says the slice was derived (a value the user never wrote is never shown as theirs)."""
    if topology is not None:
        return UserError(f"{section}.topology", shape.topology, problem, fix)
    return UserError(
        f"{section}.model",
        model,
        f"is sized to {shape.generation} {shape.topology} (derived, no {section}.topology): it {problem}",
        fix,
    )


def check_fits(request: ServingRequest | TrainingRequest, shape: SliceShape, key: str = "topology") -> Candidate:
    """Judge a slice the user chose; a UserError names the smallest slice that would fit."""
    verdict = judge(request, shape)
    if verdict.fits:
        return verdict
    try:
        better = smallest_fit(request, shape.generation)
        fix = f"the smallest {shape.generation} slice that fits is {better.shape.topology} ({better.shape.chips} chips)"
    except UserError as error:
        fix = error.problem
    raise UserError(
        key,
        shape.topology,
        f"cannot hold {request.model.id}: needs {gib(verdict.memory.total_bytes)} ({breakdown(verdict.memory)}), "
        f"{shape.generation} {shape.topology} has {gib(verdict.usable_bytes)} usable",
        fix,
    )


def gib(value: int) -> str:
    return f"{value / 1024**3:.1f} GiB"


def breakdown(memory: MemoryEstimate) -> str:
    return " + ".join(f"{part.name} {gib(part.bytes)}" for part in memory.parts if part.bytes)


ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "serve": (
        "usable HBM = 90% of total (under vLLM 0.29.0's default --gpu-memory-utilization 0.92; the rest: XLA)",
        "KV cache = 2 x bytes x head_dim x kv_heads x layers x context x batch ([SB] inference.md)",
        "tensor parallel over every chip; KV heads replicated when tp > kv_heads",
        "overhead = 512 MiB per chip + one prefill step's activations",
    ),
    "train": (
        "usable HBM = 90% of total (XLA temporaries)",
        "MaxText defaults: fp32 weights + fp32 gradients + AdamW moments in fp32 = 16 bytes/param ([MT] base.yml)",
        "state fully sharded over the slice (FSDP x tensor parallel = chips)",
        "activations = 2 x layers x tokens x (d_model + 2 d_ff) bytes + fp32 logits ([SB] applied-training.md)",
    ),
}


def file_cache_gib(payload_bytes: int, margin: float = 1.1) -> int:
    """A memory-backed GCS FUSE file cache for `payload_bytes` (weights, a checkpoint shard), with
    10% margin, in whole GiB: what the cache volume, its max-size and the sidecar's limit are sized from."""
    return max(1, math.ceil(payload_bytes * margin / 1024**3))
