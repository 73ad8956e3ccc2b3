"""The gateway's part of vLLM's connectivity contract (k8s/connectivity.py): who reaches the servers and the
endpoint picker when `vllm.gateway` is on.

- The gateway's Envoy proxies reach the servers' port (and the picker's ext-proc port, the load balancer's
  Service Extension call) from the proxy-only subnet: "packets sent from a proxy to a backend VM or endpoint have
  a source IP address from the proxy-only subnet" (https://cloud.google.com/load-balancing/docs/proxy-only-subnets).
  That range is neither a pod nor a node, so an `ipBlock` matches it on GKE Dataplane V2 as it does a client
  outside the cluster (Cilium's CIDR rules stop only at pods and nodes, connectivity.py cites it).
- The load balancer's health checks come from the universe's health-check ranges and, for these Envoy-based regional
  load balancers, the proxy-only subnet (gcp/universe.py cites the firewall-rules pages): to the servers' /health on
  their port (the pool's HealthCheckPolicy) and to the picker's gRPC health port (the HealthCheckPolicy on its
  Service, vllm/gateway.py). Not to ext-proc: it answers no health check (ledger: epp.ext-proc-health-needs-flag).
- The picker scrapes each server's /metrics on the serving port (the InferencePool's targetPorts[0]) and watches
  its pool, objectives and pods through the API server.
- Managed Prometheus scrapes the picker's metrics port; so does the smoke test, which checks the picker served its
  request (k8s/smoke_check.py). The smoke test also sends that request through the Gateway's address, which is known
  only once GKE assigns it (it reads it from the Gateway's status through the API server): a port-only rule.

- With the precise prefix cache (`vllm.gateway.prefixCache: precise`, vllm/kv_events.py), the picker dials each
  server's KV-events socket: ZMQ over TCP to the pool endpoint's address on 5557, the servers bind and the router
  connects (ledger: router.kv-events-port, router.kv-events.per-endpoint-port, router.kv-events.discover-pods), so
  the servers admit the picker there and the picker may leave for it. Its render sidecar is reached on loopback
  (no rule) and fetches the model's config and tokenizer from Hugging Face over HTTPS, which the picker's
  port-only rule to 443 (the API endpoint) already lets out; the contract names that reason too.

The same flows whichever picker `vllm.gateway.picker` runs: llm-d's router keeps the v1.5.0 picker's ports
(catalog/pickers.py SAME_PORTS).
"""

from __future__ import annotations

from tpu_stacks.catalog.inference_gateway import EXT_PROC_PORT, HEALTH_PORT, METRICS_PORT
from tpu_stacks.k8s.connectivity import ANY, External, Flow, Group, Pods, egress, ingress, unique
from tpu_stacks.k8s.platform_flows import HTTPS_PORT, PRIVATE_RANGES, api_endpoint, dns, scrape, smoke_test_clients
from tpu_stacks.vllm.gateway_plan import LISTENER_PORT, PICKER_LABELS, GatewayPlan
from tpu_stacks.vllm.kv_events import KV_EVENTS_PORT


def _proxies(plan: GatewayPlan, port: int, what: str) -> tuple[Flow, ...]:
    return ingress(External(plan.proxy_range), [port], f"the gateway's proxies (proxy-only subnet) to {what}")


def _health_checks(plan: GatewayPlan, port: int, what: str) -> tuple[Flow, ...]:
    """The load balancer's health checks of `what`: from the universe's ranges and from the proxy-only subnet."""
    ranges = (*plan.health_check_ranges, plan.proxy_range)
    return tuple(flow for cidr in ranges for flow in ingress(External(cidr), [port], f"health checks of {what}"))


def server_flows(plan: GatewayPlan, port: int) -> tuple[Flow, ...]:
    """What the servers admit behind the gateway (in place of the Service's load-balancer clients)."""
    picker = Pods(plan.namespace, dict(PICKER_LABELS))
    return (
        *_proxies(plan, port, "the servers"),
        *_health_checks(plan, port, "the servers (/health)"),
        *ingress(picker, [port], "the endpoint picker scrapes /metrics (Model Server Protocol)"),
        *(ingress(picker, [KV_EVENTS_PORT], "the router reads the KV-cache events (ZMQ)") if plan.precise else ()),
    )


def picker_group(plan: GatewayPlan, server_labels: dict[str, str], port: int, smoke_test: bool = False) -> Group:
    """The picker's contract; `smoke_test`: the stack's smoke test reads its metrics."""
    servers = Pods(plan.namespace, dict(server_labels))
    flows = (
        *_proxies(plan, EXT_PROC_PORT, "the endpoint picker (ext-proc)"),
        *_health_checks(plan, HEALTH_PORT, "the endpoint picker (gRPC health)"),
        *scrape([METRICS_PORT]),
        *(smoke_test_clients(plan.namespace, [METRICS_PORT]) if smoke_test else ()),
        *dns(),
        *egress(servers, [port], "each server's /metrics: queue, running requests, KV cache"),
        *(_precise_egress(servers) if plan.precise else ()),
        *api_endpoint(),
    )
    return Group("vllm-epp", plan.namespace, dict(PICKER_LABELS), unique(flows))


def _precise_egress(servers: Pods) -> tuple[Flow, ...]:
    return (
        *egress(servers, [KV_EVENTS_PORT], "each server's KV-cache events (ZMQ, the precise prefix producer)"),
        *egress(
            External("0.0.0.0/0", PRIVATE_RANGES),
            [HTTPS_PORT],
            "the render sidecar fetches the model's config and tokenizer from Hugging Face",
        ),
    )


def smoke_test_flows(plan: GatewayPlan) -> tuple[Flow, ...]:
    """The smoke test's own calls behind the gateway, beyond the server's metrics: the Gateway's status (the API
    server), the completion through the Gateway's address on its listener port (an internal or external load
    balancer address GKE assigns at `up`: port-only), and the picker's metrics."""
    picker = Pods(plan.namespace, dict(PICKER_LABELS))
    return (
        *api_endpoint(),
        *egress(ANY, [LISTENER_PORT], "one completion through the Gateway's address (assigned at up): port-only"),
        *egress(picker, [METRICS_PORT], "the picker's metrics: did it pick the replica"),
    )
