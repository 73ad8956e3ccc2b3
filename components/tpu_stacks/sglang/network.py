"""SGLang-JAX's connectivity contract: who reaches the servers, and what they call.

- The OpenAI-compatible API on PORT: behind a LoadBalancer Service (`externalTrafficPolicy: Local`, so the client's
  address reaches the pod) from the Service's source ranges; from every pod of the cluster when exposure is
  `cluster` (ClusterIP); always from the namespace's smoke-test pods.
- No scrape: the pinned SGLang-JAX serves no /metrics (ledger: sglang.metrics.none), so Managed Prometheus has
  nothing to reach on the pod.
- Egress: DNS, the metadata server (Workload Identity for the weights bucket), HTTPS outside the cluster (Hugging
  Face, GCS), the TPU runtime on the node. The server's own processes (tokenizer, scheduler, detokenizer) talk over
  ZMQ inside the pod only (sgl_jax/srt/entrypoints/http_server.py, "IPC ... via the ZMQ library").
`kubectl port-forward` needs no allow (it enters the pod's network namespace through the kubelet).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.k8s.connectivity import Group, Pods, ingress, unique
from tpu_stacks.k8s.platform_flows import load_balancer_clients, smoke_test_clients, workload_egress
from tpu_stacks.sglang.plan import SglangPlan
from tpu_stacks.sglang.spec import PORT

SERVICE = "sglang-service"


def network(plan: SglangPlan, labels: dict[str, str], smoke_ports: Sequence[int] = ()) -> tuple[Group, ...]:
    """`smoke_ports`: the ports the stack's smoke-test Job calls (`SmokeTest.ports`); none when it is off."""
    spec = plan.spec
    if spec.exposure == "cluster":
        clients = ingress(Pods("*", {}), [PORT], f"the API through the ClusterIP Service {SERVICE}")
    else:
        clients = load_balancer_clients(PORT, spec.source_ranges, SERVICE)
    flows = (*clients, *smoke_test_clients(spec.namespace, smoke_ports), *workload_egress(tpu=True))
    return (Group("sglang-server", spec.namespace, dict(labels), unique(flows)),)
