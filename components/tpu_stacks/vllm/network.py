"""vLLM's connectivity contract: who reaches the servers, and what they call.

- The OpenAI-compatible API on PORT: behind a LoadBalancer Service (`externalTrafficPolicy: Local`, so
  the client's address reaches the pod) from the Service's source ranges; from every pod of the cluster
  when exposure is `cluster` (ClusterIP); always from the namespace's smoke-test pods.
- Managed Prometheus scrapes /metrics on the same port.
- Egress: DNS, the metadata server, HTTPS outside the cluster (Hugging Face, GCS), the TPU runtime on the node.
`kubectl port-forward` needs no allow (it enters the pod's network namespace through the kubelet).

On a multi-host slice (a RayService, vllm.rayservice) the same clients reach Ray Serve's proxy on
SERVE_PORT on the head only (the Service selects the head while its proxy is healthy; a TPU host runs a
proxy only while it holds a Serve replica); the Ray pods reach each other on every port and the KubeRay
operator (GKE's add-on through konnectivity-agent, or the user's own in the namespace `cluster.kuberay` names)
reads the head's dashboard (ray/flows.py, shared with Ray Train; ledger: ray.port.dashboard) and its Serve
proxy's health; Managed Prometheus scrapes Ray's metrics port on every Ray pod (vLLM's engine metrics included);
the workers reach the TPU runtime and the TPU device plugin's metrics on their node, the head (with KubeRay's
autoscaler) the Kubernetes API. The dashboard agent (52365, ledger: ray.port.dashboard-agent) is probed by the
kubelet only. The weights download Job (vllm.weights_download) accepts nothing and calls DNS, the metadata server
(Workload Identity for the bucket) and HTTPS outside the cluster (Hugging Face, GCS).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.cluster.spec import operator_namespace
from tpu_stacks.k8s.connectivity import Flow, Group, Pods, ingress, unique
from tpu_stacks.k8s.platform_flows import (
    api_endpoint,
    load_balancer_clients,
    scrape,
    smoke_test_clients,
    tpu_device_plugin_metrics,
    workload_egress,
)
from tpu_stacks.ray.flows import operator_to_head, within_cluster
from tpu_stacks.ray.pods import ROLE_LABEL
from tpu_stacks.ray.ports import SERVE_HEAD_PORTS
from tpu_stacks.vllm.download_plan import JOB_NAME, LABELS
from tpu_stacks.vllm.gateway_network import picker_group, server_flows
from tpu_stacks.vllm.multihost_plan import SERVE_PORT
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.spec import PORT

SERVICE = "vllm-service"


def _clients(plan: VllmPlan, port: int, smoke_ports: Sequence[int]) -> tuple[Flow, ...]:
    spec = plan.spec
    if plan.gateway is not None:  # the Gateway is the load balancer (vllm/gateway_network.py)
        clients = server_flows(plan.gateway, port)
    elif plan.service_exposure == "cluster":
        clients = ingress(Pods("*", {}), [port], f"the API through the ClusterIP Service {SERVICE}")
    else:
        clients = load_balancer_clients(port, spec.source_ranges, SERVICE)
    return (*clients, *smoke_test_clients(spec.namespace, smoke_ports))


def network(plan: VllmPlan, labels: dict[str, str], smoke_ports: Sequence[int] = ()) -> tuple[Group, ...]:
    """`smoke_ports`: the ports the stack's smoke-test Job calls (`SmokeTest.ports`); none when it is off."""
    spec = plan.spec
    if plan.multi_host:
        return _ray_service(plan, labels, smoke_ports)
    flows = (*_clients(plan, PORT, smoke_ports), *scrape([PORT]), *workload_egress(tpu=True))
    server = Group("vllm-server", spec.namespace, dict(labels), unique(flows))
    if plan.gateway is None:
        return (server,)
    return (server, picker_group(plan.gateway, labels, PORT, smoke_test=bool(smoke_ports)))


def _ray_service(plan: VllmPlan, labels: dict[str, str], smoke_ports: Sequence[int]) -> tuple[Group, ...]:
    """The head and the TPU workers of the RayService (their labels: vllm.rayservice.pod_labels)."""
    spec = plan.spec
    ray = within_cluster(Pods(spec.namespace, dict(labels)))
    metrics = scrape([RAY_SERVE.scrape_port()])
    serve = (*_clients(plan, SERVE_PORT, smoke_ports), *metrics)
    autoscaler = api_endpoint() if spec.replicas.min < spec.replicas.max else ()
    operator = operator_namespace(plan.cluster.spec)
    head = (
        *ray,
        *serve,
        *operator_to_head(SERVE_HEAD_PORTS["dashboard"], "the Serve applications' status", operator),
        # KubeRay checks the head's Serve proxy itself (/-/healthz on the serving port) to label it serving
        # (KubeRay v1.7.0 rayservice_controller.go: httpProxyClientFunc(headPod.Status.PodIP, ...); ledger:
        # kuberay.head-serve-label-managed).
        *operator_to_head(SERVE_PORT, "the head's Serve proxy health", operator),
        *workload_egress(tpu=False),
        *autoscaler,
    )
    # The TPU webhook (on GKE's Ray add-on too) points Ray's dashboard agent at the node's TPU device plugin, which it
    # scrapes (ledger: ray.tpu.device-plugin-metrics, gke.ray-addon.tpu-webhook).
    worker = (*ray, *metrics, *workload_egress(tpu=True), *tpu_device_plugin_metrics())
    return (
        Group("vllm-ray-head", spec.namespace, {**labels, ROLE_LABEL: "head"}, unique(head)),
        Group("vllm-ray-worker", spec.namespace, {**labels, ROLE_LABEL: "worker"}, unique(worker)),
        Group(JOB_NAME, spec.namespace, dict(LABELS), workload_egress(tpu=False)),
    )
