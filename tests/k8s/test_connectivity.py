"""The connectivity contract (k8s.connectivity, k8s.platform_flows) and the policies generated from it
(k8s.network_policy), on their own: each peer kind becomes the rule the contract format says, the
platform's ports and addresses are pinned, and the annotation is the format the checker reads."""

from __future__ import annotations

import json

import pytest

from tpu_stacks.k8s import platform_flows as platform
from tpu_stacks.k8s.connectivity import ANNOTATION, ANY, External, Flow, Group, Hosts, Pods, egress, ingress, unique
from tpu_stacks.k8s.network_policy import DENY_ALL_NAME, deny_all_ingress, peer_args, policy_spec, rules
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS


def _ports(ports):
    return None if ports is None else [(p.port, p.protocol) for p in ports]


def test_the_annotation_is_compact_sorted_json_in_the_stated_order():
    group = Group(
        "g",
        "ns",
        {"app": "x"},
        (
            *ingress(Pods("ns", {"app": "y"}), [80], "y calls x"),
            *egress(External("0.0.0.0/0", ("10.0.0.0/8",)), [443], "out"),
            *egress(Hosts("the node"), [8353], "runtime", "TCP"),
            *ingress(ANY, [None], "all", "UDP"),
        ),
    )
    text = group.annotation()
    assert " " not in text.replace("y calls x", "").replace("the node", "")  # compact separators
    assert json.loads(text) == [
        {
            "direction": "ingress",
            "peer": {"kind": "pods", "namespace": "ns", "labels": {"app": "y"}},
            "protocol": "TCP",
            "port": 80,
            "why": "y calls x",
        },
        {
            "direction": "egress",
            "peer": {"kind": "external", "cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]},
            "protocol": "TCP",
            "port": 443,
            "why": "out",
        },
        {
            "direction": "egress",
            "peer": {"kind": "hosts", "what": "the node"},
            "protocol": "TCP",
            "port": 8353,
            "why": "runtime",
        },
        {"direction": "ingress", "peer": {"kind": "any"}, "protocol": "UDP", "port": None, "why": "all"},
    ]
    assert text.startswith('[{"direction":"ingress","peer":{"kind":"pods","labels":{"app":"y"},"namespace":"ns"}')
    assert ANNOTATION == "tpu-stacks.dev/flows"


@pytest.mark.parametrize("cidr", ["10.0.0.1/8", "203.0.113.7/24", "2001:db8::1/32"])
def test_an_external_range_with_host_bits_is_refused(cidr):
    with pytest.raises(ValueError):
        External(cidr)
    with pytest.raises(ValueError):
        External("0.0.0.0/0", (cidr,))


def test_an_external_range_with_its_network_address_passes():
    assert External("203.0.113.0/24", ("203.0.113.128/25",)).json()["except"] == ["203.0.113.128/25"]


def test_unique_keeps_the_first_of_equal_flows_and_tells_protocol_port_direction_and_peer_apart():
    a = Flow("ingress", Pods("ns", {"a": "1"}), "TCP", 80, "first")
    same = Flow("ingress", Pods("ns", {"a": "1"}), "TCP", 80, "second")
    others = [
        Flow("egress", Pods("ns", {"a": "1"}), "TCP", 80, "x"),
        Flow("ingress", Pods("ns", {"a": "2"}), "TCP", 80, "x"),
        Flow("ingress", Pods("ns", {"a": "1"}), "UDP", 80, "x"),
        Flow("ingress", Pods("ns", {"a": "1"}), "TCP", 81, "x"),
    ]
    assert unique([a, same, *others]) == (a, *others)


def test_group_of_splits_the_directions():
    group = Group("g", "ns", {}, (*ingress(ANY, [1], "i"), *egress(ANY, [2], "e")))
    assert [f.port for f in group.of("ingress")] == [1] and [f.port for f in group.of("egress")] == [2]


# --- generation: each peer kind becomes the rule the format promises -------------------------------


def test_pods_of_the_own_namespace_are_a_pod_selector_only():
    args = peer_args(Pods("ns", {"app": "x"}), "ns")
    assert args.namespace_selector is None and args.pod_selector.match_labels == {"app": "x"} and args.ip_block is None


def test_pods_of_another_namespace_are_selected_by_its_name_label():
    args = peer_args(Pods("gmp-system", {"app.kubernetes.io/name": "collector"}), "ns")
    assert args.namespace_selector.match_labels == {"kubernetes.io/metadata.name": "gmp-system"}
    assert args.pod_selector.match_labels == {"app.kubernetes.io/name": "collector"}


def test_pods_of_every_namespace_are_an_empty_namespace_selector():
    args = peer_args(Pods("*", {}), "ns")
    assert args.namespace_selector.match_labels is None and args.pod_selector.match_labels == {}


def test_external_addresses_are_an_ip_block():
    args = peer_args(External("0.0.0.0/0", ("10.0.0.0/8",)), "ns")
    assert (args.ip_block.cidr, args.ip_block.except_) == ("0.0.0.0/0", ["10.0.0.0/8"])
    assert peer_args(External("203.0.113.0/24"), "ns").ip_block.except_ is None


def test_hosts_and_any_become_one_port_only_rule_with_each_port_once():
    flows = (
        *egress(Hosts("node-local-dns"), [53], "dns", "UDP"),
        *egress(Hosts("node-local-dns"), [53], "dns", "TCP"),
        *egress(ANY, [443], "api"),
        *egress(Hosts("the TPU runtime"), [8353], "tpu"),
        *egress(ANY, [443], "again"),
    )
    ((peers, ports),) = rules(flows, "ns")
    assert peers is None  # no peer: every address, said plainly
    assert _ports(ports) == [(53, "UDP"), (53, "TCP"), (443, "TCP"), (8353, "TCP")]


def test_one_rule_per_peer_in_the_stated_order_and_every_port_wins():
    x, y = Pods("ns", {"app": "x"}), Pods("ns", {"app": "y"})
    flows = (*ingress(x, [80, 81], "x"), *ingress(y, [None], "y"), *ingress(y, [90], "y"), *ingress(ANY, [7], "a"))
    (x_peers, x_ports), (y_peers, y_ports), (any_peers, any_ports) = rules(flows, "ns")
    assert x_peers[0].pod_selector.match_labels == {"app": "x"} and _ports(x_ports) == [(80, "TCP"), (81, "TCP")]
    # every TCP port (an entry without a port), which makes the single port 90 redundant; never every protocol
    assert y_peers[0].pod_selector.match_labels == {"app": "y"} and _ports(y_ports) == [(None, "TCP")]
    assert any_peers is None and _ports(any_ports) == [(7, "TCP")]


def test_a_policy_restricts_egress_unless_the_group_leaves_it_open():
    flows = (*ingress(Pods("ns", {"a": "b"}), [80], "in"), *platform.dns())
    closed = policy_spec(Group("g", "ns", {"app": "x"}, flows))
    assert closed.policy_types == ["Ingress", "Egress"] and closed.pod_selector.match_labels == {"app": "x"}
    assert len(closed.ingress) == 1 and len(closed.egress) == 1
    open_ = policy_spec(Group("g", "ns", {"app": "x"}, flows, restrict_egress=False))
    assert open_.policy_types == ["Ingress"] and open_.egress is None
    nothing = policy_spec(Group("g", "ns", {"app": "x"}))
    assert nothing.ingress is None and nothing.egress == []  # egress restricted to nothing at all


def test_the_namespace_denies_all_ingress():
    spec = deny_all_ingress()
    assert spec.policy_types == ["Ingress"] and spec.pod_selector.match_labels is None and spec.ingress is None
    assert DENY_ALL_NAME == "default-deny-ingress"


# --- the platform's flows: ports and addresses pinned ----------------------------------------------


def test_dns_is_port_53_udp_and_tcp_to_hosts():
    flows = platform.dns()
    assert [(f.direction, f.protocol, f.port) for f in flows] == [("egress", "UDP", 53), ("egress", "TCP", 53)]
    assert all(isinstance(f.peer, Hosts) for f in flows)  # kube-dns, node-local-dns, Cloud DNS: port-only
    assert "169.254.20.10" in flows[0].peer.what and "169.254.169.254" in flows[0].peer.what


def test_the_metadata_server_flows_name_the_documented_addresses_and_ports():
    assert [(f.peer.json(), f.port, f.protocol) for f in platform.metadata_server()] == [
        ({"kind": "external", "cidr": "169.254.169.254/32", "except": []}, 80, "TCP"),
        ({"kind": "external", "cidr": "169.254.169.252/32", "except": []}, 988, "TCP"),
    ]


def test_https_outside_the_private_ranges():
    (flow,) = platform.google_apis()
    assert (flow.direction, flow.port, flow.protocol) == ("egress", 443, "TCP")
    assert flow.peer.json() == {
        "kind": "external",
        "cidr": "0.0.0.0/0",
        "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
    }


def test_tpu_pods_reach_their_node_runtime_on_8353_and_others_do_not_ask():
    (flow,) = platform.tpu_runtime()
    assert (flow.direction, flow.port, flow.protocol, type(flow.peer)) == ("egress", 8353, "TCP", Hosts)
    assert platform.workload_egress(tpu=True)[-1] == flow
    assert flow not in platform.workload_egress(tpu=False)
    assert platform.workload_egress(tpu=False) == (
        *platform.dns(),
        *platform.metadata_server(),
        *platform.google_apis(),
    )


def test_managed_prometheus_scrapes_from_its_collectors():
    (flow,) = platform.scrape([8000])
    assert flow.peer == Pods("gmp-system", {"app.kubernetes.io/name": "collector"})
    assert (flow.direction, flow.port) == ("ingress", 8000)


def test_the_api_server_comes_through_konnectivity_or_port_only_from_the_control_plane():
    konnectivity, control_plane = platform.api_server_calls(6443)
    assert konnectivity.peer == Pods("kube-system", {"k8s-app": "konnectivity-agent"}) and konnectivity.port == 6443
    assert control_plane.peer == ANY and control_plane.port == 6443 and control_plane.direction == "ingress"
    (endpoint,) = platform.api_endpoint()
    assert (endpoint.direction, endpoint.peer, endpoint.port) == ("egress", ANY, 443)


def test_load_balancer_clients_are_the_source_ranges_or_every_outside_address():
    named = platform.load_balancer_clients(8000, ["203.0.113.0/24", "198.51.100.0/24"], "svc")
    assert [(f.peer.cidr, f.port, f.direction) for f in named] == [
        ("203.0.113.0/24", 8000, "ingress"),
        ("198.51.100.0/24", 8000, "ingress"),
    ]
    (every,) = platform.load_balancer_clients(8000, [], "svc")
    assert every.peer == External("0.0.0.0/0") and "svc" in every.why


def test_the_smoke_test_group_calls_the_server_and_its_metrics_port():
    group = platform.smoke_test_group("vllm", {"app": "vllm"}, [8000, 9100])
    assert group.labels == SMOKE_TEST_LABELS == {"app.kubernetes.io/component": "smoke-test"}
    assert (group.name, group.namespace, group.restrict_egress) == ("smoke-test", "vllm", True)
    assert group.flows[:2] == platform.dns()
    assert [(f.peer, f.port) for f in group.of("egress")[2:]] == [
        (Pods("vllm", {"app": "vllm"}), 8000),
        (Pods("vllm", {"app": "vllm"}), 9100),
    ]
    assert group.of("ingress") == ()
    same_port = platform.smoke_test_group("vllm", {"app": "vllm"}, [8000, 8000])
    assert [f.port for f in same_port.of("egress")[2:]] == [8000]
    assert [f.port for f in platform.smoke_test_group("s", {"a": "b"}, [8888]).of("egress")[2:]] == [8888]
    (client,) = platform.smoke_test_clients("vllm", [8000])
    assert client.peer == Pods("vllm", SMOKE_TEST_LABELS) and (client.direction, client.port) == ("ingress", 8000)


def test_declared_policies_carry_the_contract_and_refuse_a_group_of_another_namespace():
    import pulumi

    from tests.mocks import capture
    from tpu_stacks.k8s.network_policy import declare_network_policies

    group = Group("g", "ns", {"app": "x"}, (*ingress(Pods("ns", {"app": "y"}), [80], "y calls x"), *platform.dns()))
    declared = []

    def build():
        declared.extend(declare_network_policies("w", "ns", [group], pulumi.ResourceOptions()))

    mocks = capture(build)
    assert len(declared) == 2
    deny, own = sorted(mocks.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy"), key=lambda r: r.name)
    assert (deny.name, deny.inputs["metadata"]["name"], own.name) == (
        "w-default-deny-ingress",
        DENY_ALL_NAME,
        "w-netpol-g",
    )
    assert "annotations" not in deny.inputs["metadata"]
    assert own.inputs["metadata"]["annotations"] == {ANNOTATION: group.annotation()}
    assert own.inputs["metadata"]["namespace"] == "ns" and own.inputs["spec"]["podSelector"] == {
        "matchLabels": {"app": "x"}
    }
    assert (
        deny.inputs["metadata"]["labels"]
        == own.inputs["metadata"]["labels"]
        == {"app.kubernetes.io/managed-by": "tpu-stacks"}
    )

    def mismatched():
        with pytest.raises(ValueError, match="group g is of namespace ns, not other"):
            declare_network_policies("w", "other", [group], pulumi.ResourceOptions())

    assert capture(mismatched).resources == []  # refused before anything is declared
