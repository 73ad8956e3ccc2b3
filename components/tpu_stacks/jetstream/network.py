"""JetStream's connectivity contract.

- The HTTP gateway (HTTP_PORT) behind a ClusterIP Service: from every pod of the cluster (and the
  namespace's smoke-test pods, on the metrics port too); `kubectl port-forward` needs no allow.
- Managed Prometheus scrapes the engine's metrics port when it serves one.
- The engine's gRPC port is reached over the pod's loopback only.
- The converter Job accepts nothing; it downloads (Hugging Face, GCS) and writes the checkpoint.
- Egress: DNS, the metadata server, HTTPS outside the cluster; the servers reach the TPU runtime on the node.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.jetstream.converter import converter_labels
from tpu_stacks.jetstream.plan import JetStreamPlan
from tpu_stacks.jetstream.pod import exports_metrics
from tpu_stacks.jetstream.spec import HTTP_PORT, METRICS_PORT
from tpu_stacks.k8s.connectivity import Group, Pods, ingress, unique
from tpu_stacks.k8s.platform_flows import scrape, smoke_test_clients, workload_egress

SERVICE = "jetstream-svc"


def network(plan: JetStreamPlan, labels: dict[str, str], smoke_ports: Sequence[int] = ()) -> tuple[Group, ...]:
    """`smoke_ports`: the ports the stack's smoke-test Job calls (`SmokeTest.ports`); none when it is off."""
    namespace = plan.spec.namespace
    metrics = [METRICS_PORT] if exports_metrics(plan) else []
    server = (
        *ingress(Pods("*", {}), [HTTP_PORT], "the HTTP gateway through the ClusterIP Service"),
        *smoke_test_clients(namespace, smoke_ports),
        *scrape(metrics),
        *workload_egress(tpu=True),
    )
    groups = [Group("jetstream-server", namespace, dict(labels), unique(server))]
    if plan.converter_flow:
        groups.append(Group("jetstream-converter", namespace, converter_labels(plan), workload_egress(tpu=False)))
    return tuple(groups)
