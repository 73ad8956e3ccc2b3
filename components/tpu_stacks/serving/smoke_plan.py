"""What a serving stack's smoke test checks, decided before any resource. Pure: no provider SDK.

The first `pulumi up` of a serving stack ends with a Job (k8s/smoke.py) that sends one real request
through the Service and reads the metrics endpoint (k8s/smoke_check.py). This module decides what that
Job does and what it is called:

- the metric names it looks for are the ones the stack's HPA and its dashboard and alerts read, taken
  from the monitoring plan (which takes them from the engine catalogue): never typed here;
- its name carries a hash of everything it tests (the script, the image, the request, the metric
  names, the server's settings), with no TTL: a change of any of them gives a new Job, which runs
  again; an `up` that changes none of them finds the same Job and leaves it alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from tpu_stacks.gcp.monitoring.plan import MonitoringPlan  # pure: the workloads hand monitoring their targets

SMOKE_TEST_LABELS = {"app.kubernetes.io/component": "smoke-test"}
"""The label of a smoke-test pod; servers accept their API port from such pods of their own namespace."""
POD_LABELS = {**SMOKE_TEST_LABELS, "app.kubernetes.io/name": "tpu-stacks-smoke-test"}
"""The smoke-test pod's labels: network policies admit pods with `SMOKE_TEST_LABELS` (the connectivity
contract's) to a server's API and metrics ports (`SmokeTest.ports`)."""
NAME_PREFIX = "smoke-test"
HASH_LENGTH = 10
SCRIPT = "smoke_check.py"
"""The script's file in the package (tpu_stacks/k8s) and its key in the Job's ConfigMap."""

REQUEST_WINDOW_MINUTES = 10
"""How long the script retries a request that fails transiently (no connection, a timeout, a 5xx) when
`pulumi up` has already waited for the server to be ready: a Service's endpoints, a first request."""
REQUEST_TIMEOUT_SECONDS = 120
"""One request's time limit: a short completion on a ready server, with room for a first-request compile."""
POD_START_MINUTES = 5
"""The smoke pod's own start: a CPU node, then the small Python image."""
REPORT_SECONDS = 60
"""After the script's limit: its line written, the kubelet reporting the container's end, the Job controller
marking the pod failed, all before `activeDeadlineSeconds`, so that `up` shows the script's line, not
DeadlineExceeded."""

BACKOFF_LIMIT = 0
"""No second pod for a failed test: the script retries transient failures itself, and its exit code says
the server failed (1) or the test could not run (2), neither of which another pod changes (smoke_check.py).
Not a podFailurePolicy `FailJob` rule: the Job then fails with reason `PodFailurePolicy`, which
pulumi-kubernetes' Job awaiter does not treat as a failure (provider/pkg/await/checker/job/check.go
`collectJobConditionErrors` fails the await at once only on BackoffLimitExceeded and DeadlineExceeded),
so `up` would wait out its whole budget; with no retries the Job fails at once with BackoffLimitExceeded."""
IGNORED_POD_CONDITIONS = ("DisruptionTarget",)
"""A pod that fails with one of these conditions was taken away (preemption, eviction, a lost node), not
failed by the test: the Job's `podFailurePolicy` Ignores it, so it is replaced and not counted
(https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-failure-policy; requires
`restartPolicy: Never`). In the name's hash: a Job's `podFailurePolicy` is immutable (kubernetes
pkg/apis/batch/validation `ValidateJobSpecUpdate`) and pulumi-kubernetes replaces a Job only when its
completions, parallelism, selector or template change (provider/pkg/provider/diff.go `job`), so a changed
policy under the same name would be sent as an update the API server refuses."""

_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{")
"""A metric selector `name{labels}`, as the dashboards and alerts write every one (gcp/monitoring/queries.py)."""
_FAMILY_SUFFIXES = ("_bucket", "_sum", "_count")


def script_source() -> str:
    """The smoke-test script shipped in the package, as the Job's ConfigMap carries it."""
    return resources.files("tpu_stacks.k8s").joinpath(SCRIPT).read_text(encoding="utf-8")


def _promql(node: Any) -> list[str]:
    """Every `prometheusQuery` of a dashboard document."""
    if isinstance(node, dict):
        return [q for key, value in node.items() for q in ([value] if key == "prometheusQuery" else _promql(value))]
    if isinstance(node, list):
        return [q for value in node for q in _promql(value)]
    return []


def read_metrics(monitoring: MonitoringPlan) -> tuple[str, ...]:
    """The engine's metric names (as samples, e.g. `..._bucket`) that the HPA, the dashboard and the enabled
    alerts read; empty when the engine exports no metrics. Dashboards and alerts count only when monitoring
    is on (otherwise nothing reads them); the HPA reads its metric in any case."""
    target = monitoring.target
    if not target.exports_metrics:
        return ()
    names = {target.hpa.metric} if target.hpa is not None else set()
    if monitoring.enabled:
        queries = [*_promql(monitoring.dashboard.document()), *(a.query for a in monitoring.alerts if a.enabled)]
        for query in queries:
            for name in _SELECTOR.findall(query):
                family = next((name[: -len(s)] for s in _FAMILY_SUFFIXES if name.endswith(s)), name)
                if target.engine.metric(name) or target.engine.metric(family):
                    names.add(name)
    return tuple(sorted(names))


def server_fingerprint(spec: Any) -> str:
    """The server's settings: the workload section as validated, without what does not change the server
    (its monitoring block and the smoke-test switch itself) and without unset optional settings, so a release
    that adds an optional key (`slo`, `gateway`...) does not rename every stack's smoke test."""
    document = spec.model_dump(mode="json", by_alias=True, exclude={"monitoring", "smoke_test"}, exclude_none=True)
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class SmokeTest:
    """One stack's smoke test: the request, the metrics, where the answers come from."""

    answer: str
    """The answer's shape the script checks (k8s/smoke_check.CHECKS): the workload's descriptor declares it
    (`Workload.smoke_answer`), so shared code never names a workload."""
    namespace: str
    url: str
    body: str
    """The request's JSON body."""
    image: str
    server: str
    """`server_fingerprint` of the workload's spec."""
    ports: tuple[int, ...]
    """The server ports the pod calls (network policies must admit it there)."""
    metrics_url: str | None = None
    metrics: tuple[str, ...] = ()
    api_key: tuple[str, str] | None = None
    """The Secret name and key of the API key, sent as `Authorization: Bearer` (read through env, never in the spec)."""
    window_minutes: int = REQUEST_WINDOW_MINUTES
    gateway: tuple[str, str] | None = None
    """(namespace, name) of a Gateway the request goes through: `url` holds `{gateway}`, which the script replaces
    with the Gateway's address read from its status (the Job then gets a ServiceAccount that may read that Gateway)."""
    picker_metrics_url: str | None = None
    picker_counter: str | None = None
    """JSON `{"name": ..., "labels": {...}}`: the endpoint picker's counter that must rise across the request."""

    @property
    def digest(self) -> str:
        payload = json.dumps(
            {**asdict(self), "script": script_source(), "ignored_pod_conditions": IGNORED_POD_CONDITIONS},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:HASH_LENGTH]

    @property
    def name(self) -> str:
        """`smoke-test-<hash>`: a new Job exactly when what it tests changes."""
        return f"{NAME_PREFIX}-{self.digest}"

    @property
    def limit_seconds(self) -> int:
        """The script's whole run, which it enforces itself: the request window, the last request begun in
        it, then the metrics read, and the picker's count after the request when there is one (each at most
        one request timeout)."""
        reads = 3 if self.picker_counter else 2
        return self.window_minutes * 60 + reads * REQUEST_TIMEOUT_SECONDS

    @property
    def active_deadline_seconds(self) -> int:
        """The Job's own bound: its pod's start, the script's limit, then the time to report its line."""
        return POD_START_MINUTES * 60 + self.limit_seconds + REPORT_SECONDS

    def environment(self) -> dict[str, str]:
        """The script's variables (k8s/smoke_check.py); the API key is added from its Secret."""
        env = {
            "SMOKE_ANSWER": self.answer,
            "SMOKE_URL": self.url,
            "SMOKE_BODY": self.body,
            "SMOKE_DEADLINE_SECONDS": str(self.window_minutes * 60),
            "SMOKE_TIMEOUT_SECONDS": str(REQUEST_TIMEOUT_SECONDS),
            "SMOKE_LIMIT_SECONDS": str(self.limit_seconds),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
        }
        if self.metrics_url and self.metrics:
            env["SMOKE_METRICS_URL"] = self.metrics_url
            env["SMOKE_METRICS"] = json.dumps(list(self.metrics))
        if self.gateway is not None:
            env["SMOKE_GATEWAY"] = "/".join(self.gateway)
        if self.picker_metrics_url and self.picker_counter:
            env["SMOKE_PICKER_METRICS_URL"] = self.picker_metrics_url
            env["SMOKE_PICKER_COUNTER"] = self.picker_counter
        return env
