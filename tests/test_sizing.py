"""The memory model and slice selection reproduce the tutorials' own choices."""

from pathlib import Path

import pytest

from tpu_stacks import sizing
from tpu_stacks.catalog.models import SAXML_175B_TEST, lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.errors import UserError


def serve(model, **kwargs):
    return sizing.ServingRequest(model=lookup_model(model), **kwargs)


def test_saxml_175b_on_v5e_needs_4x8():
    result = sizing.size(serve(SAXML_175B_TEST, engine="saxml", context=256), "v5e")
    best = result.recommended
    assert (best.shape.topology, best.shape.machine_type, best.shape.chips, best.shape.nodes) == (
        "4x8",
        "ct5lp-hightpu-4t",
        32,
        8,
    )
    four_by_four = next(c for c in result.candidates if c.shape.topology == "4x4")
    assert not four_by_four.fits
    # "about 350 GB in bf16" (the tutorial)
    assert result.memory.part("weights") == pytest.approx(349e9, rel=0.01)


def test_llama_70b_on_v6e_fits_2x4_on_the_8_chip_vm_and_not_2x2():
    result = sizing.size(serve("meta-llama/Llama-3.1-70B"), "v6e")
    best = result.recommended
    assert (best.shape.topology, best.shape.machine_type, best.tensor_parallel_size) == ("2x4", "ct6e-standard-8t", 8)
    assert not next(c for c in result.candidates if c.shape.topology == "2x2").fits


def test_llama3_8b_training_with_the_tutorial_settings_fits_v6e_4x4():
    request = sizing.TrainingRequest(model=lookup_model("llama3-8b"), per_device_batch=1, seq_len=4096)
    verdict = sizing.judge(request, slice_shape("v6e", "4x4"))
    assert verdict.fits
    memory = verdict.memory
    params = lookup_model("llama3-8b").params
    assert memory.part("weights") == params * 4
    assert memory.part("gradients") == params * 4
    assert memory.part("optimizer") == params * 8
    assert memory.part("activations") > 0


def test_breakdown_adds_up():
    verdict = sizing.judge(serve("llama3-8b", context=4096, batch=4), slice_shape("v6e", "1x1"))
    memory = verdict.memory
    assert memory.total_bytes == memory.part("weights") + memory.part("kv_cache") + memory.part("overhead")
    # KV = 2 x 2 bytes x 128 x 8 x 32 layers x 4096 x 4
    assert memory.part("kv_cache") == 2 * 2 * 128 * 8 * 32 * 4096 * 4
    assert verdict.headroom_bytes == verdict.usable_bytes - memory.total_bytes


def test_dtype_shrinks_the_weights_and_the_slice():
    bf16 = sizing.smallest_fit(serve("meta-llama/Llama-3.1-70B"), "v5e")
    int8 = sizing.smallest_fit(serve("meta-llama/Llama-3.1-70B", weight_dtype="int8"), "v5e")
    assert int8.memory.part("weights") * 2 == bf16.memory.part("weights")
    assert int8.shape.chips < bf16.shape.chips


def test_jetstream_preallocates_batch_times_cache_length():
    small = sizing.judge(serve("google/gemma-7b", engine="jetstream", batch=8, context=2048), slice_shape("v5e", "2x4"))
    large = sizing.judge(
        serve("google/gemma-7b", engine="jetstream", batch=256, context=2048), slice_shape("v5e", "2x4")
    )
    assert large.memory.part("kv_cache") == 32 * small.memory.part("kv_cache")
    assert small.fits and not large.fits


def test_ties_break_on_fewer_vms():
    result = sizing.size(serve("meta-llama/Llama-3.1-70B"), "v6e")
    same_size = [c for c in result.candidates if c.shape.topology == "2x4"]
    assert {c.shape.machine_type for c in same_size} == {"ct6e-standard-8t", "ct6e-standard-4t"}
    assert result.recommended.shape.nodes == 1


def test_a_chosen_slice_that_is_too_small_names_the_fix():
    with pytest.raises(UserError) as error:
        sizing.check_fits(serve("meta-llama/Llama-3.1-70B"), slice_shape("v6e", "2x2"))
    message = str(error.value)
    assert message.startswith("topology: '2x2' cannot hold meta-llama/Llama-3.1-70B: needs")
    assert "weights" in message and "smallest v6e slice that fits is 2x4 (8 chips)" in message


def test_nothing_fits_is_an_error():
    with pytest.raises(UserError, match="fits no v5e slice"):
        sizing.smallest_fit(serve("meta-llama/Llama-3.1-405B", context=131072, batch=64), "v5e")


def test_kv_replication_when_tp_exceeds_kv_heads():
    eight = sizing.judge(serve("meta-llama/Llama-3.1-70B"), slice_shape("v6e", "2x4"))
    sixteen = sizing.judge(serve("meta-llama/Llama-3.1-70B"), slice_shape("v6e", "4x4"))
    assert sixteen.memory.part("kv_cache") == 2 * eight.memory.part("kv_cache")
    assert any("replicated x2" in note for note in sixteen.memory.notes)


def test_tensor_parallelism_counts_jax_devices_on_tpu7x():
    # one tpu7x chip is two JAX devices of 96 GiB: 141 GB of Llama 3.1 70B shards over both
    verdict = sizing.judge(serve("meta-llama/Llama-3.1-70B"), slice_shape("tpu7x", "1x1x1"))
    assert verdict.fits and verdict.tensor_parallel_size == 2
    assert sizing.judge(serve("meta-llama/Llama-3.1-70B"), slice_shape("v6e", "2x4")).tensor_parallel_size == 8


def test_a_refused_slice_is_the_users_topology_or_named_as_derived_from_the_model():
    from tpu_stacks.catalog.tpu import slice_shape
    from tpu_stacks.sizing import slice_refusal

    shape = slice_shape("v5e", "4x8")
    written = slice_refusal("saxml", "4x8", "m", shape, "gives 32 devices", "set saxml.topology: 2x4")
    assert str(written) == "saxml.topology: '4x8' gives 32 devices; set saxml.topology: 2x4"
    derived = slice_refusal("saxml", None, "some/model", shape, "gives 32 devices", "set saxml.topology: 2x4")
    assert str(derived) == (
        "saxml.model: 'some/model' is sized to v5e 4x8 (derived, no saxml.topology): it gives 32 devices; "
        "set saxml.topology: 2x4"
    )


def test_one_tensor_parallel_rule_for_every_engine():
    """The device count must divide the query heads; on tpu7x a chip is two devices, so a slice whose chip count
    divides the heads can still be refused. Every serving plan asks `heads_not_divided`; none re-derives it."""
    qwen = lookup_model("Qwen/Qwen2.5-1.5B-Instruct")  # 12 query heads
    assert sizing.heads_not_divided(qwen, slice_shape("v6e", "2x2")) is None  # 4 devices
    assert sizing.heads_not_divided(qwen, slice_shape("v6e", "2x4")) == (
        "gives tensor parallelism 8 (v6e devices), which does not divide Qwen/Qwen2.5-1.5B-Instruct's 12 attention heads"
    )
    assert sizing.heads_not_divided(qwen, slice_shape("tpu7x", "2x2x1")) is not None  # 4 chips, 8 devices
    assert (
        sizing.heads_not_divided(lookup_model(SAXML_175B_TEST), slice_shape("v5e", "4x8")) is None
    )  # 96 heads over 32
    plans = sorted(Path(sizing.__file__).parent.glob("*/plan.py"))
    assert plans, "the workloads' plans are found"
    assert [p for p in plans if "query_heads" in p.read_text()] == []
