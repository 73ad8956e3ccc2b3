"""Saxml's network policies: who talks to whom (shared/reference/upstream-manifests.md §2).

- Model servers register with the admin server (ADMIN_PORT) and serve RPCs (MODEL_PORT) to the admin
  server (model assignment) and to Sax clients, here the HTTP server, which asks the admin server
  where a model is served, then calls the model server directly.
- The HTTP server serves clients on HTTP_PORT (a load balancer's, or pods' when exposure is
  `cluster`) and the publisher Job, which calls /publish through it.
- Multi-host model servers run on the host network: no NetworkPolicy selects them, and their traffic
  reaches pods from node addresses, so the admin and HTTP servers exchange ADMIN_PORT and MODEL_PORT
  with the private ranges (node addresses are not known when planning). docs/security.md says so.
"""

from __future__ import annotations

from tpu_stacks.k8s.network_policy import ANY_POD, ANYWHERE, PRIVATE, Allow, Guarded, Peer, dns_and_google
from tpu_stacks.saxml.jobset import POD_LABELS as MODEL_LABELS
from tpu_stacks.saxml.plan import SaxmlPlan
from tpu_stacks.saxml.publisher import POD_LABELS as PUBLISHER_LABELS
from tpu_stacks.saxml.servers import ADMIN_NAME, HTTP_NAME, pod_labels
from tpu_stacks.saxml.spec import ADMIN_PORT, HTTP_PORT, MODEL_PORT, MULTI_HOST_PORT


def network(plan: SaxmlPlan) -> tuple[Guarded, ...]:
    admin, http = Peer(pod_labels=pod_labels(ADMIN_NAME)), Peer(pod_labels=pod_labels(HTTP_NAME))
    models = Peer(pod_labels=MODEL_LABELS)
    # Host-network model servers appear with their node's address (unknown when planning).
    model_peers = PRIVATE if plan.host_network else (models,)
    clients = (ANY_POD,) if plan.spec.exposure == "cluster" else (ANYWHERE,)
    groups = [
        Guarded(
            "sax-admin-server",
            pod_labels(ADMIN_NAME),
            ingress=(
                Allow("model servers register, the HTTP server looks models up", (*model_peers, http), (ADMIN_PORT,)),
            ),
            egress=(*dns_and_google(), Allow("model assignment RPCs", model_peers, (MODEL_PORT,))),
        ),
        Guarded(
            "sax-http",
            pod_labels(HTTP_NAME),
            ingress=(Allow("clients (Service sax-http-lb) and the publisher", clients, (HTTP_PORT,)),),
            egress=(
                *dns_and_google(),
                Allow("model locations", (admin,), (ADMIN_PORT,)),
                Allow("inference RPCs", model_peers, (MODEL_PORT,)),
            ),
        ),
        Guarded(
            "sax-publisher",
            PUBLISHER_LABELS,
            egress=(*dns_and_google(), Allow("/publish through the HTTP server", (http,), (HTTP_PORT,))),
        ),
    ]
    if not plan.host_network:
        groups.append(
            Guarded(
                "sax-model-server",
                MODEL_LABELS,
                ingress=(
                    Allow("RPCs from the admin and HTTP servers", (admin, http), (MODEL_PORT,)),
                    Allow("the hosts of one slice", (models,), (MULTI_HOST_PORT,)),
                ),
                egress=(
                    *dns_and_google(),
                    Allow("registration with the admin server", (admin,), (ADMIN_PORT,)),
                    Allow("the hosts of one slice", (models,), (MULTI_HOST_PORT,)),
                ),
            )
        )
    return tuple(groups)
