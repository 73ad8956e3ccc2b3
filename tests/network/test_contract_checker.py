"""The connectivity checker on small manifests written for it: each way a policy can break or exceed its
contract is reported, and a policy that honours it passes. The cases with `nca` run the real analyzer."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.network.analyzer import parse_connections, parse_map
from tests.network.cluster import Pod, workload_pods
from tests.network.contract import ANNOTATION, check, main, transplant

NS = "app"
DNS_PORT_ONLY = {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}


def namespace(name: str = NS) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def deployment(name: str, host_network: bool = False, ns: str = NS) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "x", "ports": [{"name": "http", "containerPort": 8080}]}]
    }
    if host_network:
        spec["hostNetwork"] = True
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


def policy(
    name: str, flows: list[dict] | None, ingress=None, egress=None, types=("Ingress", "Egress")
) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": name}}, "policyTypes": list(types)}
    if ingress is not None:
        spec["ingress"] = ingress
    if egress is not None:
        spec["egress"] = egress
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if flows is not None:
        meta["annotations"] = {ANNOTATION: json.dumps(flows)}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta, "spec": spec}


def deny() -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "default-deny-ingress", "namespace": NS},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }


def flow(direction: str, peer: dict, port: int | None, protocol: str = "TCP") -> dict[str, Any]:
    return {"direction": direction, "peer": peer, "protocol": protocol, "port": port, "why": "test"}


def pods(labels: dict[str, str], ns: str = NS) -> dict[str, Any]:
    return {"kind": "pods", "namespace": ns, "labels": labels}


def hosts(what: str) -> dict[str, Any]:
    return {"kind": "hosts", "what": what}


def tcp(port: int) -> list[dict[str, Any]]:
    return [{"port": port, "protocol": "TCP"}]


CLIENT_TO_SERVER = [flow("egress", pods({"app": "server"}), 8080)]
SERVER_FROM_CLIENT = [flow("ingress", pods({"app": "client"}), 8080)]


def client_server(server_ingress: list[dict], client_egress: list[dict], server_flows=SERVER_FROM_CLIENT):
    return [
        namespace(),
        deployment("server"),
        deployment("client"),
        deny(),
        policy("server", server_flows, ingress=server_ingress, egress=[]),
        policy("client", CLIENT_TO_SERVER, ingress=[], egress=client_egress),
    ]


SELECTOR_TO_SERVER = [{"to": [{"podSelector": {"matchLabels": {"app": "server"}}}], "ports": tcp(8080)}]
SELECTOR_FROM_CLIENT = [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": tcp(8080)}]


@pytest.mark.network
def test_selectors_that_match_the_contract_pass(nca):
    assert check(client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER), nca=nca) == []
    # A named port resolves on the destination's container ports (`http` is 8080 there).
    by_name = [{"from": SELECTOR_FROM_CLIENT[0]["from"], "ports": [{"port": "http", "protocol": "TCP"}]}]
    assert check(client_server(by_name, SELECTOR_TO_SERVER), nca=nca) == []


@pytest.mark.network
@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "10.0.0.0/8"])
def test_an_ip_block_meant_to_admit_a_pod_is_reported_blocked(nca, cidr):
    """nca, like Cilium, matches no pod with an ipBlock: the pod-to-pod flow is blocked on both sides."""
    by_block = [{"from": [{"ipBlock": {"cidr": cidr}}], "ports": tcp(8080)}]
    to_block = [{"to": [{"ipBlock": {"cidr": cidr}}], "ports": tcp(8080)}]
    failures = check(client_server(by_block, SELECTOR_TO_SERVER), nca=nca)
    assert "blocked: app/client -> app/server 8080/TCP (test)" in failures
    failures = check(client_server(SELECTOR_FROM_CLIENT, to_block), nca=nca)
    assert failures == ["blocked: app/client -> app/server 8080/TCP (test)"]


@pytest.mark.network
def test_an_ingress_wider_than_the_contract_is_reported(nca):
    every_namespace = [{"from": [{"namespaceSelector": {}}], "ports": tcp(8080)}]
    failures = check(client_server(every_namespace, SELECTOR_TO_SERVER), nca=nca)
    assert "wider than the contract: tenant/tenant-app -> app/server 8080/TCP" in failures
    assert "wider than the contract: kube-system/kube-dns -> app/server 8080/TCP" in failures
    assert not [f for f in failures if "app/client ->" in f]  # the stated peer is fine

    extra_port = [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": [*tcp(8080), *tcp(9090)]}]
    assert check(client_server(extra_port, SELECTOR_TO_SERVER), nca=nca) == [
        "wider than the contract: app/client -> app/server 9090/TCP"
    ]
    # An ipBlock ingress the contract does not state is wider too, and named by its addresses.
    both = [*SELECTOR_FROM_CLIENT, {"from": [{"ipBlock": {"cidr": "203.0.113.0/24"}}], "ports": tcp(8080)}]
    assert check(client_server(both, SELECTOR_TO_SERVER), nca=nca) == [
        "wider than the contract: external 203.0.113.0-203.0.113.255 -> app/server 8080/TCP"
    ]
    external = [*SERVER_FROM_CLIENT, flow("ingress", {"kind": "external", "cidr": "203.0.113.0/25"}, 8080)]
    assert check(client_server(both, SELECTOR_TO_SERVER, external), nca=nca) == [
        "wider than the contract: external 203.0.113.128-203.0.113.255 -> app/server 8080/TCP"
    ]


def saxml_like(admin_ingress: list[dict], peer: dict) -> list[dict[str, Any]]:
    return [
        namespace(),
        deployment("admin"),
        deployment("model-server", host_network=True),
        deny(),
        policy("admin", [flow("ingress", peer, 10000)], ingress=admin_ingress, egress=[]),
    ]


@pytest.mark.network
@pytest.mark.parametrize("peer", [hosts("model servers (host network)"), pods({"app": "model-server"})])
def test_a_host_network_peer_passes_a_port_only_rule_and_no_ip_block(nca, peer):
    by_block = [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}], "ports": tcp(10000)}]
    failures = check(saxml_like(by_block, peer), nca=nca)
    source = "app/model-server (host network)" if peer["kind"] == "pods" else "hosts (model servers (host network))"
    assert f"blocked: {source} -> app/admin 10000/TCP (test)" in failures
    by_selector = [{"from": [{"podSelector": {"matchLabels": {"app": "model-server"}}}], "ports": tcp(10000)}]
    assert f"blocked: {source} -> app/admin 10000/TCP (test)" in check(saxml_like(by_selector, peer), nca=nca)
    port_only = [{"ports": tcp(10000)}]
    failures = check(saxml_like(port_only, peer), nca=nca)
    assert not [f for f in failures if f.startswith("blocked")]
    if peer["kind"] == "pods":  # a port-only rule admits every pod: a pods contract does not cover them
        assert "wider than the contract: tenant/tenant-app -> app/admin 10000/TCP" in failures
    else:  # a hosts flow honestly opens the port to every source
        assert failures == []


def dns_case(egress: list[dict], flows: list[dict]) -> list[dict[str, Any]]:
    return [namespace(), deployment("server"), deny(), policy("server", flows, ingress=[], egress=egress)]


KUBE_DNS = pods({"k8s-app": "kube-dns"}, "kube-system")
NODE_LOCAL_DNS = hosts("node-local-dns")


@pytest.mark.network
def test_dns_allowed_only_to_kube_dns_fails_node_local_dns(nca):
    to_kube_dns = [
        {
            "to": [
                {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                }
            ],
            **DNS_PORT_ONLY,
        }
    ]
    flows = [flow("egress", KUBE_DNS, 53, "UDP"), flow("egress", NODE_LOCAL_DNS, 53, "UDP")]
    assert check(dns_case(to_kube_dns, flows), nca=nca) == [
        "blocked: app/server -> hosts (node-local-dns) 53/UDP (test)"
    ]
    assert check(dns_case([DNS_PORT_ONLY], flows), nca=nca) == []


@pytest.mark.network
def test_external_ranges_and_an_unrestricted_direction(nca):
    public = [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}], "ports": tcp(443)}]
    everything = flow("egress", {"kind": "external", "cidr": "0.0.0.0/0"}, 443)
    assert check(dns_case(public, [everything]), nca=nca) == [
        "blocked: app/server -> external 10.0.0.0-10.255.255.255 443/TCP (test)"
    ]
    outside = flow("egress", {"kind": "external", "cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}, 443)
    assert check(dns_case(public, [outside]), nca=nca) == []
    # Egress not restricted: every egress flow passes, a node's TPU runtime included.
    objects = [
        namespace(),
        deployment("server"),
        policy("server", [everything, flow("egress", hosts("TPU runtime"), 8353)], ingress=[], types=("Ingress",)),
    ]
    assert check(objects, nca=nca) == []


@pytest.mark.network
def test_every_pod_needs_a_contract_and_a_peer_must_exist(nca):
    objects = [*client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER), deployment("stray")]
    objects[4]["metadata"].pop("annotations")
    assert check(objects, nca=nca) == [
        "no contract: pod app/server is selected by no policy with a contract",
        "no contract: pod app/stray is selected by no policy with a contract",
        "no contract: policy app/server carries no tpu-stacks.dev/flows annotation",
    ]
    ghost = [flow("egress", pods({"app": "ghost"}), 8080)]
    failures = check(
        client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER),
        {("app", "client"): ghost, ("app", "server"): SERVER_FROM_CLIENT},
        nca=nca,
    )
    assert failures == ["blocked: app/client -> pods app/{app=ghost}, which matches no pod 8080/TCP (test)"]


@pytest.mark.network
def test_a_contract_given_apart_from_the_annotations_is_what_is_checked(nca):
    """The lead's evidence run: a new contract held against old policies."""
    objects = client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER)
    assert check(objects, nca=nca) == []
    wider = {("app", "server"): [flow("ingress", pods({"app": "client"}), 9090)], ("app", "client"): CLIENT_TO_SERVER}
    assert check(objects, wider, nca=nca) == [
        "blocked: app/client -> app/server 9090/TCP (test)",
        "wider than the contract: app/client -> app/server 8080/TCP",
    ]


@pytest.mark.network
def test_pods_of_custom_resources_carry_their_controllers_labels(nca):
    """A policy may select on the labels JobSet and KubeRay add; the lifted pods carry them."""
    jobset = {
        "kind": "JobSet",
        "metadata": {"name": "set", "namespace": NS},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "template": {"spec": {"template": {"metadata": {"labels": {}}, "spec": {"containers": []}}}},
                }
            ]
        },
    }
    ray = {
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": NS},
        "spec": {
            "headGroupSpec": {"template": {"metadata": {"labels": {}}, "spec": {"containers": []}}},
            "workerGroupSpecs": [
                {"groupName": "tpu", "template": {"metadata": {"labels": {}}, "spec": {"containers": []}}}
            ],
        },
    }
    members = {"matchLabels": {"ray.io/cluster": "rc"}}
    members_peer = pods({"ray.io/cluster": "rc"})
    ray_policy = {
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "ray",
            "namespace": NS,
            "annotations": {ANNOTATION: json.dumps([flow("ingress", members_peer, None, p) for p in ("TCP", "UDP")])},
        },
        "spec": {"podSelector": members, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": members}]}]},
    }
    set_members = {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": "set"}}
    set_policy = {
        "kind": "NetworkPolicy",
        "metadata": {
            "name": "set",
            "namespace": NS,
            "annotations": {
                ANNOTATION: json.dumps([flow("ingress", pods({"jobset.sigs.k8s.io/jobset-name": "set"}), 8471)])
            },
        },
        "spec": {
            "podSelector": set_members,
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": set_members}], "ports": tcp(8471)}],
        },
    }
    assert check([namespace(), jobset, ray, deny(), ray_policy, set_policy], nca=nca) == []
    # A rule without ports admits every protocol: a contract that states TCP alone is narrower.
    tcp_only = {
        ("app", "ray"): [flow("ingress", members_peer, None)],
        ("app", "set"): json.loads(set_policy["metadata"]["annotations"][ANNOTATION]),
    }
    assert check([namespace(), jobset, ray, deny(), ray_policy, set_policy], tcp_only, nca=nca) == [
        "wider than the contract: app/rc-head -> app/rc-head all ports/UDP",
        "wider than the contract: app/rc-head -> app/rc-tpu all ports/UDP",
        "wider than the contract: app/rc-tpu -> app/rc-head all ports/UDP",
        "wider than the contract: app/rc-tpu -> app/rc-tpu all ports/UDP",
    ]


def test_lifted_pods_of_every_kind_with_two_replicas_each():
    rayjob = {
        "kind": "RayJob",
        "metadata": {"name": "job", "namespace": NS},
        "spec": {
            "rayClusterSpec": {"headGroupSpec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {}}}},
            "submitterPodTemplate": {"metadata": {"labels": {"role": "submit"}}, "spec": {}},
        },
    }
    found = workload_pods([rayjob, deployment("web", host_network=True)])
    assert [(p.group, p.name) for p in found] == [
        ("job-head", "job-head-0"),
        ("job-head", "job-head-1"),
        ("job-submitter", "job-submitter-0"),
        ("job-submitter", "job-submitter-1"),
        ("web", "web-0"),
        ("web", "web-1"),
    ]
    assert found[0].labels == {
        "a": "b",
        "ray.io/cluster": "job-raycluster-xxxxx",
        "ray.io/node-type": "head",
        "ray.io/group": "headgroup",
        "ray.io/is-ray-node": "yes",
    }
    assert found[2].labels == {"role": "submit", "batch.kubernetes.io/job-name": "job", "job-name": "job"}
    assert found[4].host_network and found[4].named_ports == {"http": (8080, "TCP")}


def test_nca_connection_strings_parse_into_ports():
    assert parse_connections("All connections") == {"TCP": ((1, 65535),), "UDP": ((1, 65535),)}
    assert parse_connections("{protocols:TCP, UDP,dst_ports:53}") == {"TCP": ((53, 53),), "UDP": ((53, 53),)}
    assert parse_connections("{protocols:TCP,dst_ports:80,443,8000-8002},{protocols:UDP,dst_ports:53}") == {
        "TCP": ((80, 80), (443, 443), (8000, 8002)),
        "UDP": ((53, 53),),
    }
    assert parse_connections("{protocols:UDP}") == {"UDP": ((1, 65535),)}
    assert parse_connections("All but {protocols:TCP,dst_ports:22}") == {
        "TCP": ((1, 21), (23, 65535)),
        "UDP": ((1, 65535),),
    }
    assert parse_connections("{protocols:all but TCP}") == {"UDP": ((1, 65535),)}


def test_nca_peers_parse_into_pods_and_address_ranges():
    server = Pod("app", "server", "server-0", {})
    text = "0.0.0.0-9.255.255.255 => app/server-0 : {protocols:TCP,dst_ports:8000}\napp/server-0 => 169.254.169.254 : All connections\n"
    edges = parse_map(text, [server]).edges
    (first, second) = edges
    assert str(first[0]) == "0.0.0.0-9.255.255.255" and first[1] == server and edges[first] == {"TCP": ((8000, 8000),)}
    assert str(second[1]) == "169.254.169.254" and second[0] == server
    with pytest.raises(ValueError, match="ghost"):
        parse_map("app/ghost-0 => app/server-0 : All connections", [server])


def test_a_newer_contract_moves_onto_the_older_policies_that_select_the_same_pods():
    old = client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER)
    for obj in old[4:]:
        obj["metadata"].pop("annotations")
    old[4]["metadata"]["name"] = "server-old-name"
    new = client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER)
    moved = transplant(new, old)
    assert {key: [f.port for f in flows] for key, flows in moved.items()} == {
        ("app", "server-old-name"): [8080],  # found by its podSelector
        ("app", "client"): [8080],
    }


@pytest.mark.network
def test_the_command_line_checks_a_folder_against_another_folders_contract(nca, tmp_path, capsys, monkeypatch):
    """`python -m tests.network.contract OLD --contract NEW`: the lead's evidence run on rendered manifests."""
    monkeypatch.setattr("tests.network.nca_venv.ensure_nca", lambda cache: nca)
    old, new = tmp_path / "old", tmp_path / "new"
    by_block = [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}], "ports": tcp(8080)}]
    for folder, objects in (
        (old, client_server(by_block, SELECTOR_TO_SERVER)),
        (new, client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER)),
    ):
        folder.mkdir()
        for i, obj in enumerate(objects):
            (folder / f"{i}.yaml").write_text("# rendered\n" + yaml.safe_dump(obj))
    for path in old.glob("*.yaml"):  # the old plan carries no annotations
        path.write_text(path.read_text().replace(ANNOTATION, "unrelated.example/flows"))
    assert main([str(old), "--contract", str(new)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "old: blocked: app/client -> app/server 8080/TCP (test)",
        "old: wider than the contract: external 10.0.0.0-10.255.255.255 -> app/server 8080/TCP",
    ]
    assert main([str(new)]) == 0 and capsys.readouterr().out == "no failures\n"


@pytest.mark.network
def test_the_default_deny_needs_no_contract_and_gives_none(nca):
    objects = client_server(SELECTOR_FROM_CLIENT, SELECTOR_TO_SERVER)
    objects[3]["metadata"]["annotations"] = {ANNOTATION: "[]"}  # an empty contract on the deny covers nothing
    objects[4]["metadata"].pop("annotations")
    assert check(objects, nca=nca) == [
        "no contract: pod app/server is selected by no policy with a contract",
        "no contract: policy app/server carries no tpu-stacks.dev/flows annotation",
    ]
    every_pod = {
        **objects[4],
        "metadata": {"name": "all", "namespace": NS},
        "spec": {"podSelector": {}, "ingress": [{}]},
    }
    assert "no contract: policy app/all carries no tpu-stacks.dev/flows annotation" in check(
        [*objects, every_pod], nca=nca
    )
