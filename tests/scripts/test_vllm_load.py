"""The load script against a stand-in OpenAI endpoint on loopback: bounded, counted, authenticated."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scripts import vllm_load


@pytest.fixture()
def server():
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body, self.headers.get("Authorization")))
            reply = json.dumps({"choices": [{"text": " city"}], "usage": {"completion_tokens": 7}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    httpd.shutdown()


def test_sends_the_tutorial_request_and_stops_at_the_budget(server):
    url, seen = server
    result = vllm_load.run(
        url, "meta-llama/Llama-3.1-70B", parallel=4, duration=30, max_requests=20, max_tokens=100, api_key="k"
    )
    assert result["requests"] == 20 and result["errors"] == 0
    assert len(seen) == 20
    path, body, auth = seen[0]
    assert path == "/v1/completions"
    assert body == {
        "model": "meta-llama/Llama-3.1-70B",
        "prompt": "Write a story about san francisco",
        "max_tokens": 100,
        "temperature": 0,
    }
    assert auth == "Bearer k"
    assert result["tokens_per_s"] > 0 and result["p95_s"] >= result["p50_s"]


def test_unreachable_endpoint_counts_errors_and_exits_non_zero():
    code = vllm_load.main(
        [
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--parallel",
            "1",
            "--duration",
            "1",
            "--max-requests",
            "3",
        ]
    )
    assert code == 1
