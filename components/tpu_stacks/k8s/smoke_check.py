"""The smoke test a serving stack's first `pulumi up` ends with: one real request, then the metrics.

Runs in the cluster as the smoke-test Job (`python3 smoke_check.py`), standard library only, so any
pinned Python image will do:

1. send one request of the engine's own API through the Service (vLLM: OpenAI `/v1/completions`;
   JetStream: the HTTP gateway's `/generate`; Saxml: sax-http's `/generate`) and check the answer
   has the engine's shape; connection errors, timeouts and 5xx answers are retried until the
   deadline (a Service may briefly have no ready endpoint), any other answer is final;
2. fetch the metrics endpoint (when the engine exports one) and check every metric name the HPA
   and the dashboard read is exposed.

On failure it prints ONE line naming what failed (the URL and status code, the body's start, or the
missing metric names), writes the same line to the termination log (the Job's container uses
`terminationMessagePolicy: FallbackToLogsOnError`, so the line becomes the container's termination
message, which `pulumi up` and `kubectl describe` show), and exits 1.

Environment: SMOKE_ENGINE (vllm, jetstream or saxml), SMOKE_URL, SMOKE_BODY (JSON), SMOKE_API_KEY
(optional, sent as `Authorization: Bearer`), SMOKE_METRICS_URL (optional), SMOKE_METRICS (JSON list
of names), SMOKE_DEADLINE_SECONDS, SMOKE_TIMEOUT_SECONDS, SMOKE_PAUSE_SECONDS, TERMINATION_LOG.
"""

from __future__ import annotations

import json
import os
import re
import sys
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


class Failed(Exception):
    """What failed, in one line; `retry` when the next attempt may succeed."""

    def __init__(self, line: str, retry: bool = False) -> None:
        super().__init__(line)
        self.retry = retry


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 3] + "..."


def fetch(url: str, body: bytes | None, headers: Mapping[str, str], timeout: float) -> str:
    """The answer's text; Failed for a non-2xx status (retried on 5xx), a timeout or no connection."""
    method = "POST" if body is not None else "GET"
    request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
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
    "vllm": _check_vllm,
    "jetstream": _check_jetstream,
    "saxml": _check_saxml,
}


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
            time.sleep(pause)


def run(env: Mapping[str, str], clock: Callable[[], float] = time.monotonic) -> str:
    """The success line; Failed with the one-line reason otherwise."""
    engine = env["SMOKE_ENGINE"]
    if engine not in CHECKS:
        raise Failed(f"SMOKE_ENGINE {engine!r} is not one of {', '.join(CHECKS)}")
    url = env["SMOKE_URL"]
    timeout = float(env.get("SMOKE_TIMEOUT_SECONDS", "60"))
    pause = float(env.get("SMOKE_PAUSE_SECONDS", "10"))
    deadline = clock() + float(env.get("SMOKE_DEADLINE_SECONDS", "600"))
    headers = {"Content-Type": "application/json"}
    if env.get("SMOKE_API_KEY"):
        headers["Authorization"] = f"Bearer {env['SMOKE_API_KEY']}"
    body = env.get("SMOKE_BODY", "{}").encode()

    text = attempt(lambda: fetch(url, body, headers, timeout), deadline, pause, clock)
    problem = CHECKS[engine](_json(url, text))
    if problem:
        raise Failed(f"POST {url} answered 200 without a {engine} answer: {problem}: {_excerpt(text)}")

    metrics_url = env.get("SMOKE_METRICS_URL")
    wanted = json.loads(env.get("SMOKE_METRICS", "[]"))
    if not metrics_url or not wanted:
        return f"smoke test passed: {url} answered"
    exposition = attempt(lambda: fetch(metrics_url, None, {}, timeout), deadline, pause, clock)
    absent = missing(wanted, exposition)
    if absent:
        raise Failed(f"GET {metrics_url} lacks {len(absent)} metric(s) the HPA or dashboard read: {', '.join(absent)}")
    return f"smoke test passed: {url} answered and {metrics_url} exposes {len(wanted)} metric(s)"


def main(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    try:
        line = run(env)
    except Failed as failure:
        line = f"smoke test failed: {failure}"
        print(line, file=sys.stderr, flush=True)
        try:
            with open(env.get("TERMINATION_LOG", TERMINATION_LOG), "w", encoding="utf-8") as log:
                log.write(line)
        except OSError:
            # Not in a pod, or a kubelet that made the file writable by root only (it is created 0666 since
            # github.com/kubernetes/kubernetes/issues/31839): the line is still the log's last, which
            # `terminationMessagePolicy: FallbackToLogsOnError` makes the termination message.
            pass
        return 1
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
