"""A JetStream stack's first `up`, for `tpu-stacks plan`'s "before you run up" block (tpu_stacks/first_up.py).

The converter flow first converts the checkpoint in a Job on the jobs pool (CPU: the TPU pool is at 0 until the
Deployment's pods ask, jetstream/plan.py `_autoscaling`), then the Deployment's replicas start on TPU nodes, then
the smoke test. Pure: no provider SDK.
"""

from __future__ import annotations

from tpu_stacks import first_up
from tpu_stacks.jetstream.plan import JetStreamPlan


def converter_wait(resource: str, plan: JetStreamPlan) -> first_up.Wait:
    """The converter Job's wait: its own deadline (`converter.timeoutMinutes`), no TPU node yet."""
    deadline = plan.spec.converter.timeout_minutes * 60
    return first_up.job_wait(
        resource, "the checkpoint download and conversion (no TPU node yet)", deadline, download=True
    )


def first_up_record(plan: JetStreamPlan, waits: list[first_up.Wait]) -> first_up.FirstUp:
    """The record: the waits in order, every replica's slice, and the traffic model's choice with an `slo`."""
    shape = plan.shape
    return first_up.FirstUp(
        workload="jetstream",
        waits=tuple(waits),
        tpu=first_up.slices(plan.pool, plan.spec.replicas),
        slo=first_up.slo_summary(plan.slo, shape.generation, shape.chips) if plan.slo else None,
    )
