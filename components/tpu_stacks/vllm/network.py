"""vLLM's connectivity contract: who reaches the servers, and what they call.

- The OpenAI-compatible API on PORT: behind a LoadBalancer Service (`externalTrafficPolicy: Local`, so
  the client's address reaches the pod) from the Service's source ranges; from every pod of the cluster
  when exposure is `cluster` (ClusterIP); always from the namespace's smoke-test pods.
- Managed Prometheus scrapes /metrics on the same port.
- Egress: DNS, the metadata server, HTTPS outside the cluster (Hugging Face, GCS), the TPU runtime on the node.
`kubectl port-forward` needs no allow (it enters the pod's network namespace through the kubelet).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.k8s.connectivity import Group, Pods, ingress, unique
from tpu_stacks.k8s.platform_flows import load_balancer_clients, scrape, smoke_test_clients, workload_egress
from tpu_stacks.vllm.gateway_network import picker_group, server_flows
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.spec import PORT

SERVICE = "vllm-service"


def network(plan: VllmPlan, labels: dict[str, str], smoke_ports: Sequence[int] = ()) -> tuple[Group, ...]:
    """`smoke_ports`: the ports the stack's smoke-test Job calls (`SmokeTest.ports`); none when it is off."""
    spec = plan.spec
    if plan.gateway is not None:  # the Gateway is the load balancer (vllm/gateway_network.py)
        clients = server_flows(plan.gateway, PORT)
    elif spec.exposure == "cluster":
        clients = ingress(Pods("*", {}), [PORT], f"the API through the ClusterIP Service {SERVICE}")
    else:
        clients = load_balancer_clients(PORT, spec.source_ranges, SERVICE)
    flows = (*clients, *smoke_test_clients(spec.namespace, smoke_ports), *scrape([PORT]), *workload_egress(tpu=True))
    server = Group("vllm-server", spec.namespace, dict(labels), unique(flows))
    if plan.gateway is None:
        return (server,)
    return (server, picker_group(plan.gateway, labels, PORT))
