"""A local stand-in for a vLLM server, for running the pinned inference-perf against: standard library only.

It answers what inference-perf 0.7.0 calls on a `vllm` server (the upstream ledger's rows
inference-perf.vllm-client.models and inference-perf.completion.request-body): `GET /v1/models` (the OpenAI list, `{"data": [{"id": ...}]}`), and
`POST /v1/completions` with `"stream": true`, streamed as vLLM's OpenAI server streams a completion: server-sent
events, one `data: {json}` event per generated token (`choices[0].text`), then, because the request asks for
`stream_options.include_usage`, one event with `"choices": []` and `usage` (`prompt_tokens`, `completion_tokens`,
`total_tokens`), then `data: [DONE]` (vLLM's `OpenAIServingCompletion.completion_stream_generator`,
vllm/entrypoints/openai/serving_completion.py, https://github.com/vllm-project/vllm).

Its timing is a small model of a server, so the latencies inference-perf measures are real and vary with load:
a first token after a prefill that grows with the prompt, then one token per decode step; a decode step slows
with the number of requests decoding at once. The numbers are made up; what the test checks is that the report
reflects what was sent (the token counts) and that TTFT and NTPOT grow with the rate.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STREAM_END = "[" + "DONE]"  # the stream's last event, `data: [DONE]` (split: not read as a citation key)

PREFILL_BASE_S = 0.020
PREFILL_PER_TOKEN_S = 0.00002
STEP_BASE_S = 0.004
STEP_PER_RUNNING_S = 0.0004


class _State:
    def __init__(self, model: str) -> None:
        self.model = model
        self.running = 0
        self.lock = threading.Lock()
        self.requests: list[dict] = []


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            return

        def _json(self, status: int, document: dict) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's name
            if self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": state.model, "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def _event(self, document: dict | str) -> None:
            text = document if isinstance(document, str) else json.dumps(document)
            data = f"data: {text}\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/v1/completions":
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            with state.lock:
                state.requests.append(request)
            prompt_tokens = len(str(request["prompt"]).split())
            max_tokens = int(request["max_tokens"])
            if not request.get("stream"):
                self._json(400, {"error": {"message": "the stand-in streams only"}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            with state.lock:
                state.running += 1
            try:
                time.sleep(PREFILL_BASE_S + PREFILL_PER_TOKEN_S * prompt_tokens)
                created = int(time.time())
                for index in range(max_tokens):
                    if index:
                        time.sleep(STEP_BASE_S + STEP_PER_RUNNING_S * state.running)
                    last = index == max_tokens - 1
                    choice = {"index": 0, "text": f" w{index % 97}", "logprobs": None}
                    choice["finish_reason"] = "length" if last else None
                    chunk = {"id": "cmpl-standin", "object": "text_completion", "created": created}
                    self._event({**chunk, "model": state.model, "choices": [choice]})
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": max_tokens}
                usage["total_tokens"] = prompt_tokens + max_tokens
                chunk = {"id": "cmpl-standin", "object": "text_completion", "created": created}
                self._event({**chunk, "model": state.model, "choices": [], "usage": usage})
                self._event(STREAM_END)
                self.wfile.write(b"0\r\n\r\n")
            finally:
                with state.lock:
                    state.running -= 1

    return Handler


class StandIn:
    """The server on 127.0.0.1 at a free port, in a thread; `requests` holds every completion request's body."""

    def __init__(self, model: str) -> None:
        self.state = _State(model)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def requests(self) -> list[dict]:
        return self.state.requests

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
