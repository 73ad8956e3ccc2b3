"""The probe program itself, run here against local sockets: each outcome word it reports is what happened.

The drop a NetworkPolicy causes (silence until the timeout) cannot be made here without a cluster; its word comes
from `classify`, tested with the exceptions Python raises for it.
"""

from __future__ import annotations

import errno
import http.server
import json
import socket
import subprocess
import sys
import threading
import urllib.error

import pytest

from tpu_stacks_live.probe import agent, pod, run
from tpu_stacks_live.probe.plan import ALLOWED, Probe


@pytest.fixture
def server():
    """A local HTTP server: `/` answers 200, anything else 404."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/" else 404)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_each_operation_reports_what_happened(server, monkeypatch):
    monkeypatch.setenv("NODE_IP", "127.0.0.1")
    spec = {
        "timeout": 3,
        "attempts": [
            {"id": "open", "op": "connect", "host": "$NODE_IP", "port": server},
            {"id": "closed", "op": "connect", "host": "127.0.0.1", "port": closed_port()},
            {"id": "name", "op": "resolve", "name": "localhost"},
            {"id": "ok", "op": "http", "url": f"http://127.0.0.1:{server}/"},
            {"id": "missing", "op": "http", "url": f"http://127.0.0.1:{server}/nothing"},
        ],
    }
    results = {r["id"]: r for r in agent.run(spec)["results"]}
    assert {k: r["outcome"] for k, r in results.items()} == {
        "open": "connected",
        "closed": "refused",
        "name": "resolved",
        "ok": "http",
        "missing": "http",
    }
    assert results["ok"]["detail"] == "HTTP 200: hello" and results["missing"]["detail"] == "HTTP 404"


@pytest.mark.parametrize(
    "error, outcome",
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "no-such-name"),
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), "timeout"),
        (TimeoutError("timed out"), "timeout"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "refused"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "unreachable"),
        (urllib.error.URLError(TimeoutError("timed out")), "timeout"),
        (urllib.error.HTTPError("http://x", 403, "Forbidden", {}, None), "http"),
        (ValueError("bad"), "error"),
    ],
)
def test_errors_become_one_word(error, outcome):
    assert agent.classify(error)[0] == outcome


def test_the_pods_own_command_runs_and_its_report_is_read_back(server, tmp_path):
    """The command of a built pod, run as the container would (another interpreter for `python3`): its report
    (here on stdout: no /dev/termination-log, so it exits 3 for the kubelet's fallback to the log) is judged."""
    probe = Probe("peer", "probe-peer:x", "ns", {}, (), ALLOWED, "a->b", "fix")
    attempts = [{"id": "connect", "op": "connect", "host": "127.0.0.1", "port": server}]
    command = pod.manifest(probe, attempts, "img", "run1", 60)["spec"]["containers"][0]["command"]
    done = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode in (0, 3), done.stderr
    found = run.report(done.stdout)
    assert found["connect"]["outcome"] == "connected"


def test_the_report_goes_to_the_termination_log(tmp_path, monkeypatch, capsys):
    log = tmp_path / "termination-log"
    monkeypatch.setattr(agent, "TERMINATION_LOG", str(log))
    spec = json.dumps({"timeout": 1, "attempts": [{"id": "name", "op": "resolve", "name": "localhost"}]})
    assert agent.main(["-c", spec]) == 0
    assert json.loads(log.read_text())["results"][0]["outcome"] == "resolved"
    monkeypatch.setattr(agent, "TERMINATION_LOG", str(tmp_path / "missing" / "log"))
    assert agent.main(["-c", spec]) == 3  # unwritable: FallbackToLogsOnError reads the stdout line
    assert run.report(capsys.readouterr().out)["name"]["outcome"] == "resolved"


@pytest.fixture
def dns_server():
    """A TCP DNS responder: an answer for any name but `missing.example.`, NXDOMAIN for that one."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                size = int.from_bytes(conn.recv(2), "big")
                query = b""
                while len(query) < size:
                    query += conn.recv(size - len(query))
                missing = b"\x07missing\x07example\x00" in query
                flags, answers = (b"\x81\x83", 0) if missing else (b"\x81\x80", 1)
                header = query[:2] + flags + b"\x00\x01" + answers.to_bytes(2, "big") + b"\x00\x00\x00\x00"
                reply = header + query[12:]
                conn.sendall(len(reply).to_bytes(2, "big") + reply)

    threading.Thread(target=serve, daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_dns_query_over_tcp_reads_the_answers_rcode(dns_server):
    found = agent.run(
        {
            "timeout": 3,
            "attempts": [
                {"id": "hit", "op": "dns-tcp", "name": "storage.googleapis.com.", "server": dns_server},
                {"id": "miss", "op": "dns-tcp", "name": "missing.example.", "server": dns_server},
                {"id": "closed", "op": "dns-tcp", "name": "x.", "server": f"127.0.0.1:{closed_port()}"},
            ],
        }
    )["results"]
    assert [r["outcome"] for r in found] == ["resolved", "no-such-name", "refused"]


def test_the_dns_query_is_rfc_1035_behind_a_length(tmp_path):
    query = agent.dns_query("storage.googleapis.com.", 0x1234)
    assert int.from_bytes(query[:2], "big") == len(query) - 2
    assert query[2:4] == b"\x12\x34" and query[4:6] == b"\x01\x00"  # id, recursion desired
    assert query[14:] == b"\x07storage\x0agoogleapis\x03com\x00\x00\x01\x00\x01"  # QNAME, QTYPE A, QCLASS IN
    assert agent.dns_answer(b"\x12\x35" + b"\x81\x80" + b"\x00" * 10, 0x1234)[0] == "error"  # not our query's id
    assert agent.dns_answer(b"\x12\x34\x81\x80\x00\x01\x00\x02\x00\x00\x00\x00", 0x1234)[0] == "resolved"
    assert agent.dns_answer(b"\x12\x34\x81\x83\x00\x01\x00\x00\x00\x00\x00\x00", 0x1234)[0] == "no-such-name"
    assert agent.dns_answer(b"\x12\x34\x81\x82\x00\x01\x00\x00\x00\x00\x00\x00", 0x1234)[0] == "error"  # SERVFAIL
    conf = tmp_path / "resolv.conf"
    conf.write_text("search vllm.svc.cluster.local svc.cluster.local\nnameserver 169.254.20.10\noptions ndots:5\n")
    assert agent.nameserver(str(conf)) == "169.254.20.10"
