"""Issue 24's connectivity findings, on every shipped stack's rendered manifests, read as YAML (not through
the code that built them): each found flow is served by a rule that Dataplane V2 (Cilium) honours, and
every rule of a policy is one its `tpu-stacks.dev/flows` contract states, and the other way round.

On Cilium an `ipBlock` matches neither pods nor nodes (cilium Documentation/security/policy/language.rst),
so a flow with a node or a host-network pod must be a port-only rule (no `from`/`to`)."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pytest

from scripts import security_flows
from tests.shipped import shipped
from tests.stacks.test_security import WORKLOAD_STACKS, objects, pods, policies, selects

PRIVATE = [ipaddress.ip_network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
SMOKE = {"app.kubernetes.io/component": "smoke-test"}


def policy(stack: str, name: str) -> dict[str, Any]:
    (found,) = [p for p in policies(stack) if p["metadata"]["name"] == name]
    return found


def port_only(spec: dict[str, Any], direction: str) -> set[tuple[int, str]]:
    """(port, protocol) that a rule without peers opens in `direction` ("ingress"/"egress")."""
    side = "from" if direction == "ingress" else "to"
    return {(p["port"], p["protocol"]) for r in spec.get(direction, []) if side not in r for p in r.get("ports", [])}


def from_selector(spec: dict[str, Any], direction: str, labels: dict[str, str]) -> set[int]:
    side = "from" if direction == "ingress" else "to"
    return {
        p["port"]
        for r in spec.get(direction, [])
        for peer in r.get(side, [])
        if peer.get("podSelector", {}).get("matchLabels") == labels and "namespaceSelector" not in peer
        for p in r.get("ports", [])
    }


def test_1_saxml_host_network_model_servers_reach_admin_and_http_through_port_only_rules():
    assert any(t["spec"].get("hostNetwork") for _, _, t in pods("saxml"))  # the shipped saxml is multi-host
    admin, http = policy("saxml", "sax-admin-server")["spec"], policy("saxml", "sax-http")["spec"]
    assert (10000, "TCP") in port_only(admin, "ingress")  # registration from node addresses
    assert (10001, "TCP") in port_only(admin, "egress")  # model assignment to node addresses
    assert (10001, "TCP") in port_only(http, "egress")  # inference RPCs to node addresses
    assert from_selector(admin, "ingress", {"app": "sax-http"}) == {10000}


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_no_ip_block_pretends_to_match_pods_or_nodes(stack):
    """A private range in an ipBlock (the old model's way of reaching nodes and pods) matches nothing of
    the cluster on Cilium; only outside ranges (minus the private ones) and link-local addresses remain.
    Two kinds of private range name no pods or nodes: the proxy-only subnet the stack itself declares, where a
    regional load balancer's Envoy proxies connect from (https://cloud.google.com/load-balancing/docs/proxy-only-subnets),
    and a LoadBalancer Service's source ranges, its clients' (VMs of the VPC: Cilium leaves out only the cluster's
    own pods and nodes, which the load balancer's clients are not)."""
    resources = shipped(stack).resources
    proxies = {
        ipaddress.ip_network(r.inputs["ipCidrRange"])
        for r in resources
        if r.type == "gcp:compute/subnetwork:Subnetwork" and r.inputs.get("purpose") == "REGIONAL_MANAGED_PROXY"
    }
    proxies |= {
        ipaddress.ip_network(cidr)
        for r in resources
        if r.type == "kubernetes:core/v1:Service" and (r.inputs.get("spec") or {}).get("type") == "LoadBalancer"
        for cidr in (r.inputs["spec"].get("loadBalancerSourceRanges") or [])
    }
    for found in policies(stack):
        spec = found["spec"]
        for rule in (*spec.get("ingress", []), *spec.get("egress", [])):
            for peer in (*rule.get("from", []), *rule.get("to", [])):
                if "ipBlock" in peer:
                    block = ipaddress.ip_network(peer["ipBlock"]["cidr"])
                    if block in proxies:
                        continue
                    assert not any(block.subnet_of(p) for p in PRIVATE), (stack, found["metadata"]["name"], block)


def test_2_the_api_server_reaches_the_metrics_adapter_and_the_adapter_reaches_the_api():
    spec = policy("vllm", "custom-metrics-adapter")["spec"]
    konnectivity = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "konnectivity-agent"}},
    }
    assert any(
        konnectivity in r.get("from", []) and {"port": 6443, "protocol": "TCP"} in r["ports"] for r in spec["ingress"]
    )
    assert (6443, "TCP") in port_only(spec, "ingress")  # clusters without konnectivity: the control plane
    assert (443, "TCP") in port_only(spec, "egress")  # the API endpoint, public or private


def test_3_the_saxml_publisher_reaches_sax_http():
    (publisher,) = [t for owner, _, t in pods("saxml") if owner == "sax-publisher"]
    labels = publisher["metadata"]["labels"]
    http = policy("saxml", "sax-http")["spec"]
    rules = [
        r
        for r in http["ingress"]
        if any("podSelector" in p and selects(p["podSelector"], labels) for p in r.get("from", []))
    ]
    assert rules and all(r["ports"] == [{"port": 8888, "protocol": "TCP"}] for r in rules)
    own = policy("saxml", "sax-publisher")["spec"]
    assert from_selector(own, "egress", {"app": "sax-http"}) == {8888}


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_4_load_balancers_keep_the_client_address(stack):
    for service in (o for o in objects(stack) if o["kind"] == "Service"):
        if service["spec"].get("type") == "LoadBalancer":
            assert service["spec"]["externalTrafficPolicy"] == "Local", (stack, service["metadata"]["name"])


def _tpu(template: dict[str, Any]) -> bool:
    return any("google.com/tpu" in (c.get("resources", {}).get("limits") or {}) for c in template["spec"]["containers"])


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_5_tpu_pods_reach_the_tpu_runtime_on_their_node(stack):
    found = [
        (owner, template)
        for owner, namespace, template in pods(stack)
        if _tpu(template) and not template["spec"].get("hostNetwork")
    ]
    for owner, template in found:
        (own,) = [
            p
            for p in policies(stack)
            if p["spec"]["podSelector"] and selects(p["spec"]["podSelector"], template["metadata"]["labels"])
        ]
        assert (8353, "TCP") in port_only(own["spec"], "egress"), (stack, owner)
    assert found or stack.startswith("saxml"), stack  # saxml's TPU servers run on the host network


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_6_dns_is_allowed_whoever_answers_it(stack):
    for found in policies(stack):
        if "Egress" in found["spec"]["policyTypes"]:
            assert {(53, "UDP"), (53, "TCP")} <= port_only(found["spec"], "egress"), found["metadata"]["name"]


@pytest.mark.parametrize(
    "stack,name,ports",
    [
        ("vllm", "vllm-server", {8000}),
        ("saxml", "sax-http", {8888}),
        ("jetstream-gemma", "jetstream-server", {8000, 9090}),
    ],
)
def test_servers_accept_the_smoke_test_pods_on_their_api_and_metrics_ports(stack, name, ports):
    assert from_selector(policy(stack, name)["spec"], "ingress", SMOKE) == ports


# --- every rule is a stated flow, every stated flow a rule ------------------------------------------


def _rule_peer(peer: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A rule's peer written as the contract writes it."""
    if "ipBlock" in peer:
        return {"kind": "external", "cidr": peer["ipBlock"]["cidr"], "except": peer["ipBlock"].get("except", [])}
    selector = peer.get("namespaceSelector")
    if selector is None:
        where = namespace
    else:
        where = (selector.get("matchLabels") or {}).get("kubernetes.io/metadata.name", "*")
    return {"kind": "pods", "namespace": where, "labels": peer["podSelector"].get("matchLabels") or {}}


def _opened(spec: dict[str, Any], namespace: str) -> set[tuple[str, str, str, Any]]:
    """(direction, peer, protocol, port) each rule opens; a port-only rule's peer is 'open'."""
    opened = set()
    for direction, side in (("ingress", "from"), ("egress", "to")):
        for rule in spec.get(direction, []):
            peers = [json.dumps(_rule_peer(p, namespace), sort_keys=True) for p in rule.get(side, [])] or ["open"]
            # A rule without ports opens every protocol; an entry without a port, every port of its protocol.
            every = [(proto, None) for proto in ("TCP", "UDP", "SCTP")]
            ports = [(p.get("protocol", "TCP"), p.get("port")) for p in rule.get("ports", [])] or every
            opened |= {(direction, peer, proto, port) for peer in peers for proto, port in ports}
    return opened


def _stated(flows: list[dict[str, Any]]) -> set[tuple[str, str, str, Any]]:
    stated = set()
    for flow in flows:
        peer = flow["peer"]
        key = "open" if peer["kind"] in ("hosts", "any") else json.dumps(peer, sort_keys=True)
        stated.add((flow["direction"], key, flow["protocol"], flow["port"]))
    return stated


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_each_policy_opens_exactly_the_flows_its_contract_states(stack):
    for found in policies(stack):
        meta = found["metadata"]
        if meta["name"] == "default-deny-ingress":
            assert "annotations" not in meta
            continue
        flows = json.loads(meta["annotations"]["tpu-stacks.dev/flows"])
        assert {"direction", "peer", "protocol", "port", "why"} == set().union(*(f.keys() for f in flows))
        stated = _stated(flows)
        if "Egress" not in found["spec"]["policyTypes"]:
            stated = {s for s in stated if s[0] == "ingress"}
        assert _opened(found["spec"], meta["namespace"]) == stated, (stack, meta["name"])


def test_docs_security_shows_exactly_the_shipped_contracts():
    """docs/security.md's flow tables are the annotations of the tutorial stacks' policies
    (regenerate with `venv/bin/python scripts/security_flows.py`)."""
    text = security_flows.DOC.read_text()
    expected = security_flows.replace_section(
        text, security_flows.section({s: policies(s) for s in security_flows.STACKS})
    )
    assert text == expected, "docs/security.md is stale: run venv/bin/python scripts/security_flows.py"


def test_the_docs_tables_change_when_a_contract_does():
    stack = {"vllm": policies("vllm")}
    rendered = security_flows.section(stack)
    assert "| `vllm/vllm-server` | egress | the TPU runtime on the node [port-only] | 8353/TCP |" in rendered
    changed = json.loads(json.dumps(stack))
    server = next(p for p in changed["vllm"] if p["metadata"]["name"] == "vllm-server")
    flows = json.loads(server["metadata"]["annotations"]["tpu-stacks.dev/flows"])
    server["metadata"]["annotations"]["tpu-stacks.dev/flows"] = json.dumps(flows[:-1])
    assert "8353/TCP" not in security_flows.section(changed)
