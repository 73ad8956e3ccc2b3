"""The engines' traffic records (catalog/engine_traffic.py): what the traffic model and the pack ask of an engine
instead of branching on its name."""

import pytest

from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic, traffic_of
from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.tpu import GENERATIONS, all_slice_shapes
from tpu_stacks.errors import UserError
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.traffic.model import calibration
from tpu_stacks.traffic.optimizer import PINNED_VERSIONS, deployable


def test_every_calibrated_engine_has_a_record_and_no_other():
    """Collected on each call (a workload folder's engine, a test's toy, counts)."""
    known = traffic()
    assert {name for name, record in known.items() if record.calibrations} == {"vllm", "jetstream"}
    # an engine without a calibration says why (SGLang-JAX, and any engine a folder declares so): its KV model only
    assert {name for name, record in known.items() if not record.calibrations} == {
        name for name, record in known.items() if record.uncalibrated
    }
    assert "sglang" in {name for name, record in known.items() if record.uncalibrated}
    for name, record in known.items():
        assert record.sizing_engine == name
        assert all(build.engine == name for build in record.builds)


def test_an_engine_without_a_record_is_refused_as_the_calibration_refuses_it():
    with pytest.raises(UserError) as record_error:
        traffic_of("saxml")
    with pytest.raises(UserError) as efficiency_error:
        calibration("saxml", "v6e")
    assert str(record_error.value) == str(efficiency_error.value)
    assert "use vllm or jetstream" in str(record_error.value)


def test_kv_is_held_per_slot_for_jetstream_and_paged_for_vllm():
    assert TRAFFIC["jetstream"].fixed_batch and TRAFFIC["jetstream"].kv_tokens(4096, 1800, 128) == 4096
    assert not TRAFFIC["vllm"].fixed_batch and TRAFFIC["vllm"].kv_tokens(4096, 1800, 128) == 1928


def test_the_pinned_builds_are_the_catalogues():
    declared = {d.name: tuple(b.version for b in d.traffic.builds) for d in declarations() if d.traffic is not None}
    assert declared["sglang"] == (SGLANG.version,)
    assert PINNED_VERSIONS == {"vllm": (VLLM.version,), "jetstream": tuple(e.version for e in JETSTREAM), **declared}


@pytest.mark.parametrize("generation", [g.name for g in GENERATIONS])
def test_the_deployable_slices_are_the_stacks(generation):
    for shape in all_slice_shapes(generation):
        jetstream = not shape.multi_host and JETSTREAM[-1].serves_generation(generation)
        vllm = not shape.multi_host or RAY_SERVE.serves_generation(generation)
        assert deployable(shape, "jetstream") is jetstream, shape
        assert deployable(shape, "vllm") is vllm, shape
    assert any(deployable(s, "vllm") for s in all_slice_shapes(generation))


@pytest.mark.parametrize(
    "max_model_len, max_num_seqs, page",
    [
        (2048, 256, 128),  # next power of two 2048 / 16
        (1000, 256, 64),  # 1024 / 16
        (200, 256, 16),  # below 16: 16
        (4096, 256, 256),  # 4096 / 16 = 256, the cap
        (8192, 256, 256),  # 512 clamped to 256
        (8193, 128, 16),  # above 8,192 tokens: 16 (1,024 pages a sequence allowed at 128 sequences)
        (8193, 256, 32),  # ... but 512 pages at 256 sequences: 8193 / 512 -> 17 -> 32
        (9216, 320, 32),  # ... raised to the SMEM floor: 131,072 / 320 = 409 pages, 9216 / 409 -> 23 -> 32
        (131072, 256, 256),  # 512 pages a sequence: 256 tokens each
    ],
)
def test_vllm_pages_the_kv_cache_as_tpu_inference_does_when_not_told(max_model_len, max_num_seqs, page):
    assert TRAFFIC["vllm"].page_tokens(max_model_len, max_num_seqs) == page


def test_the_page_size_sets_the_occupancy_and_a_given_block_size_wins():
    from tpu_stacks.catalog.models import lookup_model
    from tpu_stacks.catalog.tpu import slice_shape
    from tpu_stacks.traffic.model import Workload, kv_capacity, page_tokens

    model, shape = lookup_model("meta-llama/Llama-3.1-8B"), slice_shape("v6e", "1x1")
    # 1,030 + 20 / 2 = 1,040 tokens: 1,040 in 16-token pages, 1,152 in tpu-inference's 128-token pages
    own = Workload(engine="vllm", input_tokens=1030, output_tokens=20, max_model_len=2048)
    given = Workload(engine="vllm", input_tokens=1030, output_tokens=20, max_model_len=2048, page_tokens=16)
    assert (page_tokens(own), page_tokens(given)) == (128, 16)
    assert kv_capacity(model, shape, own) < kv_capacity(model, shape, given)


def test_vllm_takes_its_default_memory_fraction_when_not_told():
    from tpu_stacks.catalog.models import lookup_model
    from tpu_stacks.catalog.tpu import slice_shape
    from tpu_stacks.traffic.model import Workload, kv_free_bytes

    model, shape = lookup_model("meta-llama/Llama-3.1-8B"), slice_shape("v6e", "1x1")
    default = Workload(engine="vllm", input_tokens=1000, output_tokens=100)
    told = Workload(engine="vllm", input_tokens=1000, output_tokens=100, memory_fraction=0.92)
    assert kv_free_bytes(model, shape, default) == kv_free_bytes(model, shape, told)
