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
from tpu_stacks.serving.smoke_plan import SCRIPT, script_source

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
    fail_for: float = 0.0
    """Answer 503 at once to requests that arrive within this many seconds of the route's first request."""
    trickle: float = 0.0
    """Send the body one byte per this many seconds (each read within the timeout, the whole answer not)."""
    broken: bool = False
    """Promise more bytes than are sent, then close: the client reads an incomplete answer."""
    bodies: tuple[str, ...] = ()
    """Answer these bodies in turn (the last one again once they are used up), instead of `body`."""


@dataclass
class StandIn:
    """What each path answers, and what it was asked."""

    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[tuple[str, str, dict[str, str], str]] = field(default_factory=list)
    first: dict[str, float] = field(default_factory=dict)
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
            first = state.first.setdefault(self.path, time.monotonic())
            failing = time.monotonic() - first < route.fail_for
            status = 503 if failing else route.status
            time.sleep(0 if failing else route.delay)
            asked = sum(1 for seen in state.seen if seen[1] == self.path) - 1
            body = route.bodies[min(asked, len(route.bodies) - 1)] if route.bodies else route.body
            payload = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload) + (100 if route.broken else 0)))
                self.end_headers()
                if route.trickle:
                    for byte in payload:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(route.trickle)
                else:
                    self.wfile.write(payload)
                if route.broken:
                    self.close_connection = True
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
        "SMOKE_ANSWER": "openai-completion",
        "SMOKE_URL": stand_in.url("/v1/completions"),
        "SMOKE_BODY": json.dumps({"model": "m", "prompt": "San Francisco is a", "max_tokens": 7}),
        "SMOKE_METRICS_URL": stand_in.url("/metrics"),
        "SMOKE_METRICS": json.dumps(WANTED),
        **extra,
    }


def failed_once(result: Run, code: int = 1, start: str = "smoke test failed: ") -> str:
    """The failure line: exit 1 (the server failed the test), one line on stderr, the same line in the
    termination log."""
    assert result.code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.log == lines[0]
    assert lines[0].startswith(start)
    return lines[0]


def could_not_run(result: Run) -> str:
    """Exit 2: the test could not run (not the server's fault), one line all the same."""
    return failed_once(result, 2, "smoke test could not run: ")


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
    assert "answered 200 without an openai-completion answer: no `choices`" in line


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
        "SMOKE_ANSWER": "jetstream-generate",
        "SMOKE_URL": stand_in.url("/generate"),
        "SMOKE_BODY": '{"prompt": "p", "max_tokens": 16}',
    }
    stand_in.routes = {"/generate": Route(body='{"response": " for data science"}')}
    assert run(**env).code == 0
    stand_in.routes = {"/generate": Route(body='{"text": "x"}')}
    assert "no `response` string" in failed_once(run(**env))


def test_saxml_answers_in_both_of_sax_https_shapes(stand_in, run):
    env = {
        "SMOKE_ANSWER": "sax-generate",
        "SMOKE_URL": stand_in.url("/generate"),
        "SMOKE_BODY": '{"model": "/sax/test/spmd"}',
    }
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


# -- exit codes and the time limit ---------------------------------------------------------------------------


def test_the_exit_codes_are_the_documented_ones():
    assert (smoke_check.EXIT_FAILED, smoke_check.EXIT_CANNOT_RUN) == (1, 2)


def test_an_environment_the_plan_never_writes_could_not_run(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(body=VLLM_METRICS)}
    bad = {
        "SMOKE_ANSWER": ("tgi", "SMOKE_ANSWER 'tgi' is not one of openai-completion, jetstream-generate, sax-generate"),
        "SMOKE_URL": ("vllm-service:8000", "SMOKE_URL 'vllm-service:8000' is not an http(s) URL"),
        "SMOKE_TIMEOUT_SECONDS": ("soon", "SMOKE_TIMEOUT_SECONDS 'soon' is not a positive number of seconds"),
        "SMOKE_METRICS": ("vllm:x", "SMOKE_METRICS 'vllm:x' is not a JSON list of names"),
        "SMOKE_LIMIT_SECONDS": ("0", "SMOKE_LIMIT_SECONDS '0' is not a positive number of seconds"),
    }
    for name, (value, message) in bad.items():
        assert could_not_run(run(**vllm_env(stand_in, **{name: value}))) == f"smoke test could not run: {message}"
    assert not stand_in.seen  # nothing was asked of the server


def test_an_error_of_the_scripts_own_is_one_line_and_exit_2(stand_in, run):
    # a metrics list of numbers reaches code that expects names: a bug, not the server's fault
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER)), "/metrics": Route(body=VLLM_METRICS)}
    line = could_not_run(run(**vllm_env(stand_in, SMOKE_METRICS="[1]")))
    assert line.startswith("smoke test could not run: AttributeError: ")


def test_an_answer_broken_off_is_retried_then_named(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER), broken=True)}
    line = failed_once(run(**vllm_env(stand_in, SMOKE_DEADLINE_SECONDS="0.5")))
    assert f"POST {stand_in.url('/v1/completions')} broke off its answer: IncompleteRead" in line
    assert len(stand_in.seen) >= 2


def test_an_answer_trickling_in_is_stopped_at_the_limit(stand_in, run):
    # each byte comes within the request timeout, so urllib never times out: the watchdog ends it at the limit
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER) * 50, trickle=0.1)}
    result = run(**vllm_env(stand_in, SMOKE_TIMEOUT_SECONDS="1", SMOKE_LIMIT_SECONDS="2"))
    line = failed_once(result)
    assert line == (
        "smoke test failed: no verdict within the limit of 2 s (SMOKE_LIMIT_SECONDS), "
        f"still at: POST {stand_in.url('/v1/completions')}"
    )
    assert 2 <= result.seconds < 6


def test_the_limit_names_the_last_failure_it_retried(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(500, "engine dead", delay=0.3)}
    env = vllm_env(stand_in, SMOKE_DEADLINE_SECONDS="30", SMOKE_LIMIT_SECONDS="1.5")
    line = failed_once(run(**env))
    assert line.startswith("smoke test failed: no verdict within the limit of 1.5 s (SMOKE_LIMIT_SECONDS)")
    assert f"last failure: POST {stand_in.url('/v1/completions')} answered 500: engine dead (" in line


def test_the_limit_leaves_room_for_the_last_request_and_the_metrics(stand_in, run):
    """As the plan sets it (window + 2 request timeouts): a request that first succeeds at the window's end,
    slowly, and a slow metrics read still give the script's own verdict."""
    window, request = 2.0, 2.0
    stand_in.routes = {
        "/v1/completions": Route(body=json.dumps(VLLM_ANSWER), fail_for=window - 0.3, delay=1.2),
        "/metrics": Route(body=VLLM_METRICS, delay=1.2),
    }
    env = vllm_env(
        stand_in,
        SMOKE_DEADLINE_SECONDS=str(window),
        SMOKE_TIMEOUT_SECONDS=str(request),
        SMOKE_LIMIT_SECONDS=str(window + 2 * request),
        SMOKE_PAUSE_SECONDS="0.1",
    )
    result = run(**env)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("smoke test passed: ")
    assert len(stand_in.seen) >= 3  # failed, retried, then answered


def test_no_answer_ever_ends_within_the_window_and_two_requests(stand_in, run):
    stand_in.routes = {"/v1/completions": Route(body=json.dumps(VLLM_ANSWER), delay=5)}
    result = run(**vllm_env(stand_in, SMOKE_DEADLINE_SECONDS="1", SMOKE_TIMEOUT_SECONDS="0.5"))
    assert "gave no answer within 0.5 s (timed out)" in failed_once(result)
    assert result.seconds < 1 + 2 * 0.5 + 1.5  # the window, the last request, interpreter start-up


# -- through GKE Inference Gateway: the Gateway's address, then the picker's count of picks ------------------------

GATEWAY_PATH = "/apis/gateway.networking.k8s.io/v1/namespaces/vllm/gateways/vllm-gateway"
PICKS = "inference_extension_scheduler_attempts_total"


def picker_metrics(successes: float, failures: float = 0) -> str:
    return (
        f"# TYPE {PICKS} counter\n"
        f'{PICKS}{{namespace="vllm",pod_name="vllm-tpu-a",port="8000",status="success",target_model_name="m"}} '
        f"{successes}\n"
        f'{PICKS}{{namespace="",pod_name="",port="",status="failure",target_model_name="m"}} {failures}\n'
    )


def gateway(address: str | None) -> Route:
    addresses = [{"type": "IPAddress", "value": address}] if address else []
    return Route(body=json.dumps({"kind": "Gateway", "status": {"addresses": addresses}}))


def gateway_env(stand_in: StandIn, tmp_path: Path, **extra: str) -> dict[str, str]:
    account = tmp_path / "serviceaccount"
    account.mkdir(exist_ok=True)
    (account / "token").write_text("pod-token\n", encoding="utf-8")
    return vllm_env(
        stand_in,
        SMOKE_URL=f"http://{{gateway}}:{stand_in.port}/v1/completions",
        SMOKE_GATEWAY="vllm/vllm-gateway",
        SMOKE_KUBERNETES_API=f"http://127.0.0.1:{stand_in.port}",
        SMOKE_SERVICE_ACCOUNT_DIR=str(account),
        SMOKE_PICKER_METRICS_URL=stand_in.url("/picker-metrics"),
        SMOKE_PICKER_COUNTER=json.dumps({"name": PICKS, "labels": {"status": "success"}}),
        **extra,
    )


def test_through_the_gateway_the_address_is_read_and_the_picker_must_have_picked(stand_in, run, tmp_path):
    stand_in.routes = {
        GATEWAY_PATH: gateway("127.0.0.1"),
        "/picker-metrics": Route(bodies=(picker_metrics(4, failures=9), picker_metrics(5, failures=9))),
        "/v1/completions": Route(body=json.dumps(VLLM_ANSWER)),
        "/metrics": Route(body=VLLM_METRICS),
    }
    result = run(**gateway_env(stand_in, tmp_path, SMOKE_API_KEY="sk-test"))
    assert result.code == 0, result.stderr
    assert f'picked by the endpoint picker ({PICKS}{{status="success"}} 4 -> 5)' in result.stdout
    order = [(method, path) for method, path, _, _ in stand_in.seen]
    assert order == [
        ("GET", GATEWAY_PATH),
        ("GET", "/picker-metrics"),
        ("POST", "/v1/completions"),
        ("GET", "/picker-metrics"),
        ("GET", "/metrics"),
    ]
    api, _, post = stand_in.seen[0][2], stand_in.seen[1][2], stand_in.seen[2][2]
    assert api["Authorization"] == "Bearer pod-token" and post["Authorization"] == "Bearer sk-test"
    assert "Authorization" not in stand_in.seen[1][2]  # the picker's metrics need no key


def test_an_answer_the_picker_did_not_pick_fails_naming_the_counter(stand_in, run, tmp_path):
    """FailOpen: the load balancer answers while routing around a picker it cannot reach; the count stays."""
    stand_in.routes = {
        GATEWAY_PATH: gateway("127.0.0.1"),
        "/picker-metrics": Route(body=picker_metrics(4, failures=9)),
        "/v1/completions": Route(body=json.dumps(VLLM_ANSWER)),
        "/metrics": Route(body=VLLM_METRICS),
    }
    line = failed_once(run(**gateway_env(stand_in, tmp_path)))
    assert "the endpoint picker did not pick for it" in line and f'{PICKS}{{status="success"}}' in line
    assert "stayed at 4" in line


def test_a_gateway_without_an_address_is_waited_for_then_named(stand_in, run, tmp_path):
    stand_in.routes = {GATEWAY_PATH: gateway(None)}
    line = failed_once(run(**gateway_env(stand_in, tmp_path)))
    assert "Gateway vllm/vllm-gateway has no address yet" in line and "attempts" in line


def test_a_gateway_smoke_test_without_a_token_could_not_run(stand_in, run, tmp_path):
    env = gateway_env(stand_in, tmp_path)
    env["SMOKE_SERVICE_ACCOUNT_DIR"] = str(tmp_path / "nowhere")
    assert "no API token to read Gateway vllm/vllm-gateway" in could_not_run(run(**env))
