"""Decisions of vllm/plan.py that `make mutation` found unpinned (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from tests.vllm.test_multihost import ONE_SLICE
from tests.vllm.test_multihost import plan as multihost_plan
from tests.vllm.test_plan import plan
from tpu_stacks.vllm.plan import VllmPlan


def test_one_pipeline_stage_alone_keeps_the_stacks_tensor_parallel_size():
    """`-pp 1` is vLLM's default (one stage: `--pipeline-parallel-size` defaults to 1 in vLLM's EngineArgs), so with
    the stack's --tensor-parallel-size=8 it asks for 8 x 1 = 8 devices, the v6e 2x4 slice's 8 chips: accepted, and
    the stack still sets the tensor parallel size (a refusal here would ask the user for a flag that changes
    nothing)."""
    for written in (["-pp", "1"], ["--pipeline-parallel-size=1"]):
        decided = plan(extra_args=written)
        assert isinstance(decided, VllmPlan)
        args = decided.engine_args()
        assert "--tensor-parallel-size=8" in args and args[-len(written) :] == written


def test_only_a_multi_host_slice_turns_on_the_ray_operator():
    """A single-host replica is a Deployment: no KubeRay, so GKE's Ray add-on stays as the user left it (off by
    default). A multi-host replica is a RayService, which only KubeRay reconciles: the add-on is turned on."""
    single = plan()
    assert not single.multi_host and not single.cluster.spec.addons.ray_operator
    multi = multihost_plan(replicas=ONE_SLICE)
    assert multi.multi_host and multi.cluster.spec.addons.ray_operator is True
