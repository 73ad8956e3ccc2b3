"""The smoke-test script against a stand-in server on 127.0.0.1: good answers pass, every bad one fails
with one line naming what failed, written to the termination log, in bounded time.

The script runs as the Job runs it (`python3 smoke_check.py`, its environment, its exit code); the stand-in
answers as the engines do (vLLM's OpenAI completion, JetStream's `{"response": ...}`, sax-http's pairs) or
as they fail (a 500, a 401, a page that is not JSON, no answer in time, a metric missing).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tpu_stacks.k8s import smoke_check
from tpu_stacks.smoke_plan import SCRIPT, script_source

VLLM_ANSWER = {"id": "cmpl-1", "object": "text_completion", "choices": [{"index": 0, "text": " city in"}]}
VLLM_METRICS = """\
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 0.0
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 5.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="m"} 0.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 0.2
"""
WANTED = ["vllm:num_requests_waiting", "vllm:prompt_tokens_total", "vllm:time_to_first_token_seconds_bucket"]


@dataclass
class Route:
    status: int = 200
    body: str = ""
    delay: float = 0.0


@dataclass
class StandIn:
    """What each path answers, and what it was asked."""

    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[tuple[str, str, dict[str, str], str]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    state = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            state.seen.append((self.command, self.path, dict(self.headers), body))
            route = state.routes.get(self.path, Route(404, "not found"))
            time.sleep(route.delay)
            payload = route.body.encode()
            try:
                self.send_response(route.status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (the timeout case)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    log: str
    seconds: float


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., Run]:
    script = tmp_path / SCRIPT
    script.write_text(script_source(), encoding="utf-8")  # the very text the ConfigMap carries
    log = tmp_path / "termination-log"

    def go(**env: str) -> Run:
        environment = {
            "SMOKE_DEADLINE_SECONDS": "1.5",
            "SMOKE_TIMEOUT_SECONDS": "2",
            "SMOKE_PAUSE_SECONDS": "0.2",
            "TERMINATION_LOG": str(log),
            "PATH": "/usr/bin:/bin",
            **env,
        }
        start = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=30
        )
        return Run(
            done.returncode,
            done.stdout,
            done.stderr,
            log.read_text(encoding="utf-8") if log.exists() else "",
            time.monotonic() - start,
        )

    return go


def vllm_env(stand_in: StandIn, **extra: str) -> dict[str, str]:
    return {
        "SMOKE_ENGINE": "vllm",
        "SMOKE_URL": stand_in.url("/v1/completions"),
        "SMOKE_BODY": json.dumps({"model": "m", "prompt": "San Francisco is a", "max_tokens": 7}),
        "SMOKE_METRICS_URL": stand_in.url("/metrics"),
        "SMOKE_METRICS": json.dumps(WANTED),
        **extra,
    }


def failed_once(result: Run) -> str:
    """The failure line: exit 1, one line on stderr, the same line in the termination log."""
    assert result.code == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.log == lines[0]
    assert lines[0].startswith("smoke test failed: ")
    return lines[0]


def test_a_good_answer_and_every_metric_pass(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(body=VLLM_METRICS)}
    result = run(**vllm_env(stand_in, SMOKE_API_KEY="sk-test"))
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == (
        f"smoke test passed: {stand_in.url('/v1/completions')} answered and {stand_in.url('/metrics')} exposes 3 metric(s)"
    )
    assert result.log == ""
    (post, get) = stand_in.seen
    assert post[:2] == ("POST", "/v1/completions") and get[:2] == ("GET", "/metrics")
    assert json.loads(post[3]) == {"model": "m", "prompt": "San Francisco is a", "max_tokens": 7}
    assert post[2]["Authorization"] == "Bearer sk-test" and post[2]["Content-Type"] == "application/json"
    assert "Authorization" not in get[2]  # the key goes to the API only


def test_no_key_no_authorization_header(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(body=VLLM_METRICS)}
    assert run(**vllm_env(stand_in)).code == 0
    assert "Authorization" not in stand_in.seen[0][2]


def test_a_500_is_retried_until_the_deadline_then_named(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(500, "Internal Server Error: engine dead")}
    result = run(**vllm_env(stand_in))
    line = failed_once(result)
    assert line.startswith(f"smoke test failed: POST {stand_in.url('/v1/completions')} answered 500: ")
    assert "Internal Server Error: engine dead" in line and line.endswith(" attempts)")
    assert len(stand_in.seen) >= 3 and result.seconds < 10


def test_a_401_is_final_at_once(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(401, '{"error": "Unauthorized"}')}
    line = failed_once(run(**vllm_env(stand_in)))
    assert (
        line == f'smoke test failed: POST {stand_in.url("/v1/completions")} answered 401: {{"error": "Unauthorized"}}'
    )
    assert len(stand_in.seen) == 1


def test_an_answer_that_is_not_json(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body="<html>\n<body>gateway</body>\n</html>")}
    line = failed_once(run(**vllm_env(stand_in)))
    assert line == (
        f"smoke test failed: POST {stand_in.url('/v1/completions')} answered 200 but not JSON: "
        "<html> <body>gateway</body> </html>"
    )


def test_json_without_the_engines_answer(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body='{"object": "error", "choices": []}')}
    line = failed_once(run(**vllm_env(stand_in)))
    assert "answered 200 without a vllm answer: no `choices`" in line


def test_no_answer_in_time_is_a_timeout(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER), delay=1.5)}
    result = run(**vllm_env(stand_in, SMOKE_TIMEOUT_SECONDS="0.3", SMOKE_DEADLINE_SECONDS="0.8"))
    line = failed_once(result)
    assert line.startswith(f"smoke test failed: POST {stand_in.url('/v1/completions')} gave no answer within 0.3 s")
    assert "(timed out)" in line and result.seconds < 10


def test_nothing_listening_is_named(stand_in, run):
    with socket.socket() as probe:  # a port that was free a moment ago, closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        stand_in.port = probe.getsockname()[1]
    line = failed_once(run(**vllm_env(stand_in, SMOKE_DEADLINE_SECONDS="0.3")))
    assert f"POST {stand_in.url('/v1/completions')} could not connect: " in line


def test_a_missing_metric_is_named(stand_in, run):
    exposition = VLLM_METRICS.replace("vllm:num_requests_waiting", "vllm:num_requests_running")
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(body=exposition)}
    line = failed_once(run(**vllm_env(stand_in)))
    assert line == (
        f"smoke test failed: GET {stand_in.url('/metrics')} lacks 1 metric(s) the HPA or dashboard read: "
        "vllm:num_requests_waiting"
    )


def test_a_metrics_endpoint_that_fails_is_named(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(503, "")}
    line = failed_once(run(**vllm_env(stand_in, SMOKE_DEADLINE_SECONDS="0.3")))
    assert line.startswith(f"smoke test failed: GET {stand_in.url('/metrics')} answered 503")


def test_jetstream_answer_shape(stand_in, run):
    env = {
        "SMOKE_ENGINE": "jetstream",
        "SMOKE_URL": stand_in.url("/generate"),
        "SMOKE_BODY": '{"prompt": "p", "max_tokens": 16}',
    }
    stand_in.routes = {"/generate": Route(body='{"response": " for data science"}')}
    assert run(**env).code == 0
    stand_in.routes = {"/generate": Route(body='{"text": "x"}')}
    assert "no `response` string" in failed_once(run(**env))


def test_saxml_answers_in_both_of_sax_https_shapes(stand_in, run):
    env = {"SMOKE_ENGINE": "saxml", "SMOKE_URL": stand_in.url("/generate"), "SMOKE_BODY": '{"model": "/sax/test/spmd"}'}
    for body in ('[["seven", -1.5]]', '{"generate_response": [["seven", -1.5]]}'):
        stand_in.routes = {"/generate": Route(body=body)}
        result = run(**env)
        assert result.code == 0, result.stderr
        assert result.stdout.strip() == f"smoke test passed: {stand_in.url('/generate')} answered"
    stand_in.routes = {"/generate": Route(body="[]")}
    assert "no generated text" in failed_once(run(**env))


def test_a_declared_family_counts_and_an_undeclared_sample_does_not():
    text = '# TYPE jetstream_prefill_backlog_size gauge\njetstream_slots_used_percentage{id="a",idx="0"} 0.5\n'
    wanted = ["jetstream_prefill_backlog_size", "jetstream_slots_used_percentage", "jetstream_other"]
    assert smoke_check.missing(wanted, text) == ["jetstream_other"]
    # a histogram's bucket is offered by its declared family, a counter's _total by its family
    assert smoke_check.missing(["a_bucket", "b_total", "c_bucket"], "# TYPE a histogram\n# TYPE b counter\n") == [
        "c_bucket"
    ]
