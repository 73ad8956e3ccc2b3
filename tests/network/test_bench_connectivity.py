"""`tpu-stacks bench`'s objects added to a planned stack hold to the connectivity contract, checked by
network-config-analyzer as every shipped stack is (tests/network/contract.py): each flow of the bench pod's policy
is allowed (its requests reach the server's port through the server's own policy), nothing into any pod is wider
than its contract, and the bench pod is covered by an annotated policy. Needs PyPI once, to make nca's venv."""

from __future__ import annotations

import pytest

from tests.live.support import planned
from tests.network.contract import check
from tpu_stacks_live.bench.config import Workload
from tpu_stacks_live.bench.job import manifests
from tpu_stacks_live.bench.target import bench_target


@pytest.mark.network
@pytest.mark.flows_contract
@pytest.mark.parametrize("stack", ["dev", "vllm-405b"])
def test_the_bench_pod_holds_to_the_contract_beside_the_stack(stack, nca):
    plan = planned(stack)
    bench = manifests(bench_target(plan), Workload(rates=(1.0,), input_tokens=16, output_tokens=16), "abc123")
    failures = check([*plan.objects, *bench], nca=nca)
    assert not failures, "\n" + "\n".join(f"{stack} + bench: {line}" for line in failures)
