"""The engines' traffic records (catalog/engine_traffic.py): what the traffic model and the pack ask of an engine
instead of branching on its name."""

import pytest

from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic, traffic_of
from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.jetstream import JETSTREAM
from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.tpu import GENERATIONS, all_slice_shapes
from tpu_stacks.errors import UserError
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
