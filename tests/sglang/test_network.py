"""SGLang-JAX's connectivity contract (sglang/network.py): the API's clients, no scrape, the egress a TPU server
needs."""

from __future__ import annotations

from tests.sglang.test_plan import plan
from tpu_stacks.k8s.connectivity import External, Pods
from tpu_stacks.k8s.platform_flows import workload_egress
from tpu_stacks.sglang.network import network
from tpu_stacks.sglang.spec import PORT

LABELS = {"app": "sglang-jax"}


def ingress(group):
    return [f for f in group.flows if f.direction == "ingress"]


def test_the_load_balancers_clients_and_the_smoke_test_reach_the_api_port_only():
    (server,) = network(plan(), LABELS, smoke_ports=(PORT,))
    assert server.name == "sglang-server" and server.namespace == "sglang" and server.labels == LABELS
    flows = ingress(server)
    assert {f.port for f in flows} == {PORT}
    assert any(isinstance(f.peer, External) and f.peer.cidr == "10.128.0.0/20" for f in flows)
    assert any(isinstance(f.peer, Pods) and f.peer.namespace == "sglang" for f in flows)  # the smoke test


def test_no_scrape_flow_since_the_engine_exports_no_metrics():
    (server,) = network(plan(), LABELS)
    assert all("scrape" not in f.why.lower() and "prometheus" not in f.why.lower() for f in server.flows)
    assert len(ingress(server)) == 1  # the load balancer's clients only, without a smoke test


def test_exposure_cluster_admits_every_pod_of_the_cluster():
    (server,) = network(plan(exposure="cluster", source_ranges=[]), LABELS)
    (flow,) = ingress(server)
    assert isinstance(flow.peer, Pods) and flow.peer.namespace == "*" and flow.port == PORT


def test_the_egress_is_a_tpu_servers():
    (server,) = network(plan(), LABELS)
    assert set(workload_egress(tpu=True)) <= set(server.flows) and server.restrict_egress
