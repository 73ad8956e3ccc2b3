"""Rule 12: `pulumi up` waits at least as long as a workload's probes let its pods start.

pulumi-kubernetes waits for a Deployment, StatefulSet, DaemonSet, Job or Pod (and for any object
carrying `pulumi.com/waitFor`) to become ready, 10 minutes unless the resource's `customTimeouts` or
its `pulumi.com/timeoutSeconds` annotation say otherwise, then fails the update (sources in
`tpu_stacks.k8s.probes`). A TPU server whose startup probe allows 40 minutes for loading weights and
compiling is healthy at minute 11, yet its first `pulumi up` fails; the next one starts the wait
again. The rule compares the two numbers the object itself carries: the longest start its probes
allow (a startup probe's initialDelaySeconds + failureThreshold x periodSeconds, else the liveness
probe's, which runs from the start) and the create and update await budgets.

Mandatory: a violation is an update that fails while the workload is fine, on the first deploy of
every slow-starting server, and it is found from the object alone (no false alarm from missing
context). Objects the provider does not await (`pulumi.com/skipAwait: "true"`, or a custom resource
without `pulumi.com/waitFor`) are skipped; a provider run with PULUMI_K8S_AWAIT_ALL=true awaits those
too, which no preview can see. Setting: `marginMinutes`, what the budget must leave beyond the probes
for scheduling, a node and the image (0 by default: those depend on the cluster).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import UNKNOWN, as_int, is_true, plain
from tpu_policies.workloads import is_kubernetes, kind_of, name_of, pod_templates, workload_annotations
from tpu_stacks.objects.awaits import (
    AWAITED_KINDS,
    PROVIDER_DEFAULT_AWAIT_SECONDS,
    SKIP_AWAIT_ANNOTATION,
    TIMEOUT_SECONDS_ANNOTATION,
    WAIT_FOR_ANNOTATION,
    window_seconds,
)

PROBE_FIELDS = ("initialDelaySeconds", "periodSeconds", "failureThreshold")


MARGIN_MINUTES = Setting(
    "marginMinutes",
    0,
    "Minutes the await budget must leave beyond the probes' start window (scheduling, a new node, the image pull).",
    minimum=0,
)


def _window(probe: dict[str, Any]) -> int | None:
    """A probe's window in seconds; None when a field is unknown at preview."""
    values = [probe.get(key) for key in PROBE_FIELDS]
    if any(value is UNKNOWN or (value is not None and as_int(value) is None) for value in values):
        return None
    delay, period, failures = (None if value is None else as_int(value) for value in values)
    return window_seconds(delay, period, failures)


def _longest_start(resource_type: str, props: dict[str, Any]) -> tuple[int, str] | None:
    """The longest start any container's probes allow, and which probe allows it."""
    best: tuple[int, str] | None = None
    for template in pod_templates(resource_type, props):
        for container in template.containers(init=False):
            for key in ("startupProbe", "livenessProbe"):
                probe = container.get(key)
                if probe is UNKNOWN:
                    break
                if not isinstance(probe, dict):
                    continue
                seconds = _window(probe)
                if seconds is not None and (best is None or seconds > best[0]):
                    best = (seconds, f"{template.where}: container {container.get('name') or '?'} {key}")
                break  # liveness only counts while there is no startup probe
    return best


def _budget(seconds: float, notes: dict[str, Any]) -> tuple[int, str] | None:
    """The await budget of one operation and where it comes from; None when unknown at preview."""
    if seconds:
        return int(seconds), "customTimeouts"
    annotated = notes.get(TIMEOUT_SECONDS_ANNOTATION)
    if annotated is UNKNOWN:
        return None
    if annotated is not None and as_int(annotated) is not None:
        return as_int(annotated) or 0, f"annotation {TIMEOUT_SECONDS_ANNOTATION}"
    return PROVIDER_DEFAULT_AWAIT_SECONDS, "pulumi-kubernetes' default"


def _minutes(seconds: int) -> str:
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds % 60 else f"{seconds // 60}m"


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not is_kubernetes(args.resource_type):
        return
    props = plain(args.props)
    if not isinstance(props, dict):
        return
    kind = kind_of(args.resource_type, props)
    notes = workload_annotations(props)
    if is_true(notes.get(SKIP_AWAIT_ANNOTATION)) or notes.get(SKIP_AWAIT_ANNOTATION) is UNKNOWN:
        return
    if kind not in AWAITED_KINDS and not notes.get(WAIT_FOR_ANNOTATION):
        return  # reported ready at once: nothing to time out
    start = _longest_start(args.resource_type, props)
    if start is None:
        return
    needed = start[0] + 60 * int(MARGIN_MINUTES.read(args))
    timeouts = args.opts.custom_timeouts if args.opts else None
    short: list[str] = []
    for operation in ("create", "update"):
        seconds = getattr(timeouts, f"{operation}_seconds", 0) if timeouts else 0
        budget = _budget(seconds or 0, notes)
        if budget is not None and budget[0] < needed:
            short.append(f"{operation} {_minutes(budget[0])} ({budget[1]})")
    if short:
        report_violation(
            f"{kind} {name_of(props, args.name)}: its probes let a pod take up to {_minutes(start[0])} to start "
            f"({start[1]}), but `pulumi up` waits only {', '.join(short)} for it to become ready and then "
            f"fails the update; set the resource option customTimeouts (create and update) to at least "
            f"{_minutes(needed)}, or the {TIMEOUT_SECONDS_ANNOTATION} annotation",
            None,
        )


POLICY = ResourceValidationPolicy(
    name="await-covers-startup",
    description="Kubernetes objects that `pulumi up` waits for get an await budget (customTimeouts or "
    "pulumi.com/timeoutSeconds) at least as long as their probes let their pods start.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
    config_schema=config_schema(MARGIN_MINUTES),
)
