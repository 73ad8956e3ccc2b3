"""serving/serving_fit.py's `SequenceFit.sequences` at its edges: a slice whose weights leave no room, or a model
whose sequences take no KV cache bytes, holds no full-length sequence (never a negative count)."""

from __future__ import annotations

from tpu_stacks.serving.serving_fit import SequenceFit


def test_no_room_is_zero_sequences_not_a_negative_count():
    assert SequenceFit(context=8192, per_sequence_bytes=10, replication=1, free_bytes=-25).sequences == 0
    assert SequenceFit(context=8192, per_sequence_bytes=10, replication=1, free_bytes=25).sequences == 2


def test_a_sequence_of_no_bytes_counts_zero():
    assert SequenceFit(context=8192, per_sequence_bytes=0, replication=1, free_bytes=25).sequences == 0
