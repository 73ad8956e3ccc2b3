"""The program a probe pod runs: try each attempt of its spec once and report what happened, as JSON.

Standard library only, no shell: the pod runs `python3 -c <this file's text> <spec JSON>` in the stack's own
small Python image (the smoke test's), so nothing is installed and nothing is mounted. The spec is
`{"timeout": seconds, "attempts": [{"id", "op", ...}]}` with three operations:
- `resolve` (`name`): `socket.getaddrinfo`, as every client library resolves a name through the pod's
  /etc/resolv.conf (its search list makes a short name the pod's own namespace's Service);
- `dns-tcp` (`name`; `server`, else the first nameserver of /etc/resolv.conf): one DNS query for the name's
  A record over TCP (RFC 1035 4.2.2: the message behind a two-byte length), the path a resolver takes when an
  answer does not fit UDP (RFC 7766), which the contract opens beside UDP;
- `connect` (`host`, `port`; `host` may be `$NODE_IP`, the node's address from the downward API): one TCP connect;
- `http` (`url`, `headers`; `token`: send the pod's service-account token and trust the cluster's CA).
Each outcome is one word, so the caller judges it without parsing messages: `resolved`, `no-such-name`
(the resolver answered, it knows no such name), `connected`, `refused` (a TCP reset: the packet reached the
other end, which has no listener), `http` (any HTTP status: the server answered), `timeout`, `unreachable`
(an ICMP error: no route), `error` (anything else, with the message).

The report goes to the termination log (`/dev/termination-log`, which the kubelet makes the container's
termination message, read back from the pod's status) and to stdout; if the termination log cannot be
written, the program exits 3 so that `terminationMessagePolicy: FallbackToLogsOnError` takes the log's last
line instead (kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import ssl
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

TERMINATION_LOG = "/dev/termination-log"
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the kubelet mounts the token and the cluster's CA (kubernetes.io/docs/tasks/run-application/
access-api-from-pod/#directly-accessing-the-rest-api)."""
UNREACHABLE = (errno.EHOSTUNREACH, errno.ENETUNREACH)


def _host(host: str) -> str:
    return os.environ.get(host[1:], "") if host.startswith("$") else host


def classify(error: BaseException) -> tuple[str, str]:
    """An exception as (outcome, detail)."""
    if isinstance(error, socket.gaierror):
        if error.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)):
            return "no-such-name", str(error)
        if error.errno == socket.EAI_AGAIN:
            return "timeout", f"the resolver did not answer: {error}"
        return "error", str(error)
    if isinstance(error, urllib.error.HTTPError):
        return "http", f"HTTP {error.code}"
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, BaseException):
        return classify(error.reason)
    if isinstance(error, ConnectionRefusedError):
        return "refused", "connection refused (TCP reset)"
    if isinstance(error, (TimeoutError, socket.timeout)):
        return "timeout", "no answer"
    if isinstance(error, OSError) and error.errno in UNREACHABLE:
        return "unreachable", str(error)
    return "error", f"{type(error).__name__}: {error}"


def resolve(attempt: dict, timeout: float) -> tuple[str, str]:
    addresses = sorted({info[4][0] for info in socket.getaddrinfo(attempt["name"], None, type=socket.SOCK_STREAM)})
    return "resolved", ",".join(addresses)


def nameserver(path: str = "/etc/resolv.conf") -> str:
    with open(path, encoding="utf-8") as conf:
        for line in conf:
            words = line.split()
            if len(words) >= 2 and words[0] == "nameserver":
                return words[1]
    raise OSError(f"no nameserver in {path}")


def dns_query(name: str, ident: int) -> bytes:
    """An RFC 1035 query (header: id, flags with RD, one question) for the A record of `name`."""
    labels = b"".join(bytes([len(p)]) + p.encode("ascii") for p in name.rstrip(".").split("."))
    message = ident.to_bytes(2, "big") + b"\x01\x00" + b"\x00\x01" + b"\x00" * 6 + labels + b"\x00\x00\x01\x00\x01"
    return len(message).to_bytes(2, "big") + message


def dns_answer(reply: bytes, ident: int) -> tuple[str, str]:
    """A reply's outcome from its header (id, flags whose low 4 bits are RCODE, counts: RFC 1035 4.1.1): RCODE 0 with
    answers, 0 without or 3 (NXDOMAIN), or another code."""
    if len(reply) < 12 or int.from_bytes(reply[0:2], "big") != ident:
        return "error", f"not an answer to the query ({len(reply)} bytes)"
    rcode, answers = reply[3] & 0x0F, int.from_bytes(reply[6:8], "big")
    if rcode == 0 and answers:
        return "resolved", f"{answers} answer(s) over TCP"
    return ("no-such-name" if rcode in (0, 3) else "error"), f"RCODE {rcode}, {answers} answer(s) over TCP"


def dns_tcp(attempt: dict, timeout: float) -> tuple[str, str]:
    host, _, port = (attempt.get("server") or nameserver()).partition(":")
    ident = int.from_bytes(os.urandom(2), "big")
    with socket.create_connection((host, int(port or 53)), timeout=timeout) as conn:
        conn.sendall(dns_query(attempt["name"], ident))
        reply = b""
        while len(reply) < 2 or len(reply) < 2 + int.from_bytes(reply[:2], "big"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
    return dns_answer(reply[2:], ident)


def connect(attempt: dict, timeout: float) -> tuple[str, str]:
    host = _host(attempt["host"])
    with socket.create_connection((host, int(attempt["port"])), timeout=timeout):
        return "connected", f"{host}:{attempt['port']}"


def http(attempt: dict, timeout: float) -> tuple[str, str]:
    headers = dict(attempt.get("headers") or {})
    context = None
    if attempt.get("token"):
        with open(f"{SERVICE_ACCOUNT}/token", encoding="utf-8") as token:
            headers["Authorization"] = f"Bearer {token.read().strip()}"
        context = ssl.create_default_context(cafile=f"{SERVICE_ACCOUNT}/ca.crt")
    url = attempt["url"].replace("$KUBERNETES_SERVICE_HOST", os.environ.get("KUBERNETES_SERVICE_HOST", ""))
    url = url.replace("$KUBERNETES_SERVICE_PORT", os.environ.get("KUBERNETES_SERVICE_PORT", ""))
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
        return "http", f"HTTP {answer.status}: {answer.read(200).decode('utf-8', 'replace').strip()}"


OPERATIONS = {"resolve": resolve, "dns-tcp": dns_tcp, "connect": connect, "http": http}


def attempt_once(attempt: dict, timeout: float) -> dict:
    try:
        outcome, detail = OPERATIONS[attempt["op"]](attempt, timeout)
    except Exception as error:  # every failure is an answer (classify), never a crash of the probe
        outcome, detail = classify(error)
    return {"id": attempt["id"], "outcome": outcome, "detail": detail[:300]}


def run(spec: dict) -> dict:
    """Every attempt at once (each bounded by the spec's timeout), reported in the spec's order."""
    attempts = spec["attempts"]
    socket.setdefaulttimeout(spec["timeout"])  # getaddrinfo has no timeout of its own; the resolver's applies
    with ThreadPoolExecutor(max_workers=max(1, len(attempts))) as pool:
        results = list(pool.map(lambda a: attempt_once(a, spec["timeout"]), attempts))
    return {"results": results}


def main(argv: list[str]) -> int:
    report = json.dumps(run(json.loads(argv[1])), separators=(",", ":"))
    print(report, flush=True)
    try:
        with open(TERMINATION_LOG, "w", encoding="utf-8") as log:
            log.write(report)
    except OSError:
        return 3  # FallbackToLogsOnError: the log's last line becomes the message
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
