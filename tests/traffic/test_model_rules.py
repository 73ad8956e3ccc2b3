"""traffic/model.py's rules at their boundaries, as relations the model must keep whatever its calibration: a
limit equal to a batch's own latency admits that batch, which limit binds, when the KV cache binds, the refusal's
numbers (sizing's own), and one replica for the smallest target."""

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.sizing import judge
from tpu_stacks.traffic.model import Workload, _request, choose, fits, kv_capacity, operating_point, replicas_for

MODEL = lookup_model("meta-llama/Llama-3.1-8B")
SHAPE = slice_shape("v6e", "1x1")
WORK = Workload(engine="vllm", input_tokens=512, output_tokens=256)


def test_a_limit_equal_to_a_batchs_own_latency_admits_that_batch_and_names_what_binds():
    at_ten = operating_point(MODEL, SHAPE, WORK, 10)
    ntpot = choose(MODEL, SHAPE, WORK, ntpot_ms=at_ten.ntpot_ms, ttft_ms=None)
    assert (ntpot.point.batch, ntpot.limit) == (10, "ntpot-target")
    ttft = choose(MODEL, SHAPE, WORK, ntpot_ms=None, ttft_ms=at_ten.ttft_ms)
    assert (ttft.point.batch, ttft.limit) == (10, "ttft-target")


def test_the_kv_cache_binds_when_it_holds_no_more_than_the_cap():
    capacity = kv_capacity(MODEL, SHAPE, WORK)
    assert 1 < capacity < 1000
    for cap in (capacity, capacity + 1, 1000):
        held = choose(MODEL, SHAPE, WORK, ntpot_ms=None, ttft_ms=None, max_batch=cap)
        assert (held.point.batch, held.limit) == (capacity, "kv-capacity")
    capped = choose(MODEL, SHAPE, WORK, ntpot_ms=None, ttft_ms=None, max_batch=capacity - 1)
    assert capped.point.batch == capacity - 1 and capped.limit == capped.point.bound


def test_a_slice_the_model_does_not_fit_says_sizings_numbers():
    big = lookup_model("meta-llama/Llama-3.1-70B")
    ok, why = fits(big, SHAPE, WORK)
    verdict = judge(_request(big, WORK, WORK.context), SHAPE)
    need, have = verdict.memory.total_bytes / 2**30, verdict.usable_bytes / 2**30
    assert not ok and why == f"does not fit: needs {need:.1f} GiB at batch 1, {have:.1f} GiB usable"
    assert 130 < need < 140 and 20 < have < 32  # 70B in bf16 on one 32 GiB chip


@pytest.mark.parametrize(("target", "per_replica", "replicas"), [(1e-12, 1000.0, 1), (3000.0, 1000.0, 3)])
def test_replicas_carry_the_target_and_never_fewer_than_one(target, per_replica, replicas):
    assert replicas_for(target, per_replica) == replicas
