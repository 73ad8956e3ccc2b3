#!/usr/bin/env python3
"""Load an OpenAI-compatible vLLM endpoint the way the tutorial's load.sh does, but bounded.

N workers send the tutorial's completion request in a loop until a duration or a request budget
runs out, then print requests/s, generated tokens/s and latency percentiles. It is what makes the
HPA on `vllm:num_requests_waiting` scale out. Standard library only.

    python3 scripts/vllm_load.py --base-url http://10.0.0.5:8000/v1 --model meta-llama/Llama-3.1-70B \\
        --parallel 32 --duration 600
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

PROMPT = "Write a story about san francisco"  # the tutorial's load prompt


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    tokens: int = 0
    errors: int = 0
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, budget: int) -> bool:
        with self.lock:
            if self.sent >= budget:
                return False
            self.sent += 1
            return True


def one_request(url: str, body: bytes, api_key: str | None, timeout: float) -> int:
    """Send one completion; return the generated tokens the server reports."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        payload = json.load(response)
    return int(payload.get("usage", {}).get("completion_tokens", 0))


def worker(
    url: str, body: bytes, api_key: str | None, deadline: float, budget: int, timeout: float, tally: Tally
) -> None:
    while time.monotonic() < deadline and tally.take(budget):
        started = time.monotonic()
        try:
            tokens = one_request(url, body, api_key, timeout)
        except (urllib.error.URLError, OSError, ValueError):
            with tally.lock:
                tally.errors += 1
            continue
        with tally.lock:
            tally.latencies.append(time.monotonic() - started)
            tally.tokens += tokens


def run(
    base_url: str,
    model: str,
    parallel: int,
    duration: float,
    max_requests: int,
    max_tokens: int,
    api_key: str | None,
    timeout: float = 120.0,
) -> dict[str, float]:
    url = base_url.rstrip("/") + "/completions"
    body = json.dumps({"model": model, "prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0}).encode()
    tally = Tally()
    started = time.monotonic()
    deadline = started + duration
    threads = [
        threading.Thread(target=worker, args=(url, body, api_key, deadline, max_requests, timeout, tally), daemon=True)
        for _ in range(parallel)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    ordered = sorted(tally.latencies)

    def percentile(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else 0.0

    return {
        "requests": len(ordered),
        "errors": tally.errors,
        "seconds": round(elapsed, 3),
        "requests_per_s": round(len(ordered) / elapsed, 3) if elapsed else 0.0,
        "tokens_per_s": round(tally.tokens / elapsed, 3) if elapsed else 0.0,
        "p50_s": round(percentile(0.5), 4),
        "p95_s": round(percentile(0.95), 4),
        "mean_s": round(statistics.fmean(ordered), 4) if ordered else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the stack output baseUrl, e.g. http://IP:8000/v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--duration", type=float, default=300, help="seconds; the run always stops by itself")
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--max-tokens", type=int, default=100)
    args = parser.parse_args(argv)
    if args.parallel < 1 or args.duration <= 0 or args.max_requests < 1:
        print("vllm_load: --parallel, --duration and --max-requests must be positive", file=sys.stderr)
        return 2
    result = run(
        args.base_url,
        args.model,
        args.parallel,
        args.duration,
        args.max_requests,
        args.max_tokens,
        os.environ.get("VLLM_API_KEY"),
    )
    print(json.dumps(result))
    return 0 if result["requests"] else 1


if __name__ == "__main__":
    sys.exit(main())
