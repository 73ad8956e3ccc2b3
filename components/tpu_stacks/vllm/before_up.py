"""A vLLM stack's first `up`, for `tpu-stacks plan`'s "before you run up" block (tpu_stacks/first_up.py).

Single host: the Deployment's wait (its pool's minimum nodes exist from the pool's creation), then the smoke test;
the server downloads the weights itself inside its start. Multi-host: the weights download on a CPU node first
(the slice's pools are at 0 until the RayService asks, vllm/plan.py `_autoscaling`), then the slice's nodes, the
image and the engine's start, then the smoke test. The component passes the budgets it gives the engine.
Pure: no provider SDK.
"""

from __future__ import annotations

from tpu_stacks import first_up
from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES, AwaitBudget
from tpu_stacks.vllm import download_plan
from tpu_stacks.vllm.plan import VllmPlan

DOWNLOAD_MB_PER_S = download_plan.DOWNLOAD_BYTES_PER_S // 10**6
READ_MIB_PER_S = download_plan.READ_BYTES_PER_S // 2**20


def multihost_waits(name: str, plan: VllmPlan, weights_bytes: int, ray_service: AwaitBudget) -> list[first_up.Wait]:
    """The download Job's wait (no TPU node yet), then the RayService's (`ray_service`: rayservice.budget)."""
    return [
        first_up.job_wait(
            f"{name}-weights-download",
            "the weights download (on a CPU node: no TPU node yet)",
            download_plan.deadline_seconds(weights_bytes),
            download=True,
            # download_plan.deadline_seconds, piece by piece (job_wait checks that they add up to it)
            deadline_parts=(
                ("CPU node", NODE_PROVISIONING_MINUTES),
                ("image", IMAGE_PULL_MINUTES),
                ("download", download_plan.download_minutes(weights_bytes)),
            ),
        ),
        first_up.started_wait(
            f"{name}-rayservice",
            "Ray Serve's endpoint: the slice's nodes, the image, every host's weights read, the XLA compile",
            ray_service,
            plan.spec.startup_minutes,
            tpu=True,
        ),
    ]


def first_up_record(plan: VllmPlan, waits: list[first_up.Wait], weights_bytes: int) -> first_up.FirstUp:
    """The record: the waits in order, the slices the first `up` starts (the minimum replicas), the assumptions
    behind a multi-host start, and the traffic model's choice when the section has an `slo`."""
    notes: tuple[str, ...] = ()
    if plan.multi_host:
        notes = (
            f"weights {weights_bytes / 10**9:.1f} GB: downloaded in {download_plan.download_minutes(weights_bytes)}m "
            f"at an assumed {DOWNLOAD_MB_PER_S} MB/s; each host then reads them in about "
            f"{download_plan.load_minutes(weights_bytes)}m (assumed {READ_MIB_PER_S} MiB/s per host), within "
            f"startupMinutes {plan.spec.startup_minutes}",
        )
    shape = plan.shape
    return first_up.FirstUp(
        workload="vllm",
        waits=tuple(waits),
        tpu=first_up.slices(plan.pool, plan.spec.replicas.min),
        notes=notes,
        slo=first_up.slo_summary(plan.slo, shape.generation, shape.chips) if plan.slo else None,
    )
