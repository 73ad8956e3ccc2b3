"""The set of probes follows the objects' flows (the `tpu-stacks.dev/flows` annotations), not the stack's name."""

from __future__ import annotations

import pytest

from tests.live.probe.stacks import flows, objects, policy, set_flows
from tests.shipped import STACKS
from tpu_stacks_live.probe import contract, plan


def checks(objs: list[dict]) -> dict[str, plan.Probe]:
    found = plan.probes(objs)
    assert len({p.check for p in found}) == len(found), "each probe's check name is unique"
    return {p.check: p for p in found}


def test_a_gateway_stack_probes_the_api_server_from_the_picker_and_the_adapter_as_their_accounts():
    probes = checks(objects("vllm-gateway"))
    picker = probes["probe-api-server:vllm/vllm-epp"]
    assert picker.labels == {"app": "vllm-epp"} and picker.api_token and picker.service_account == "vllm-epp"
    adapter = probes["probe-api-server:custom-metrics/custom-metrics-adapter"]
    assert adapter.api_token and adapter.service_account == "custom-metrics-stackdriver-adapter"
    assert adapter.attempts[0]["op"] == "http" and adapter.attempts[0]["url"].endswith("/version")
    # The server has no egress to the API server in its contract: no probe of it, and no token for its probes.
    assert "probe-api-server:vllm/vllm-server" not in probes
    assert not any(p.api_token for p in probes.values() if p.labels == {"app": "vllm-tpu"})


def test_a_gateway_stack_probes_its_peers_and_refuses_a_pod_without_the_contracts_labels():
    probes = checks(objects("vllm-gateway"))
    peer = probes["probe-peer:vllm/vllm-epp->vllm/vllm-server:8000"]
    assert peer.labels == {"app": "vllm-epp"} and peer.target == plan.Target("vllm", {"app": "vllm-tpu"}, 8000)
    assert peer.expect == {"connected", "refused"}
    assert "probe-peer:vllm/smoke-test->vllm/vllm-server:8000" in probes
    deny = probes["probe-deny:vllm/vllm-server:8000"]
    assert deny.labels == {} and deny.expect == {"timeout", "unreachable"} and deny.target.labels == {"app": "vllm-tpu"}
    # The collectors (gmp-system) and konnectivity-agent (kube-system) are peers, but no probe pod goes there.
    assert {p.namespace for p in probes.values()} <= {"vllm", "custom-metrics"}


def test_the_egress_probes_of_a_tpu_server_and_their_expected_answers():
    probes = checks(objects("vllm-gateway"))
    dns = probes["probe-dns:vllm/vllm-server"]
    assert [(a["op"], a["name"]) for a in dns.attempts] == [
        ("resolve", "vllm-epp"),
        ("resolve", "kubernetes.default"),
        ("resolve", "storage.googleapis.com."),
        ("dns-tcp", "storage.googleapis.com."),
    ]
    assert dns.expect == {"resolved"}
    runtime = probes["probe-tpu-runtime:vllm/vllm-server"]
    assert runtime.attempts == ({"id": "node:8353", "op": "connect", "host": "$NODE_IP", "port": 8353},)
    assert runtime.expect == {"connected", "refused"}
    assert probes["probe-metadata-server:vllm/vllm-server"].attempts[0]["url"].startswith("http://169.254.169.254/")
    assert probes["probe-google-apis:vllm/vllm-server"].expect == {"connected"}
    assert "probe-tpu-runtime:vllm/vllm-epp" not in probes  # the picker is no TPU pod


def test_a_ray_stack_gets_peer_flows_between_its_pods_and_the_tpu_node_ports_on_its_workers():
    probes = checks(objects("raytrain"))
    ray = {"tpu-stacks.dev/ray-cluster": "maxtext-tpu-cluster"}
    into_head = probes["probe-peer:raytrain/{tpu-stacks.dev/ray-cluster=maxtext-tpu-cluster}->raytrain/ray-head:any"]
    assert into_head.labels == ray and into_head.target.port is None  # every port: the head's declared one
    assert "probe-peer:raytrain/ray-job-submitter->raytrain/ray-head:8265" in probes
    assert "probe-peer:raytrain/ray-worker->raytrain/{tpu-stacks.dev/ray-cluster=maxtext-tpu-cluster}:any" in probes
    assert "probe-tpu-runtime:raytrain/ray-worker" in probes
    assert "probe-tpu-device-plugin-metrics:raytrain/ray-worker" in probes
    assert "probe-deny:raytrain/ray-head:8265" in probes  # the job API: only the submitter and the operator
    assert not any(k.startswith("probe-api-server") for k in probes)  # no Ray autoscaler, no adapter here


def test_probes_follow_the_annotation_not_the_stack():
    objs = objects("vllm-gateway")
    server = policy(objs, "vllm", "vllm-server")
    kept = [f for f in flows(server) if f["port"] != 53 and f["port"] != 8353]
    set_flows(
        server, [*kept, {"direction": "egress", "peer": {"kind": "any"}, "protocol": "TCP", "port": 443, "why": "x"}]
    )
    probes = checks(objs)
    assert "probe-dns:vllm/vllm-server" not in probes and "probe-tpu-runtime:vllm/vllm-server" not in probes
    assert probes["probe-api-server:vllm/vllm-server"].service_account == "vllm"  # the Deployment's account


def test_no_deny_probe_where_every_pod_or_any_peer_is_admitted_on_the_port():
    objs = objects("vllm-gateway")
    server = policy(objs, "vllm", "vllm-server")
    every_pod = {"direction": "ingress", "peer": {"kind": "pods", "namespace": "*", "labels": {}}, "protocol": "TCP"}
    set_flows(server, [*flows(server), {**every_pod, "port": 8000, "why": "exposure: cluster"}])
    groups = contract.groups(objs)
    # 8000 is open to every pod now; the KV-events port stays the picker's alone, so the deny probe moves there
    assert plan.deny_port(groups, next(g for g in groups if g.policy == "vllm-server")) == 5557
    set_flows(server, [*flows(server), {**every_pod, "port": 5557, "why": "exposure: cluster"}])
    groups = contract.groups(objs)
    assert plan.deny_port(groups, next(g for g in groups if g.policy == "vllm-server")) is None
    probes = checks(objs)
    assert "probe-deny:vllm/vllm-server:8000" not in probes
    # every pod of the cluster is a client: the peer probe runs with no label of a workload
    assert probes["probe-peer:vllm/{any pod}->vllm/vllm-server:8000"].labels == {}


def test_the_probe_image_is_the_smoke_tests_and_the_catalogues_without_one():
    objs = objects("vllm-gateway")
    smoke = next(o for o in objs if o["kind"] == "Job" and o["metadata"]["name"].startswith("smoke-test"))
    smoke["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/python:3.12.8-slim-bookworm"
    assert plan.probe_image(objs) == "registry.example/python:3.12.8-slim-bookworm"
    assert plan.probe_image([o for o in objs if o is not smoke]) == "docker.io/library/python:3.12.8-slim-bookworm"


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_gets_a_dns_probe_per_policy_and_probes_only_in_its_own_namespaces(stack):
    objs = objects(stack)
    probes = checks(objs)
    owned = contract.owned_namespaces(objs)
    for group in contract.groups(objs):
        if any(f["port"] == 53 and f["direction"] == "egress" for f in group.flows):
            assert f"probe-dns:{group.name}" in probes
    assert all(p.namespace in owned and (p.target is None or p.target.namespace in owned) for p in probes.values())
    assert all(p.attempts or p.target is not None for p in probes.values())
