"""The first `up`'s own proof: the smoke-test Job (k8s/smoke.py) sent one real request and read the metrics.

Its verdict is the Job's: condition Complete or Failed (batch/v1 JobStatus), and the pod's termination message,
the one line the script writes. Behind GKE Inference Gateway the same Job reads the Gateway's address from its
status and must see the picker pick (ledger gke.gateway-status-address): that is a check of its own name.
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import is_true, pods, read_object, ref
from tpu_stacks_live.verify.plan import StackPlan, name_of, namespace_of
from tpu_stacks_live.verify.registry import Check, Context, check

GATEWAY_ENV = "SMOKE_GATEWAY"


def _smoke_jobs(plan: StackPlan, through_gateway: bool) -> list[dict[str, Any]]:
    found = []
    for job in plan.of_kind("Job", "batch"):
        labels = (job.get("metadata") or {}).get("labels") or {}
        if not all(labels.get(k) == v for k, v in SMOKE_TEST_LABELS.items()):
            continue
        env = {e.get("name") for c in job["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
        if (GATEWAY_ENV in env) == through_gateway:
            found.append(job)
    return found


def _message(ctx: Context, job: dict[str, Any]) -> str:
    for pod in pods(ctx.cluster, namespace_of(job), f"job-name={name_of(job)}"):
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            message = ((status.get("state") or {}).get("terminated") or {}).get("message")
            if message:
                return " ".join(str(message).split())
    return ""


def _judge(ctx: Context, this: Check, job: dict[str, Any]):
    live = read_object(ctx.cluster, job)
    if live is None:
        return this.answer(Verdict.UNKNOWN, f"{ref(job)} not found", "pulumi up (it creates and awaits the Job)")
    if is_true(live, "Complete"):
        return this.answer(Verdict.PASS, _message(ctx, job) or f"{ref(job)} Complete")
    if is_true(live, "Failed"):
        line = _message(ctx, job) or "no termination message"
        return this.answer(
            Verdict.FAIL,
            f"{ref(job)} Failed: {line}",
            "the line names the cause: a deny log entry means a missing allow for the test pod (smoke_test_group), "
            "a missing metric a catalogue error (catalog/engines/)",
        )
    return this.answer(Verdict.UNKNOWN, f"{ref(job)} still running", "wait for it, then verify again")


@check(
    "smoke-test",
    "the smoke-test Job's request through the Service and its metrics read passed",
    lambda plan: bool(_smoke_jobs(plan, through_gateway=False)),
)
def smoke_test(ctx: Context, this: Check):
    return _judge(ctx, this, _smoke_jobs(ctx.plan, through_gateway=False)[0])


@check(
    "gateway-smoke-through-the-address",
    "the smoke test reached the Gateway's address and the picker picked",
    lambda plan: bool(_smoke_jobs(plan, through_gateway=True)),
)
def gateway_smoke(ctx: Context, this: Check):
    return _judge(ctx, this, _smoke_jobs(ctx.plan, through_gateway=True)[0])
