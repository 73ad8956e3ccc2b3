"""`verify --probe`: create the probe pods, wait for their reports, judge them, and delete every pod created.

Creating (and deleting) these short-lived pods is the one write `--probe` makes; the rest of `verify` only reads.
The pods are created together, then read until each has reported or `timeout_s` has passed since they were
created; every pod created is deleted in a `finally`, whatever happened. What each answer means:
- PASS: every attempt of the probe had the expected outcome (plan.py lists them per kind);
- FAIL: an attempt had another outcome; the fix names the NetworkPolicy and the flow to look at;
- UNKNOWN: the pod was not created (the API's reason), did not start or finish within `timeout_s` (the pod's
  status reason: Unschedulable, ImagePullBackOff...), reported nothing readable, or a peer probe found no
  running server pod to connect to.
The API calls are CoreV1Api's create, read, list and delete of namespaced pods (kubernetes==37.0.2).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

import kubernetes

from tpu_stacks_live.probe import plan
from tpu_stacks_live.probe.plan import Probe
from tpu_stacks_live.probe.pod import MARKER, RUN, manifest
from tpu_stacks_live.verdict import CheckResult, Verdict

POLL_SECONDS = 2.0
ApiException = kubernetes.client.exceptions.ApiException


def _cleanup_fix(run_id: str) -> str:
    return f"kubectl delete pods -A -l {MARKER}=true,{RUN}={run_id}"


def probe_checks(
    objects: list[dict],
    api_client: kubernetes.client.ApiClient,
    *,
    timeout_s: float = 60,
    core: Any = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    run_id: str | None = None,
) -> list[CheckResult]:
    """Try each flow of the stack's contract (the rendered `objects`) with a probe pod; one result per probe.
    `core` replaces `CoreV1Api(api_client)` (tests pass a fake); `clock` and `sleep` pace the wait."""
    run = Run(
        core if core is not None else kubernetes.client.CoreV1Api(api_client),
        api_client if api_client is not None else kubernetes.client.ApiClient(),
        run_id or secrets.token_hex(3),
        clock,
        sleep,
    )
    return run.all(plan.probes(objects), plan.probe_image(objects), timeout_s)


def _reason(error: ApiException) -> str:
    try:
        return json.loads(error.body)["message"]
    except (TypeError, ValueError, KeyError):
        return f"{error.status} {error.reason}"


class Run:
    """One `--probe` run: its pods carry its id, so a crashed run's leftovers are found (pod.py)."""

    def __init__(self, core: Any, serializer: Any, run_id: str, clock: Callable[[], float], sleep: Callable) -> None:
        self.core, self.serializer, self.run_id, self.clock, self.sleep = core, serializer, run_id, clock, sleep

    def _pod(self, name: str, namespace: str) -> dict[str, Any]:
        return self.serializer.sanitize_for_serialization(self.core.read_namespaced_pod(name, namespace))

    def attempts(self, probe: Probe) -> list[dict[str, Any]] | CheckResult:
        """The probe's attempts; a peer or deny probe's connect to a running pod of its target (or UNKNOWN)."""
        target = probe.target
        if target is None:
            return list(probe.attempts)
        selector = ",".join([*(f"{k}={v}" for k, v in sorted(target.labels.items())), f"!{MARKER}"])
        try:
            listed = self.serializer.sanitize_for_serialization(
                self.core.list_namespaced_pod(target.namespace, label_selector=selector)
            )
        except ApiException as error:
            return CheckResult(
                probe.check,
                Verdict.UNKNOWN,
                f"could not list pods {selector}: {_reason(error)}",
                "verify --probe needs list on pods in the stack's namespaces",
            )
        for item in listed.get("items") or []:
            status, spec = item.get("status") or {}, item.get("spec") or {}
            if status.get("phase") != "Running" or not status.get("podIP") or spec.get("hostNetwork"):
                continue
            declared = [p["containerPort"] for c in spec.get("containers", []) for p in c.get("ports") or []]
            port = target.port or (declared[0] if declared else None)
            if port is None:
                continue
            return [{"id": "connect", "op": "connect", "host": status["podIP"], "port": port}]
        what = f"no running pod {selector} in {target.namespace} to connect to"
        return CheckResult(probe.check, Verdict.UNKNOWN, what, "run the probe once the stack is up (`pulumi up`)")

    def all(self, probes: list[Probe], image: str, timeout_s: float) -> list[CheckResult]:
        results: dict[str, CheckResult] = {}
        created: list[tuple[Probe, str, list[dict[str, Any]]]] = []
        try:
            for probe in probes:
                attempts = self.attempts(probe)
                if isinstance(attempts, CheckResult):
                    results[probe.check] = attempts
                    continue
                body = manifest(probe, attempts, image, self.run_id, timeout_s)
                try:
                    # The client's own V1Pod model (kubernetes 37.0.2 V1Pod.from_dict drops a field it does not know
                    # instead of failing: tests/live/probe round-trip the manifest to show nothing is dropped).
                    self.core.create_namespaced_pod(probe.namespace, kubernetes.client.V1Pod.from_dict(body))
                except ApiException as error:
                    fix = "verify --probe needs create, get and delete on pods in the stack's namespaces"
                    results[probe.check] = CheckResult(
                        probe.check, Verdict.UNKNOWN, f"the probe pod was not created: {_reason(error)}", fix
                    )
                    continue
                created.append((probe, body["metadata"]["name"], attempts))
            self.wait(created, results, timeout_s)
        finally:
            leftovers = self.delete(created)
        ordered = [results[p.check] for p in probes if p.check in results]
        if leftovers:
            detail = f"could not delete probe pods {', '.join(leftovers)}"
            ordered.append(CheckResult("probe-cleanup", Verdict.UNKNOWN, detail, _cleanup_fix(self.run_id)))
        return ordered

    def wait(self, created: list, results: dict[str, CheckResult], timeout_s: float) -> None:
        deadline = self.clock() + timeout_s
        waiting = list(created)
        last: dict[str, dict[str, Any]] = {}
        while waiting:
            for entry in list(waiting):
                probe, name, attempts = entry
                try:
                    pod = last[name] = self._pod(name, probe.namespace)
                except ApiException as error:  # e.g. deleted or evicted by someone else meanwhile
                    detail = f"the probe pod {probe.namespace}/{name} could not be read: {_reason(error)}"
                    results[probe.check] = CheckResult(probe.check, Verdict.UNKNOWN, detail, "run verify --probe again")
                    waiting.remove(entry)
                    continue
                if _terminated(pod) is not None:
                    results[probe.check] = judge(probe, attempts, pod)
                    waiting.remove(entry)
            if not waiting or self.clock() >= deadline:
                break
            self.sleep(POLL_SECONDS)
        for probe, name, _ in waiting:
            where = f"{probe.namespace}/{name}"
            detail = f"the probe pod {where} did not finish within {timeout_s:g}s: {not_started(last[name])}"
            fix = f"kubectl -n {probe.namespace} describe pod {name} (while it runs), or a longer --probe timeout"
            results[probe.check] = CheckResult(probe.check, Verdict.UNKNOWN, detail, fix)

    def delete(self, created: list) -> list[str]:
        """Delete every pod created; the names that could not be (a pod already gone counts as deleted)."""
        left = []
        for probe, name, _ in created:
            try:
                self.core.delete_namespaced_pod(name, probe.namespace, grace_period_seconds=0)
            except ApiException as error:
                if error.status != 404:
                    left.append(f"{probe.namespace}/{name}")
        return left


def _terminated(pod: dict[str, Any]) -> dict[str, Any] | None:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated")
        if terminated:
            return terminated
    return None


def not_started(pod: dict[str, Any]) -> str:
    """Why a pod has not run: its container's waiting reason, an unscheduled condition's, or its phase."""
    status = pod.get("status") or {}
    for container in status.get("containerStatuses") or []:
        waiting = (container.get("state") or {}).get("waiting")
        if waiting:
            return f"{waiting.get('reason')}: {waiting.get('message', '')}".rstrip(": ")
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return f"{condition.get('reason')}: {condition.get('message', '')}".rstrip(": ")
    return f"phase {status.get('phase', 'unknown')}" + (f" ({status['reason']})" if status.get("reason") else "")


def report(message: str) -> dict[str, dict[str, str]] | None:
    """The agent's JSON report (the termination message, or its last line when the kubelet fell back to logs)."""
    for line in reversed((message or "").strip().splitlines()):
        try:
            return {r["id"]: r for r in json.loads(line)["results"]}
        except (ValueError, KeyError, TypeError):
            continue
    return None


def judge(probe: Probe, attempts: list[dict[str, Any]], pod: dict[str, Any]) -> CheckResult:
    terminated = _terminated(pod) or {}
    found = report(terminated.get("message", ""))
    if found is None:
        code, reason = terminated.get("exitCode"), terminated.get("reason", "")
        detail = f"the probe exited {code} ({reason}) without a report: {(terminated.get('message') or '')[:200]}"
        return CheckResult(probe.check, Verdict.UNKNOWN, detail, "see the pod's log; the image must have python3")
    missing = [a["id"] for a in attempts if a["id"] not in found]
    if missing:
        detail = f"the probe's report has no answer for {', '.join(missing)}: {sorted(found)}"
        return CheckResult(probe.check, Verdict.UNKNOWN, detail, "the pod ran another probe program than this verify's")
    seen = [found[a["id"]] for a in attempts]
    text = "; ".join(f"{r['id']} {r['outcome']} ({r.get('detail', '')})" for r in seen)
    wrong = [r for r in seen if r["outcome"] not in probe.expect]
    if not wrong:
        return CheckResult(probe.check, Verdict.PASS, f"{probe.what}: {text}")
    expected = " or ".join(sorted(probe.expect))
    detail = f"{probe.what}: expected {expected}, got {text}"
    if all(r["outcome"] == "no-such-name" for r in wrong):  # the resolver answered: DNS is open, a name is missing
        names = ", ".join(a.get("name", a["id"]) for a in attempts if found[a["id"]] in wrong)
        fix = f"DNS answers but knows no {names}: is the stack up (`pulumi up`), its Services created?"
        return CheckResult(probe.check, Verdict.FAIL, detail, fix)
    return CheckResult(probe.check, Verdict.FAIL, detail, probe.fix)


__all__ = ["probe_checks"]
