"""The TPU bound of shipped stacks' plans: each TPU pool's hosts at most (autoscaling maximum, else the node
count, per zone) times its machine type's chips (the catalogue), a ComputeClass's chips per slice, the smoke-test
Jobs; and the bound's arithmetic and wording."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tests.shipped import shipped
from tpu_stacks.catalog.tpu import generation, parse_topology
from tpu_stacks_live.e2e.budget import Budget, TpuPool, budget_of, clock, plan_budget, tpu_pool

ROOT = Path(__file__).resolve().parents[3]


def _config(stack: str) -> dict:
    return yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]


def test_dev_is_one_v6e_chip_on_one_host_with_a_smoke_test():
    budget = budget_of("dev", shipped("dev").resources)
    (pool,) = budget.pools
    assert pool.machine_type == "ct6e-standard-1t"
    assert (pool.hosts, pool.chips) == (1, generation("v6e").machine_type("ct6e-standard-1t").chips_per_vm)
    assert budget.classes == ()
    assert len(budget.smoke_jobs) == 1 and budget.smoke_jobs[0].startswith("smoke-test-")
    assert budget.describe() == "TPU at most 1 chip on 1 host (vllm-cluster-vllm-pool: 1 x ct6e-standard-1t = 1 chip)"


def test_the_real_plan_path_reads_the_same_budget():
    assert plan_budget(ROOT, "dev") == budget_of("dev", shipped("dev").resources)


def test_multislice_training_counts_every_slice_and_has_no_smoke_test():
    config = _config("raytrain-multislice")["tpu-stacks:raytrain"]
    budget = budget_of("raytrain-multislice", shipped("raytrain-multislice").resources)
    slices = config.get("numSlices") or config.get("slices")
    assert len(budget.pools) == slices
    assert budget.chips == slices * parse_topology(config["topology"]).chips
    assert budget.smoke_jobs == ()
    assert "no smoke-test Job" in budget.smoke_line()


def test_an_autoscaling_pool_counts_its_maximum():
    budget = budget_of("vllm-405b", shipped("vllm-405b").resources)
    (pool,) = budget.pools
    record = next(r for r in shipped("vllm-405b").resources if r.name == pool.name)
    assert record.inputs["autoscaling"]["minNodeCount"] == 0  # scales from zero; the bound is the maximum
    assert pool.hosts == record.inputs["autoscaling"]["maxNodeCount"]
    assert pool.chips == parse_topology(record.inputs["placementPolicy"]["tpuTopology"]).chips


def test_a_compute_class_stack_names_chips_per_slice_and_no_bound():
    budget = budget_of("vllm-fallback", shipped("vllm-fallback").resources)
    assert budget.pools == () and budget.chips == 0
    (found,) = budget.classes
    assert found.chips_per_slice == parse_topology("2x4").chips
    assert "the plan has no bound" in budget.spent_line(3600, still_running=False)


@pytest.mark.parametrize(
    "inputs, hosts",
    [
        ({"nodeCount": 4}, 4),
        ({"initialNodeCount": 1, "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3}}, 3),
        ({"autoscaling": {"maxNodeCount": 2}, "nodeLocations": ["a", "b"]}, 4),  # per zone
        ({"autoscaling": {"totalMaxNodeCount": 5}, "nodeLocations": ["a", "b"]}, 5),  # pool-wide
    ],
)
def test_hosts_at_most(inputs: dict, hosts: int):
    pool = tpu_pool("p", {**inputs, "nodeConfig": {"machineType": "ct5lp-hightpu-4t"}})
    assert pool == TpuPool("p", "ct5lp-hightpu-4t", hosts, hosts * 4)


def test_a_cpu_pool_is_no_tpu_pool():
    assert tpu_pool("system", {"nodeCount": 3, "nodeConfig": {"machineType": "e2-standard-4"}}) is None
    record = SimpleNamespace(type="gcp:container/nodePool:NodePool", name="system",
                             inputs={"nodeCount": 3, "nodeConfig": {"machineType": "e2-standard-4"}})  # fmt: skip
    assert budget_of("s", [record]).describe() == "no TPU node pool or TPU ComputeClass in the plan"


def test_chip_hours_and_clock():
    budget = Budget("s", (TpuPool("a", "ct6e-standard-4t", 4, 16), TpuPool("b", "ct6e-standard-4t", 4, 16)), (), ())
    assert budget.chip_hours(1800) == 16.0
    assert "at most 16.00 chip-hours (32 chips" in budget.spent_line(1800, still_running=False)
    assert [clock(s) for s in (5, 65, 3725)] == ["5s", "1m 05s", "1h 02m 05s"]
