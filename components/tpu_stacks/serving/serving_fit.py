"""How many full-length sequences a sized slice holds at once, read off the memory model (sizing.py).

Why: `tpu-stacks size` answers "does one sequence of max_model_len fit beside the weights". A user of a large
model on a slice sized to just hold it also needs the next number, how many sequences of that length the KV
cache holds at once, because that bounds the batch the engine can run (vLLM pages the KV cache, so shorter
sequences fit more). Everything here is the memory model's own estimate for one sequence: its KV cache (with
the replication the model applies when tensor parallelism exceeds the KV heads), the weights and the overhead.
Pure: no provider SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpu_stacks.catalog.models import dtype_bytes
from tpu_stacks.catalog.tpu import SliceShape
from tpu_stacks.sizing import ServingRequest, serving_memory, usable_bytes


@dataclass(frozen=True)
class SequenceFit:
    """One slice's room for sequences of one length."""

    context: int
    """Tokens per sequence (vLLM `max_model_len`)."""
    per_sequence_bytes: int
    """The KV cache of one full-length sequence, replicas included."""
    replication: int
    """How many copies of each KV head the slice holds (tensor parallel / KV heads, at least 1)."""
    free_bytes: int
    """Usable HBM less the weights and the overhead: what the KV cache may take."""

    @property
    def sequences(self) -> int:
        """Full-length sequences whose KV cache fits at once (0: not even one)."""
        return max(0, self.free_bytes // self.per_sequence_bytes) if self.per_sequence_bytes else 0


def sequence_fit(request: ServingRequest, shape: SliceShape) -> SequenceFit:
    """The room on `shape` for sequences of `request.context` tokens; ValueError when the model's attention shape
    is unknown (no KV cache can be sized)."""
    attention = request.model.architecture.attention
    if attention is None:
        raise ValueError(f"{request.model.id}: attention shape unknown, no KV cache to size")
    one = serving_memory(request.model_copy(update={"batch": 1}), shape)
    unreplicated = attention.kv_bytes(request.context, 1, dtype_bytes(request.kv_dtype, "kv_dtype"))
    per_sequence = one.part("kv_cache")
    return SequenceFit(
        context=request.context,
        per_sequence_bytes=per_sequence,
        replication=per_sequence // unreplicated,
        free_bytes=usable_bytes(shape) - one.part("weights") - one.part("overhead"),
    )
