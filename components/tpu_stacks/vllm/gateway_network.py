"""The gateway's part of vLLM's connectivity contract (k8s/connectivity.py): who reaches the servers and the
endpoint picker when `vllm.gateway` is on.

- The gateway's Envoy proxies reach the servers' port (and the picker's ext-proc port, the load balancer's
  Service Extension call) from the proxy-only subnet: "packets sent from a proxy to a backend VM or endpoint have
  a source IP address from the proxy-only subnet" (https://cloud.google.com/load-balancing/docs/proxy-only-subnets).
  That range is neither a pod nor a node, so an `ipBlock` matches it on GKE Dataplane V2 as it does a client
  outside the cluster (Cilium's CIDR rules stop only at pods and nodes, connectivity.py cites it).
- Google's health-check probes come from 35.191.0.0/16 and 130.211.0.0/22 (catalog/inference_gateway.py): to
  the servers' /health (the HealthCheckPolicy) and to the picker's backend.
- The picker scrapes each server's /metrics on the serving port (the InferencePool's targetPorts[0]) and watches
  its pool, objectives and pods through the API server.
- Managed Prometheus scrapes the picker's metrics port.
"""

from __future__ import annotations

from tpu_stacks.catalog.inference_gateway import EXT_PROC_PORT, HEALTH_CHECK_RANGES, METRICS_PORT
from tpu_stacks.k8s.connectivity import External, Flow, Group, Pods, egress, ingress, unique
from tpu_stacks.k8s.platform_flows import api_endpoint, dns, scrape
from tpu_stacks.vllm.gateway_plan import PICKER_LABELS, GatewayPlan


def _gateway_sources(plan: GatewayPlan, port: int, what: str) -> tuple[Flow, ...]:
    proxies = ingress(External(plan.proxy_range), [port], f"the gateway's proxies (proxy-only subnet) to {what}")
    checks = tuple(
        flow for cidr in HEALTH_CHECK_RANGES for flow in ingress(External(cidr), [port], f"health checks of {what}")
    )
    return (*proxies, *checks)


def server_flows(plan: GatewayPlan, port: int) -> tuple[Flow, ...]:
    """What the servers admit behind the gateway (in place of the Service's load-balancer clients)."""
    picker = Pods(plan.namespace, dict(PICKER_LABELS))
    return (
        *_gateway_sources(plan, port, "the servers"),
        *ingress(picker, [port], "the endpoint picker scrapes /metrics (Model Server Protocol)"),
    )


def picker_group(plan: GatewayPlan, server_labels: dict[str, str], port: int) -> Group:
    servers = Pods(plan.namespace, dict(server_labels))
    flows = (
        *_gateway_sources(plan, EXT_PROC_PORT, "the endpoint picker (ext-proc)"),
        *scrape([METRICS_PORT]),
        *dns(),
        *egress(servers, [port], "each server's /metrics: queue, running requests, KV cache"),
        *api_endpoint(),
    )
    return Group("vllm-epp", plan.namespace, dict(PICKER_LABELS), unique(flows))
