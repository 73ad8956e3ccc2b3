"""A Ray Serve LLM callback of the multi-host vLLM server image: a replica starts its engine only once the whole
TPU slice is placed.

Why: Ray Serve LLM 2.60.0 reserves the slice's first host (100 s at most), creates the placement group of the whole
slice and returns it without waiting (ray/util/tpu.py, SlicePlacementGroup), then reads the group's nodes at once to
initialize each of them (ray/llm/_internal/serve/utils/node_initialization_utils.py `initialize_node`). While the
other hosts are still coming up (a node pool scaled from zero, the image, the compile cache), the group is pending,
its node ids are empty, and the replica's start fails within seconds: Serve counts a failed start, and after enough
of them gives the deployment up for good. Waiting here, before the node initialization (the `on_before_node_init`
hook of `CallbackBase`), turns those fast failures into one start that waits for the slice, within Ray Serve LLM's
own engine-start limit (RAYLLM_ENGINE_START_TIMEOUT_S, which the stack sets to `vllm.startupMinutes`).

Installed by the image's Dockerfile (on PYTHONPATH) and named by the Serve config's `callback_config`
(components/tpu_stacks/vllm/multihost_plan.py CALLBACK_CLASS); the upstream behaviour it relies on is recorded in
the repository's upstream ledger (ray.serve-llm.node-init-reads-pending-group and the rows beside it).
"""

from ray.llm._internal.common.callbacks.base import CallbackBase


class WaitForSlice(CallbackBase):
    """Waits for the replica's placement group (the slice) to be placed before Ray Serve LLM reads its nodes."""

    async def on_before_node_init(self) -> None:
        group = self.ctx.placement_group
        if group is not None:
            await group.ready()
