"""One Managed Prometheus PodMonitoring: the scrape every workload declares for its metrics endpoint.

Why one function: the vLLM server, the Ray cluster of a multi-host replica, the gateway's endpoint picker
and the generic monitoring target each scrape their own port, and the object's shape (API version, kind,
`/metrics` path, selector by labels) is GKE Managed Prometheus's
(https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed#gmp-pod-monitoring), written once.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

API_VERSION = "monitoring.googleapis.com/v1"


def pod_monitoring(
    resource_name: str,
    name: str,
    namespace: str,
    match_labels: dict[str, str],
    port: int,
    opts: pulumi.ResourceOptions,
    interval: str = "15s",
) -> k8s.apiextensions.CustomResource:
    """Scrape `/metrics` on `port` of the pods `match_labels` selects in `namespace`, every `interval`."""
    return k8s.apiextensions.CustomResource(
        resource_name,
        api_version=API_VERSION,
        kind="PodMonitoring",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace),
        spec={
            "selector": {"matchLabels": match_labels},
            "endpoints": [{"path": "/metrics", "port": port, "interval": interval}],
        },
        opts=opts,
    )
