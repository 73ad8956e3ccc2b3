"""How long `pulumi up` waits for a workload object, derived from the probes it carries. Pure: the
policy pack (`await-covers-startup`) and the components share it without loading a provider SDK.

pulumi-kubernetes (4.34) waits for a Deployment, StatefulSet, DaemonSet, Job or Pod to become ready
and fails the update after 10 minutes (pulumi/pulumi-kubernetes provider/pkg/await/await.go,
`Creation`/`Update`: `timeout := 10 * time.Minute`; deployment.go `DefaultDeploymentTimeoutMins = 10`;
a Deployment is ready when its new ReplicaSet has every replica ready). The resource's
`customTimeouts` replace that default, and without them the `pulumi.com/timeoutSeconds` annotation
does (provider/pkg/metadata/overrides.go `TimeoutDuration`: customTimeouts first, then the
annotation). A custom resource (JobSet, RayCluster, RayJob) is reported ready at once, unless it
carries `pulumi.com/waitFor` (or the provider runs with `PULUMI_K8S_AWAIT_ALL=true`); then it is
awaited with the same default; `pulumi.com/skipAwait: "true"` turns any await off
(overrides.go `ReadyCondition`; CHANGELOG 4.18.0).

A TPU server whose startup probe allows 40 minutes (weights, then the XLA compile) would so be
declared failed after 10. Its await budget is derived here from the probes it actually carries:
node provisioning + image pull + the longest start its probes allow, once per rollout wave on update.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Kubernetes' defaults for an unset Probe field (API reference, core/v1 Probe: periodSeconds
# "Default to 10 seconds", failureThreshold "Defaults to 3", initialDelaySeconds 0; ledger:
# pulumi-kubernetes.probe.period-default, pulumi-kubernetes.probe.failure-threshold-default).
PROBE_DEFAULT_PERIOD_SECONDS = 10
PROBE_DEFAULT_FAILURE_THRESHOLD = 3
STARTUP_PERIOD_SECONDS = 10

# pulumi-kubernetes' await, as read above (the keys it reads and its default;
# ledger: pulumi-kubernetes.await.default-minutes).
PROVIDER_DEFAULT_AWAIT_SECONDS = 600
TIMEOUT_SECONDS_ANNOTATION = "pulumi.com/timeoutSeconds"
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
AWAITED_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "Pod", "ReplicationController"})
"""Kinds with a built-in awaiter that waits for their pods (provider/pkg/await/awaiters.go)."""

NODE_PROVISIONING_MINUTES = 15
"""Time to bring up a TPU node for a pending pod before any probe counts: a pool that autoscales from
its minimum (the HPA's next replica), a spot or flex-start node re-created, Autopilot creating the
slice. 15 minutes is how long the cluster autoscaler itself waits for a requested node to register
before it gives up on it (kubernetes/autoscaler cluster-autoscaler/FAQ.md, "What are the parameters
to CA?": `max-node-provision-time`, default 15 minutes): a node slower than that is not coming in
this attempt. Fixed-size pools are created before the workload (it depends on them), so for them
this is headroom. Queued provisioning can wait far longer for capacity: not covered [I]."""
IMAGE_PULL_MINUTES = 10
"""Pulling the server image before the container starts (and the probes start counting): the TPU
serving and training images (vllm-tpu, JetStream, MaxText) are several GB each. An allowance, not a
measurement [I]; image streaming would make it shorter."""
JOB_REPORT_MINUTES = 2
"""A Job's await outlasts its `activeDeadlineSeconds` by this much, so `pulumi up` reports the Job's
own DeadlineExceeded failure rather than its timeout."""


def window_seconds(initial_delay: int | None, period: int | None, failures: int | None) -> int:
    """How long a probe lets a container go without passing before the kubelet restarts it:
    the first probe after `initialDelaySeconds`, then `failureThreshold` failures `periodSeconds` apart."""
    period = PROBE_DEFAULT_PERIOD_SECONDS if period is None else period
    failures = PROBE_DEFAULT_FAILURE_THRESHOLD if failures is None else failures
    return (initial_delay or 0) + period * failures


def _field(value: Any, snake: str, camel: str) -> Any:
    """One field of an Args object or of its dict form (either may be used as an input)."""
    if isinstance(value, Mapping):
        return value.get(camel, value.get(snake))
    return getattr(value, snake, None) if value is not None else None


def _probe_window(probe: Any) -> int:
    return window_seconds(
        _field(probe, "initial_delay_seconds", "initialDelaySeconds"),
        _field(probe, "period_seconds", "periodSeconds"),
        _field(probe, "failure_threshold", "failureThreshold"),
    )


def container_start_seconds(container: Any) -> int:
    """The longest a container may take to start before its probes restart it: the startup probe's
    window, else (liveness runs from the start) the liveness probe's; 0 when neither is set."""
    startup = _field(container, "startup_probe", "startupProbe")
    if startup is not None:
        return _probe_window(startup)
    liveness = _field(container, "liveness_probe", "livenessProbe")
    return _probe_window(liveness) if liveness is not None else 0


def start_seconds(template: Any) -> int:
    """The longest start the probes of a pod template allow (over its containers)."""
    containers: Iterable[Any] = _field(_field(template, "spec", "spec"), "containers", "containers") or []
    return max((container_start_seconds(c) for c in containers), default=0)


@dataclass(frozen=True)
class AwaitBudget:
    """How long `pulumi up` waits for one object on create and on update, in minutes."""

    create_minutes: int
    update_minutes: int

    def custom_timeouts(self) -> Any:
        """The resource option the provider reads first (delete keeps the provider's default); Pulumi is
        imported here only, so the pack and the plans can use this module without it."""
        import pulumi

        return pulumi.CustomTimeouts(create=f"{self.create_minutes}m", update=f"{self.update_minutes}m")


def pod_budget(template: Any, rollout_waves: int = 1) -> AwaitBudget:
    """The await budget of an object whose pods start on TPU nodes from `template`.

    Create: a node, the image, then the longest start the template's probes allow. Update: a rollout
    that replaces `rollout_waves` groups of pods one after the other (a Deployment with maxSurge 0
    and maxUnavailable 1 restarts its replicas one by one) pulls and starts each group in turn."""
    start = IMAGE_PULL_MINUTES + math.ceil(start_seconds(template) / 60)
    return AwaitBudget(
        create_minutes=NODE_PROVISIONING_MINUTES + start,
        update_minutes=NODE_PROVISIONING_MINUTES + max(1, rollout_waves) * start,
    )


def job_budget(active_deadline_seconds: int) -> AwaitBudget:
    """The await budget of a Job bounded by its own deadline (which counts its pods' wait for a node)."""
    minutes = math.ceil(active_deadline_seconds / 60) + JOB_REPORT_MINUTES
    return AwaitBudget(create_minutes=minutes, update_minutes=minutes)
