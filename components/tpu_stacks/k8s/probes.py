"""Probes for model servers whose first start takes many minutes. How long `pulumi up` waits for
them is derived from these same probes in `tpu_stacks.objects.awaits`."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from tpu_stacks.objects.awaits import STARTUP_PERIOD_SECONDS


def _http(path: str, port: int, period: int, failures: int) -> k8s.core.v1.ProbeArgs:
    return k8s.core.v1.ProbeArgs(
        http_get=k8s.core.v1.HTTPGetActionArgs(path=path, port=port),
        period_seconds=period,
        failure_threshold=failures,
        timeout_seconds=5,
    )


def tcp_probe(port: int, period: int, failures: int) -> k8s.core.v1.ProbeArgs:
    """For servers that offer no HTTP health endpoint (gRPC ports, Saxml)."""
    return k8s.core.v1.ProbeArgs(
        tcp_socket=k8s.core.v1.TCPSocketActionArgs(port=port),
        period_seconds=period,
        failure_threshold=failures,
        timeout_seconds=5,
    )


def startup_probe(path: str, port: int, max_startup_minutes: int) -> k8s.core.v1.ProbeArgs:
    """Tolerates the first load and XLA compile: liveness only starts once this has passed."""
    period = STARTUP_PERIOD_SECONDS
    return _http(path, port, period, failures=max_startup_minutes * 60 // period)


def readiness_probe(path: str, port: int) -> k8s.core.v1.ProbeArgs:
    return _http(path, port, period=5, failures=3)


def liveness_probe(path: str, port: int) -> k8s.core.v1.ProbeArgs:
    return _http(path, port, period=15, failures=4)
