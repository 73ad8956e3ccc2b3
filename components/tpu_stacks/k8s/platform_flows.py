"""The platform's flows: what GKE's own pieces need from a workload's pods, and what pods need from GKE.

Each function returns contract flows (`k8s.connectivity`) with the reason; the workloads' `network.py`
compose them with their own peers. Where the other end is a node or a host-network pod, the flow's
peer is `Hosts` and the policy serves it with a port-only rule (on GKE Dataplane V2 no `ipBlock`
matches a node's or a host-network pod's address, connectivity.py cites Cilium).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.catalog.upstream import number
from tpu_stacks.k8s.connectivity import ANY, External, Flow, Group, Hosts, Pods, egress, ingress, unique
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS

DNS_PORT = 53
DNS_PEERS = Hosts("kube-dns pods, NodeLocal DNSCache (169.254.20.10, host network) or Cloud DNS (169.254.169.254)")
"""All three answer on 53 UDP and TCP. NodeLocal DNSCache is on by default on Autopilot
(cloud.google.com/kubernetes-engine/docs/how-to/nodelocal-dns-cache); Cloud DNS for GKE answers at the
metadata address 169.254.169.254:53 (cloud.google.com/kubernetes-engine/docs/how-to/cloud-dns). Two of
the three are host-side, so one port-only rule serves them all."""
METADATA_SERVER = ("169.254.169.254/32", 80)
"""The metadata address pods call for Workload Identity tokens. On Dataplane V2, Cilium evaluates egress
policy before the node redirects the call to the GKE metadata server, so this `ipBlock` (a link-local
address: neither a pod nor a node, which is where Cilium's CIDR rules stop) is the rule that serves
(github.com/gke-labs/kube-agents/pull/777, after #676 had assumed the opposite)."""
GKE_METADATA_SERVER = ("169.254.169.252/32", 988)
"""Where the node sends that call after NAT on Dataplane V1 (Calico evaluates policy after it): kept for a
cluster created with `cluster.dataplaneV2: false`, harmless on Dataplane V2
(github.com/gke-labs/kube-agents/pull/805 quotes Google's guidance to allow 988 and, for gRPC DirectPath's
ALTS, 987; no pod here takes DirectPath). `tpu-stacks verify --probe` tries the metadata-server flow from the
workloads' own pods (docs/verify-on-a-cluster.md)."""
PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
"""RFC 1918: where pods, Services, nodes and internal load balancers live in a VPC-native cluster."""
HTTPS_PORT = 443
TPU_RUNTIME_PORT = 8353
"""libtpu's control service on the TPU node. GKE's TPU device plugin sets VBAR_CONTROL_SERVICE_URL to
`$NODE_IP:8353` unless it hands the pod a Unix socket (`unix:///var/run/tpu-plugin/vbar.sock`), and
Google's tpu7x Ray samples set `$(NODE_IP):8353` themselves: with restricted egress, a TPU pod must reach
its own node on this port."""
TPU_DEVICE_PLUGIN_METRICS_PORT = number("kuberay-tpu-webhook.device-plugin-addr")
"""GKE's TPU device plugin serves its metrics (duty cycle, HBM, tensor core use) on the node's address, host network.
The KubeRay TPU webhook points Ray's TPU pods at it (TPU_DEVICE_PLUGIN_ADDR = node IP:2112), and Ray's dashboard agent
reads it for the Ray dashboard's TPU charts, giving up for good after one failed request (ledger:
kuberay-tpu-webhook.device-plugin-addr, ray.tpu.device-plugin-metrics)."""
MANAGED_PROMETHEUS = Pods("gmp-system", {"app.kubernetes.io/name": "collector"})
"""Managed Prometheus's collectors: the `collector` DaemonSet in gmp-system runs on the pod network (no
`hostNetwork`; github.com/GoogleCloudPlatform/prometheus-engine manifests/operator.yaml), so a selector
matches them."""
KONNECTIVITY_AGENT = Pods("kube-system", {"k8s-app": "konnectivity-agent"})
"""The API server reaches webhooks and aggregated APIs in the cluster through konnectivity-agent pods in
kube-system (the upstream agent's labels: kubernetes.io/docs/tasks/extend-kubernetes/setup-konnectivity;
GKE proxies admission calls through them: github.com/tigera/operator/pull/5212)."""


def dns() -> tuple[Flow, ...]:
    why = "DNS (kube-dns, NodeLocal DNSCache or Cloud DNS): port-only"
    return (*egress(DNS_PEERS, [DNS_PORT], why, "UDP"), *egress(DNS_PEERS, [DNS_PORT], why, "TCP"))


def metadata_server() -> tuple[Flow, ...]:
    return (
        *egress(External(METADATA_SERVER[0]), [METADATA_SERVER[1]], "Workload Identity tokens (metadata address)"),
        *egress(External(GKE_METADATA_SERVER[0]), [GKE_METADATA_SERVER[1]], "the GKE metadata server on the node"),
    )


def google_apis() -> tuple[Flow, ...]:
    """HTTPS to any address outside the private ranges: Google APIs and Hugging Face are served from shared,
    changing ranges, so no narrower rule names them."""
    return egress(
        External("0.0.0.0/0", PRIVATE_RANGES),
        [HTTPS_PORT],
        "Google APIs (GCS, Monitoring, Artifact Registry) and Hugging Face: HTTPS outside the private ranges",
    )


def tpu_runtime() -> tuple[Flow, ...]:
    runtime = Hosts("the TPU runtime on the node")
    return egress(runtime, [TPU_RUNTIME_PORT], "libtpu to the node's TPU runtime: port-only")


def tpu_device_plugin_metrics() -> tuple[Flow, ...]:
    plugin = Hosts("the GKE TPU device plugin on the node (host network)")
    return egress(
        plugin, [TPU_DEVICE_PLUGIN_METRICS_PORT], "Ray's dashboard agent reads the node's TPU metrics: port-only"
    )


def workload_egress(tpu: bool) -> tuple[Flow, ...]:
    """What every workload pod calls: DNS, the metadata server, HTTPS outside the cluster; TPU pods, their runtime."""
    return (*dns(), *metadata_server(), *google_apis(), *(tpu_runtime() if tpu else ()))


def scrape(ports: Sequence[int]) -> tuple[Flow, ...]:
    return ingress(MANAGED_PROMETHEUS, ports, "Managed Prometheus scrapes the metrics")


def api_server_calls(port: int) -> tuple[Flow, ...]:
    """An aggregated API or webhook served on `port`: through konnectivity, or (clusters without it) straight
    from the control plane, whose address is not known when planning (a public endpoint's address is
    assigned at creation): that second flow is port-only."""
    return (
        *ingress(KONNECTIVITY_AGENT, [port], "the API server, through konnectivity-agent"),
        *ingress(ANY, [port], "the API server from the control plane (clusters without konnectivity): port-only"),
    )


def api_endpoint() -> tuple[Flow, ...]:
    """The Kubernetes API: `kubernetes.default` leads to the control plane's public or private address, which
    Cilium may give its kube-apiserver identity rather than match by `ipBlock`: port-only."""
    return egress(ANY, [HTTPS_PORT], "the cluster's API endpoint (public or private) and Google APIs: port-only")


def load_balancer_clients(port: int, source_ranges: Sequence[str], service: str) -> tuple[Flow, ...]:
    """Clients of a LoadBalancer Service with `externalTrafficPolicy: Local`: the client's address reaches the
    pod (no second hop through another node, whose address no `ipBlock` would match), so the ingress names
    the Service's source ranges, or every outside address when it has none."""
    ranges = list(source_ranges) or ["0.0.0.0/0"]
    return tuple(f for cidr in ranges for f in ingress(External(cidr), [port], f"clients of Service {service}"))


def smoke_test_clients(namespace: str, ports: Sequence[int]) -> tuple[Flow, ...]:
    return ingress(Pods(namespace, dict(SMOKE_TEST_LABELS)), ports, "the smoke-test Job checks the server")


def smoke_test_group(
    namespace: str, server_labels: dict[str, str], ports: Sequence[int], more: Sequence[Flow] = ()
) -> Group:
    """The contract of a smoke-test pod that calls a server's API (and its metrics port, when it has one); `more`:
    what else the workload's smoke test calls (behind a gateway: the gateway's address and its picker)."""
    server = Pods(namespace, dict(server_labels))
    return Group(
        "smoke-test",
        namespace,
        dict(SMOKE_TEST_LABELS),
        unique((*dns(), *egress(server, ports, "one request and the metrics, through the Service"), *more)),
    )
