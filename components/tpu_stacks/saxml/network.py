"""Saxml's connectivity contract: who talks to whom.

- Model servers register with the admin server (ADMIN_PORT) and serve RPCs (MODEL_PORT) to the admin
  server (model assignment) and to Sax clients, here the HTTP server, which asks the admin server
  where a model is served, then calls the model server directly.
- The HTTP server serves clients on HTTP_PORT: a load balancer's (`externalTrafficPolicy: Local`, so
  the client's address arrives), or every pod's when exposure is `cluster`; always the publisher Job,
  which calls /publish through it from inside the cluster, and the namespace's smoke-test pods.
- Multi-host model servers run on the host network: no NetworkPolicy selects them, and their traffic
  carries their node's address, which on GKE Dataplane V2 no `ipBlock` and no selector matches. The
  admin and HTTP servers therefore exchange ADMIN_PORT and MODEL_PORT with them through port-only
  rules: those ports are open to every peer, which docs/security.md says.
- Single-host model servers are ordinary pods: selectors, plus the TPU runtime on their node.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_stacks.k8s.connectivity import Flow, Group, Hosts, Peer, Pods, egress, ingress, unique
from tpu_stacks.k8s.platform_flows import load_balancer_clients, smoke_test_clients, workload_egress
from tpu_stacks.saxml.jobset import POD_LABELS as MODEL_LABELS
from tpu_stacks.saxml.plan import SaxmlPlan
from tpu_stacks.saxml.publisher import POD_LABELS as PUBLISHER_LABELS
from tpu_stacks.saxml.servers import ADMIN_NAME, HTTP_NAME, SERVICE_NAME, pod_labels
from tpu_stacks.saxml.spec import ADMIN_PORT, HTTP_PORT, MODEL_PORT, MULTI_HOST_PORT


def _clients(plan: SaxmlPlan, smoke_ports: Sequence[int]) -> tuple[Flow, ...]:
    spec = plan.spec
    namespace = spec.namespace
    if spec.exposure == "cluster":
        outside = ingress(Pods("*", {}), [HTTP_PORT], f"clients through the ClusterIP Service {SERVICE_NAME}")
    else:
        outside = load_balancer_clients(HTTP_PORT, spec.source_ranges, SERVICE_NAME)
    publisher = ingress(Pods(namespace, dict(PUBLISHER_LABELS)), [HTTP_PORT], "the publisher calls /publish")
    return (*outside, *publisher, *smoke_test_clients(namespace, smoke_ports))


def network(plan: SaxmlPlan, smoke_ports: Sequence[int] = ()) -> tuple[Group, ...]:
    """`smoke_ports`: the ports the stack's smoke-test Job calls (`SmokeTest.ports`); none when it is off."""
    namespace = plan.spec.namespace
    admin, http = Pods(namespace, pod_labels(ADMIN_NAME)), Pods(namespace, pod_labels(HTTP_NAME))
    models: Peer = Hosts("Saxml model servers (host network)") if plan.host_network else Pods(namespace, MODEL_LABELS)
    groups = [
        Group(
            "sax-admin-server",
            namespace,
            pod_labels(ADMIN_NAME),
            unique(
                (
                    *ingress(models, [ADMIN_PORT], "model servers register"),
                    *ingress(http, [ADMIN_PORT], "the HTTP server looks models up"),
                    *workload_egress(tpu=False),
                    *egress(models, [MODEL_PORT], "model assignment RPCs"),
                )
            ),
        ),
        Group(
            "sax-http",
            namespace,
            pod_labels(HTTP_NAME),
            unique(
                (
                    *_clients(plan, smoke_ports),
                    *workload_egress(tpu=False),
                    *egress(admin, [ADMIN_PORT], "model locations"),
                    *egress(models, [MODEL_PORT], "inference RPCs"),
                )
            ),
        ),
        Group(
            "sax-publisher",
            namespace,
            dict(PUBLISHER_LABELS),
            (*workload_egress(tpu=False), *egress(http, [HTTP_PORT], "/publish through the HTTP server")),
        ),
    ]
    if not plan.host_network:
        hosts_of_slice = "the hosts of one slice"
        groups.append(
            Group(
                "sax-model-server",
                namespace,
                dict(MODEL_LABELS),
                (
                    *ingress(admin, [MODEL_PORT], "model assignment RPCs from the admin server"),
                    *ingress(http, [MODEL_PORT], "inference RPCs from the HTTP server"),
                    *ingress(models, [MULTI_HOST_PORT], hosts_of_slice),
                    *workload_egress(tpu=True),
                    *egress(admin, [ADMIN_PORT], "registration with the admin server"),
                    *egress(models, [MULTI_HOST_PORT], hosts_of_slice),
                ),
            )
        )
    return tuple(groups)
