"""The smoke test a serving stack's first `pulumi up` ends with: one real request, then the metrics.

Runs in the cluster as the smoke-test Job (`python3 smoke_check.py`), standard library only, so any
pinned Python image will do:

1. send one request of the engine's own API through the Service (vLLM: OpenAI `/v1/completions`;
   JetStream: the HTTP gateway's `/generate`; Saxml: sax-http's `/generate`) and check the answer
   has the engine's shape; connection errors, timeouts and 5xx answers are retried until the
   deadline (a Service may briefly have no ready endpoint), any other answer is final;
   behind GKE Inference Gateway the request goes through the Gateway's address instead (read from the
   Gateway's `status.addresses` through the Kubernetes API, retried until GKE assigns it), and the
   endpoint picker's count of successful picks must have risen across it: with `failureMode: FailOpen`
   a load balancer that cannot reach the picker still answers, routed around it;
2. fetch the metrics endpoint (when the engine exports one) and check every metric name the HPA
   and the dashboard read is exposed.

On failure it prints ONE line naming what failed (the URL and status code, the body's start, or the
missing metric names), writes the same line to the termination log (the Job's container uses
`terminationMessagePolicy: FallbackToLogsOnError`, so the line becomes the container's termination
message, which `pulumi up` and `kubectl describe` show), and exits with one of:

- 0: passed;
- 1 (EXIT_FAILED): the server failed the test: a wrong answer, a 4xx, an answer that is not the engine's,
  a missing metric, or no good answer within the window (connection errors, timeouts and 5xx answers
  are retried until then), or no verdict within SMOKE_LIMIT_SECONDS;
- 2 (EXIT_CANNOT_RUN): the test could not run: its environment is not what the plan writes, or the
  script met an error of its own (Python itself also exits 2 when it cannot open the script).

Neither failure is retried by another pod: the Job has `backoffLimit: 0` (smoke_plan.BACKOFF_LIMIT);
only a disrupted pod is replaced.

Environment: SMOKE_ANSWER (the answer's shape, a key of CHECKS: what a workload declares, not its name),
SMOKE_URL, SMOKE_BODY (JSON), SMOKE_API_KEY
(optional, sent as `Authorization: Bearer`), SMOKE_METRICS_URL (optional), SMOKE_METRICS (JSON list
of names), SMOKE_GATEWAY (optional `namespace/name`: SMOKE_URL's `{gateway}` becomes its address),
SMOKE_PICKER_METRICS_URL and SMOKE_PICKER_COUNTER (optional, JSON `{"name": ..., "labels": {...}}`: the
picker's counter that must rise across the request), SMOKE_KUBERNETES_API and SMOKE_SERVICE_ACCOUNT_DIR
(where the API and the pod's token are; in a pod, its own), SMOKE_DEADLINE_SECONDS (the window in which
failed requests are retried),
SMOKE_TIMEOUT_SECONDS (one request; urllib's timeout bounds each socket operation, not a whole answer),
SMOKE_LIMIT_SECONDS (optional: the whole run, enforced by a watchdog so that a slow name lookup or an
answer trickling in cannot outlast the Job's `activeDeadlineSeconds`), SMOKE_PAUSE_SECONDS, TERMINATION_LOG.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

TERMINATION_LOG = "/dev/termination-log"
EXCERPT = 160
"""Characters of an unexpected answer quoted in the failure line."""
SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created")
"""Sample-name suffixes of a metric family in the Prometheus text format (histograms, counters)."""
EXIT_FAILED = 1
EXIT_CANNOT_RUN = 2
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the kubelet mounts a pod's API token and the cluster's CA (files `token`, `ca.crt`)."""
GATEWAY_API_PATH = "/apis/gateway.networking.k8s.io/v1/namespaces/{namespace}/gateways/{name}"


class Failed(Exception):
    """What failed, in one line; `retry` when the next attempt may succeed."""

    def __init__(self, line: str, retry: bool = False) -> None:
        super().__init__(line)
        self.retry = retry


class CannotRun(Exception):
    """The test could not run: its environment is wrong (not the server's fault)."""


class Progress:
    """What the check is doing and the last failure it retried: the watchdog's line when time runs out."""

    def __init__(self) -> None:
        self.doing = "starting"
        self.last: str | None = None

    def overdue(self, limit: float) -> str:
        last = f"; last failure: {self.last}" if self.last else ""
        return f"no verdict within the limit of {limit:g} s (SMOKE_LIMIT_SECONDS), still at: {self.doing}{last}"


PROGRESS = Progress()


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 3] + "..."


def fetch(
    url: str, body: bytes | None, headers: Mapping[str, str], timeout: float, context: ssl.SSLContext | None = None
) -> str:
    """The answer's text; Failed for a non-2xx status (retried on 5xx), a timeout or no connection."""
    method = "POST" if body is not None else "GET"
    request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
    PROGRESS.doing = f"{method} {url}"
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", "replace")
        raise Failed(f"{method} {url} answered {error.code}: {_excerpt(text)}", retry=error.code >= 500) from None
    except TimeoutError:
        raise Failed(f"{method} {url} gave no answer within {timeout:g} s (timed out)", retry=True) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise Failed(f"{method} {url} gave no answer within {timeout:g} s (timed out)", retry=True) from None
        raise Failed(f"{method} {url} could not connect: {reason}", retry=True) from None
    except http.client.HTTPException as error:  # e.g. IncompleteRead: the connection broke mid-answer
        raise Failed(f"{method} {url} broke off its answer: {type(error).__name__}", retry=True) from None


def _json(url: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise Failed(f"POST {url} answered 200 but not JSON: {_excerpt(text)}") from None


def _check_vllm(answer: Any) -> str | None:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return "no `choices` (an OpenAI completion has a non-empty list)"
    if not isinstance(choices[0].get("text"), str):
        return "`choices[0].text` is not a string"
    return None


def _check_jetstream(answer: Any) -> str | None:
    if not isinstance(answer, dict) or not isinstance(answer.get("response"), str):
        return 'no `response` string (the gateway answers {"response": ...})'
    return None


def _check_saxml(answer: Any) -> str | None:
    # sax-http answers [[text, score], ...] (FastAPI builds) or {"generate_response": [...]} (BaseHTTP builds).
    pairs = answer.get("generate_response") if isinstance(answer, dict) else answer
    if not isinstance(pairs, list) or not pairs:
        return "no generated text (sax-http answers a non-empty list of [text, score])"
    return None


CHECKS: dict[str, Callable[[Any], str | None]] = {
    "openai-completion": _check_vllm,
    "jetstream-generate": _check_jetstream,
    "sax-generate": _check_saxml,
}
"""The answer shapes this script can judge, by the name a workload declares (its descriptor's `smoke_answer`): an
engine that speaks one of them (any OpenAI-compatible server) needs no change here."""


def exposed(text: str) -> set[str]:
    """Metric names a Prometheus text exposition offers: every sample's name, every declared family
    (`# TYPE name kind`), and each family's sample names (a declared family of no sample yet counts)."""
    names: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 3:
                names.add(parts[2])
        elif line and not line.startswith("#"):
            match = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line)
            if match:
                names.add(match.group(0))
    return names


def missing(wanted: list[str], text: str) -> list[str]:
    """The wanted names the exposition does not offer (a sample name counts when its family is declared)."""
    names = exposed(text)

    def offered(name: str) -> bool:
        if name in names:
            return True
        return any(name.endswith(s) and name[: -len(s)] in names for s in SUFFIXES)

    return [name for name in wanted if not offered(name)]


def counted(text: str, name: str, labels: Mapping[str, str]) -> float:
    """The sum of a counter's samples whose labels include `labels` (0 when it has none yet)."""
    total = 0.0
    for line in text.splitlines():
        match = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        if all(found.get(key) == value for key, value in labels.items()):
            try:
                total += float(match.group(4))
            except ValueError:
                continue
    return total


def gateway_address(env: Mapping[str, str], gateway: str, timeout: float) -> str:
    """The address GKE gave the Gateway `namespace/name` (its `status.addresses[0].value`), read with the pod's
    own token; Failed (retried) until there is one, as GKE's Inference Gateway guide reads it."""
    namespace, _, name = gateway.partition("/")
    folder = env.get("SMOKE_SERVICE_ACCOUNT_DIR", SERVICE_ACCOUNT_DIR)
    api = env.get("SMOKE_KUBERNETES_API") or (
        f"https://{env.get('KUBERNETES_SERVICE_HOST', 'kubernetes.default.svc')}:"
        f"{env.get('KUBERNETES_SERVICE_PORT', '443')}"
    )
    try:
        with open(os.path.join(folder, "token"), encoding="utf-8") as file:
            token = file.read().strip()
    except OSError as error:
        raise CannotRun(f"no API token to read Gateway {gateway} ({error})") from None
    authority = os.path.join(folder, "ca.crt")
    context = ssl.create_default_context(cafile=authority) if api.startswith("https") else None
    url = api + GATEWAY_API_PATH.format(namespace=namespace, name=name)
    text = fetch(url, None, {"Authorization": f"Bearer {token}"}, timeout, context)
    try:
        addresses = (json.loads(text).get("status") or {}).get("addresses") or []
    except (ValueError, AttributeError):
        raise Failed(f"GET {url} answered 200 but not a Gateway: {_excerpt(text)}") from None
    value = addresses[0].get("value") if addresses and isinstance(addresses[0], dict) else None
    if not value:
        raise Failed(f"Gateway {gateway} has no address yet (status.addresses is empty)", retry=True)
    return f"[{value}]" if ":" in value else value


def attempt(step: Callable[[], Any], deadline: float, pause: float, clock: Callable[[], float]) -> Any:
    """`step()`, retried while it fails with `retry` and the deadline allows another try."""
    tries = 0
    while True:
        tries += 1
        try:
            return step()
        except Failed as failure:
            if not failure.retry or clock() + pause >= deadline:
                suffix = f" ({tries} attempts)" if tries > 1 else ""
                raise Failed(f"{failure}{suffix}") from None
            PROGRESS.last = f"{failure} ({tries} attempts so far)"
            time.sleep(pause)


def run(env: Mapping[str, str], clock: Callable[[], float] = time.monotonic) -> str:
    """The success line; Failed with the one-line reason otherwise."""
    answer = env.get("SMOKE_ANSWER", "")
    if answer not in CHECKS:
        raise CannotRun(f"SMOKE_ANSWER {answer!r} is not one of {', '.join(CHECKS)}")
    url = env.get("SMOKE_URL") or ""
    if not url.startswith(("http://", "https://")):
        raise CannotRun(f"SMOKE_URL {url!r} is not an http(s) URL")
    timeout = _seconds(env, "SMOKE_TIMEOUT_SECONDS", "60")
    pause = _seconds(env, "SMOKE_PAUSE_SECONDS", "10")
    deadline = clock() + _seconds(env, "SMOKE_DEADLINE_SECONDS", "600")
    try:
        wanted = json.loads(env.get("SMOKE_METRICS", "[]"))
    except ValueError:
        raise CannotRun(f"SMOKE_METRICS {env['SMOKE_METRICS']!r} is not a JSON list of names") from None
    headers = {"Content-Type": "application/json"}
    if env.get("SMOKE_API_KEY"):
        headers["Authorization"] = f"Bearer {env['SMOKE_API_KEY']}"  # ledger: vllm.api-key.bearer
    body = env.get("SMOKE_BODY", "{}").encode()
    gateway = env.get("SMOKE_GATEWAY")
    if gateway:
        if "{gateway}" not in url or "/" not in gateway:
            raise CannotRun(f"SMOKE_GATEWAY {gateway!r} needs a namespace/name and SMOKE_URL a {{gateway}} ({url!r})")
        address = attempt(lambda: gateway_address(env, gateway, timeout), deadline, pause, clock)
        url = url.replace("{gateway}", address)
    picker_url, counter = env.get("SMOKE_PICKER_METRICS_URL"), env.get("SMOKE_PICKER_COUNTER")
    picker: tuple[str, str, dict[str, str]] | None = None
    if picker_url and counter:
        try:
            spec = json.loads(counter)
            picker = (picker_url, str(spec["name"]), {str(k): str(v) for k, v in spec.get("labels", {}).items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            raise CannotRun(f"SMOKE_PICKER_COUNTER {counter!r} is not a JSON {{name, labels}}") from None

    def picks() -> float:
        assert picker is not None
        return counted(fetch(picker[0], None, {}, timeout), picker[1], picker[2])

    before = attempt(picks, deadline, pause, clock) if picker else 0.0
    text = attempt(lambda: fetch(url, body, headers, timeout), deadline, pause, clock)
    problem = CHECKS[answer](_json(url, text))
    if problem:
        raise Failed(f"POST {url} answered 200 without an {answer} answer: {problem}: {_excerpt(text)}")
    picked = ""
    if picker:
        after = attempt(picks, deadline, pause, clock)
        shown = picker[1] + "{" + ",".join(f'{k}="{v}"' for k, v in picker[2].items()) + "}"
        if not after > before:
            raise Failed(
                f"POST {url} answered, but the endpoint picker did not pick for it: {shown} at {picker[0]} stayed "
                f"at {before:g} (the load balancer routed around the picker: check its health check and ext-proc)"
            )
        picked = f", picked by the endpoint picker ({shown} {before:g} -> {after:g})"

    metrics_url = env.get("SMOKE_METRICS_URL")
    if not metrics_url or not wanted:
        return f"smoke test passed: {url} answered{picked}"
    exposition = attempt(lambda: fetch(metrics_url, None, {}, timeout), deadline, pause, clock)
    absent = missing(wanted, exposition)
    if absent:
        raise Failed(f"GET {metrics_url} lacks {len(absent)} metric(s) the HPA or dashboard read: {', '.join(absent)}")
    return f"smoke test passed: {url} answered{picked} and {metrics_url} exposes {len(wanted)} metric(s)"


def _seconds(env: Mapping[str, str], name: str, default: str) -> float:
    text = env.get(name, default)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise CannotRun(f"{name} {text!r} is not a positive number of seconds")
    return value


def verdict(env: Mapping[str, str]) -> tuple[int, str]:
    """The exit code and the one line: `run`'s, or what kept it from running."""
    try:
        return 0, run(env)
    except Failed as failure:
        return EXIT_FAILED, f"smoke test failed: {failure}"
    except CannotRun as problem:
        return EXIT_CANNOT_RUN, f"smoke test could not run: {problem}"
    except Exception as error:  # a bug of the script's own: one line all the same, not the server's fault
        return EXIT_CANNOT_RUN, f"smoke test could not run: {type(error).__name__}: {_excerpt(str(error))}"


def within_limit(env: Mapping[str, str]) -> tuple[int, str]:
    """`verdict`, run in a watchdog thread when SMOKE_LIMIT_SECONDS is set: past the limit the server has
    failed the test (it gave no verdict in time), whatever the check is blocked in."""
    if "SMOKE_LIMIT_SECONDS" not in env:
        return verdict(env)
    try:
        limit = _seconds(env, "SMOKE_LIMIT_SECONDS", "")
    except CannotRun as problem:
        return EXIT_CANNOT_RUN, f"smoke test could not run: {problem}"
    outcome: list[tuple[int, str]] = []
    worker = threading.Thread(target=lambda: outcome.append(verdict(env)), daemon=True)
    worker.start()
    worker.join(limit)
    if outcome:
        return outcome[0]
    return EXIT_FAILED, f"smoke test failed: {PROGRESS.overdue(limit)}"


def main(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    code, line = within_limit(env)
    if code == 0:
        print(line, flush=True)
        return 0
    print(line, file=sys.stderr, flush=True)
    try:
        with open(env.get("TERMINATION_LOG", TERMINATION_LOG), "w", encoding="utf-8") as log:
            log.write(line)
    except OSError:
        # Not in a pod, or a kubelet that made the file writable by root only (it is created 0666 since
        # github.com/kubernetes/kubernetes/issues/31839): the line is still the log's last, which
        # `terminationMessagePolicy: FallbackToLogsOnError` makes the termination message.
        pass
    return code


if __name__ == "__main__":
    sys.exit(main())
