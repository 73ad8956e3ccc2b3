"""The expectations derived from rendered objects (tests/network/expectations.py), each shown failing on a
small manifest and passing once the policies allow the flow, with the real analyzer. The contract is
given empty, so only the expectation lines are compared."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.network.contract import ANNOTATION, check
from tests.network.test_contract_checker import NS, deny, deployment, namespace, policy, tcp

pytestmark = pytest.mark.network

ALL_NS = {"namespaceSelector": {}}
COLLECTORS = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gmp-system"}},
    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}},
}


def expectations(objects: list[dict[str, Any]], nca) -> list[str]:
    return [line for line in check(objects, {}, nca=nca) if line.startswith("expectation")]


def service(name: str, selector: str, port: int, target: int | str, **spec: Any) -> dict[str, Any]:
    entry = {"port": port, "protocol": "TCP", "targetPort": target}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"selector": {"app": selector}, "ports": [entry], **spec},
    }


def lb(**spec: Any) -> dict[str, Any]:
    return service("web", "server", 80, "http", type="LoadBalancer", **spec)


def test_a_load_balancer_target_port_no_policy_admits_fails(nca):
    objects = [namespace(), deployment("server"), deny(), lb(externalTrafficPolicy="Local")]
    assert expectations(objects, nca) == [
        "expectation service: external 0.0.0.0-255.255.255.255 -> app/server 8080/TCP "
        "(a client of load balancer Service app/web (loadBalancerSourceRanges 0.0.0.0/0))"
    ]


def test_a_load_balancer_admits_its_source_ranges_and_keeps_the_client_address(nca):
    ranges = ["10.1.0.0/16"]
    admit = policy(
        "server", None, ingress=[{"from": [{"ipBlock": {"cidr": "10.1.0.0/16"}}], "ports": tcp(8080)}], egress=[]
    )
    objects = [namespace(), deployment("server"), deny(), admit]
    assert expectations([*objects, lb(externalTrafficPolicy="Local", loadBalancerSourceRanges=ranges)], nca) == []
    assert expectations([*objects, lb(loadBalancerSourceRanges=["10.0.0.0/8"])], nca) == [
        "expectation service: external 10.0.0.0-10.0.255.255 -> app/server 8080/TCP "
        "(a client of load balancer Service app/web (loadBalancerSourceRanges 10.0.0.0/8))",
        "expectation service: external 10.2.0.0-10.255.255.255 -> app/server 8080/TCP "
        "(a client of load balancer Service app/web (loadBalancerSourceRanges 10.0.0.0/8))",
        "expectation service: load balancer clients -> Service app/web 80/TCP "
        "(externalTrafficPolicy Cluster: node-forwarded requests carry a node address on Dataplane V2)",
    ]


def test_a_service_meant_for_the_cluster_admits_another_namespace(nca):
    meant = service("api", "server", 80, 8080)
    meant["metadata"]["annotations"] = {"tpu-stacks.dev/clients": "cluster"}
    objects = [namespace(), deployment("server"), deny(), meant]
    assert expectations(objects, nca) == [
        "expectation service: tenant/tenant-app -> app/server 8080/TCP "
        "(meant for the whole cluster, Service app/api port 80)"
    ]
    admit = policy("server", None, ingress=[{"from": [ALL_NS], "ports": tcp(8080)}], egress=[])
    assert expectations([*objects, admit], nca) == []


def client(reference: str, via: str) -> list[dict[str, Any]]:
    """A client Deployment naming the Service in an env value, or in a ConfigMap it mounts."""
    obj = deployment("client")
    pod = obj["spec"]["template"]["spec"]
    if via == "env":
        pod["containers"][0]["env"] = [{"name": "URL", "value": f"http://{reference}/v1"}]
        return [obj]
    pod["volumes"] = [{"name": "conf", "configMap": {"name": "client-conf"}}]
    config = {"kind": "ConfigMap", "metadata": {"name": "client-conf", "namespace": NS}, "data": {"a.yaml": reference}}
    return [obj, config]


SERVER_ADMITS_CLIENT = policy(
    "server", None, ingress=[{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": tcp(8080)}]
)
CLIENT_DNS_ONLY = policy("client", None, egress=[{"ports": [{"port": 53, "protocol": "UDP"}]}], types=("Egress",))


@pytest.mark.parametrize(
    ("reference", "via"),
    [("web.app.svc.cluster.local:80", "env"), ("web", "configmap"), ("web.app:80", "configmap")],
)
def test_a_caller_without_egress_to_the_service_pods_fails(nca, reference, via):
    objects = [namespace(), deployment("server"), service("web", "server", 80, "http"), deny(), SERVER_ADMITS_CLIENT]
    caller = client(reference, via)
    assert expectations([*objects, *caller, CLIENT_DNS_ONLY], nca) == [
        "expectation caller: app/client -> app/server 8080/TCP (client names it, Service app/web port 80)"
    ]
    opened = policy(
        "client", None, egress=[{"to": [{"podSelector": {"matchLabels": {"app": "server"}}}]}], types=("Egress",)
    )
    assert expectations([*objects, *caller, opened], nca) == []
    # the server's side: without its ingress rule the same caller fails
    assert expectations([*objects[:-1], *caller, opened], nca) != []


def test_a_name_that_only_starts_like_the_service_is_no_call(nca):
    objects = [namespace(), deployment("server"), service("web", "server", 80, "http"), deny(), CLIENT_DNS_ONLY]
    assert expectations([*objects, *client("web-frontend.app:80", "env")], nca) == []
    assert expectations([*objects, *client("web.other:80", "env")], nca) == []
    assert expectations([*objects, *client("web.app:81", "env")], nca) == [
        "expectation caller: app/client -> Service app/web 81/TCP (no such Service port)"
    ]


def api_service(port: int | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": "adapter", "namespace": NS, **({"port": port} if port else {})}
    return {"kind": "APIService", "metadata": {"name": "v1.metrics.example"}, "spec": {"service": ref}}


def test_an_aggregated_api_behind_an_ip_block_only_fails_and_konnectivity_passes(nca):
    backend = [namespace(), deployment("server"), service("adapter", "server", 443, 6443), deny(), api_service()]
    ip_only = policy("server", None, ingress=[{"from": [{"ipBlock": {"cidr": "172.16.0.0/28"}}], "ports": tcp(6443)}])
    assert expectations([*backend, ip_only], nca) == [
        "expectation apiservice: kube-system/konnectivity-agent -> app/server 6443/TCP "
        "(the API server (via konnectivity) calls APIService v1.metrics.example, Service app/adapter port 443)"
    ]
    port_only = policy("server", None, ingress=[{"ports": tcp(6443)}])
    assert expectations([*backend, port_only], nca) == []
    assert expectations([*backend[:-1], api_service(8443), port_only], nca) == [
        "expectation apiservice: APIService v1.metrics.example calls port 8443, which its Service lacks"
    ]


def monitoring(kind: str, port: int | str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "mon", **({"namespace": NS} if kind == "PodMonitoring" else {})}
    spec = {"selector": {"matchLabels": {"app": "server"}}, "endpoints": [{"port": port}]}
    return {"kind": kind, "metadata": meta, "spec": spec}


@pytest.mark.parametrize(("kind", "port"), [("PodMonitoring", "http"), ("ClusterPodMonitoring", 8080)])
def test_a_scrape_port_the_collectors_cannot_reach_fails(nca, kind, port):
    objects = [namespace(), deployment("server"), deny(), monitoring(kind, port)]
    where = f"{kind} {NS}/mon" if kind == "PodMonitoring" else f"{kind} mon"
    assert expectations(objects, nca) == [
        f"expectation scrape: gmp-system/collector -> app/server 8080/TCP ({where} scrapes it)"
    ]
    admit = policy("server", None, ingress=[{"from": [COLLECTORS], "ports": tcp(8080)}])
    assert expectations([*objects, admit], nca) == []


def ray_cluster(head_params: dict[str, str]) -> dict[str, Any]:
    def group(labels: dict[str, str]) -> dict[str, Any]:
        return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "ray", "image": "x"}]}}

    return {
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": NS},
        "spec": {
            "headGroupSpec": {"rayStartParams": head_params, "template": group({"app": "ray"})},
            "workerGroupSpecs": [
                {
                    "groupName": "tpu",
                    "rayStartParams": {"object-manager-port": "8076"},
                    "template": group({"app": "ray"}),
                }
            ],
        },
    }


def test_ray_nodes_must_reach_each_other_on_rays_ports(nca):
    between = {"podSelector": {"matchLabels": {"app": "ray"}}}
    only_gcs = {
        "kind": "NetworkPolicy",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"name": "ray", "namespace": NS},
        "spec": {"podSelector": between["podSelector"], "ingress": [{"from": [between], "ports": tcp(6380)}]},
    }
    failures = expectations([namespace(), ray_cluster({"port": "6380"}), deny(), only_gcs], nca)
    assert "expectation ray: app/rc-tpu -> app/rc-head 8265/TCP (Ray dashboard-port of rc)" in failures
    assert "expectation ray: app/rc-tpu -> app/rc-head 10001/TCP (Ray ray-client-server-port of rc)" in failures
    assert "expectation ray: app/rc-head -> app/rc-tpu 8076/TCP (Ray object-manager-port of rc)" in failures
    assert "expectation ray: app/rc-tpu -> app/rc-tpu all ports/TCP (Ray node-manager-port of rc)" in failures
    assert not any("6380" in line for line in failures)  # the GCS port the head's rayStartParams set is open
    all_tcp = {
        **only_gcs,
        "spec": {**only_gcs["spec"], "ingress": [{"from": [between], "ports": [{"protocol": "TCP"}]}]},
    }
    assert expectations([namespace(), ray_cluster({"port": "6380"}), deny(), all_tcp], nca) == []


def ray_job(cluster: str) -> dict[str, Any]:
    submitter = {"metadata": {"labels": {"app": "submit"}}, "spec": {"containers": [{"name": "s", "image": "x"}]}}
    spec = {"clusterSelector": {"ray.io/cluster": cluster}, "submitterPodTemplate": submitter}
    return {"kind": "RayJob", "metadata": {"name": "job", "namespace": NS}, "spec": spec}


def test_a_ray_job_submitter_must_reach_its_heads_dashboard(nca):
    nodes = {"podSelector": {"matchLabels": {"app": "ray"}}}
    ray_policy = {
        "kind": "NetworkPolicy",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"name": "ray", "namespace": NS},
        "spec": {"podSelector": nodes["podSelector"], "ingress": [{"from": [nodes], "ports": [{"protocol": "TCP"}]}]},
    }
    objects = [namespace(), ray_cluster({"dashboard-port": "8266"}), deny(), ray_policy, ray_job("rc")]
    assert expectations(objects, nca) == [
        "expectation ray: app/job-submitter -> app/rc-head 8266/TCP (RayJob job submits through the dashboard)"
    ]
    submit = {"podSelector": {"matchLabels": {"app": "submit"}}}
    ray_policy["spec"]["ingress"].append({"from": [submit], "ports": tcp(8266)})
    assert expectations(objects, nca) == []
    assert expectations([*objects[:-1], ray_job("other")], nca) == [
        "expectation ray: RayJob app/job selects no Ray head"
    ]


def test_a_head_that_trusts_the_operators_label_in_every_namespace_admits_an_impostor(nca):
    """KubeRay's operator label, admitted from `namespaceSelector: {}`, lets a pod of any namespace call the job API;
    the same label in the operator's own namespace (ray-system here, tests/network/cluster.py) does not."""
    nodes = {"podSelector": {"matchLabels": {"app": "ray"}}}
    operator_label = {"matchLabels": {"app.kubernetes.io/component": "kuberay-operator"}}

    def head_policy(namespaces: dict[str, Any]) -> dict[str, Any]:
        operator = {"namespaceSelector": namespaces, "podSelector": operator_label}
        ingress = [{"from": [nodes], "ports": [{"protocol": "TCP"}]}, {"from": [operator], "ports": tcp(8265)}]
        spec = {"podSelector": nodes["podSelector"], "ingress": ingress}
        return {
            "kind": "NetworkPolicy",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {"name": "ray", "namespace": NS},
            "spec": spec,
        }

    objects = [namespace(), ray_cluster({}), deny()]
    why = "a pod of another namespace with the KubeRay operator's labels: only the operator's own namespace may call"
    assert expectations([*objects, head_policy({})], nca) == [  # the policy selects the head and the workers
        f"expectation ray-operator: tenant/kuberay-impostor -> app/{pod} 8265/TCP ({why} a Ray pod)"
        for pod in ("rc-head", "rc-tpu")
    ]
    pinned = {"matchLabels": {"kubernetes.io/metadata.name": "ray-system"}}
    assert expectations([*objects, head_policy(pinned)], nca) == []


def test_a_flow_the_contract_omits_is_found_in_a_shipped_stack(nca):
    """The reviewer's case: drop the smoke test's ingress rule from vllm's server policy AND the flow
    from both ends' contracts. The contract check alone cannot notice; the caller expectation (the
    smoke test names vllm-service in its env) does."""
    from tests.stacks.test_security import objects as rendered

    objects = copy.deepcopy(rendered("vllm"))
    server_labels = {"app": "vllm-tpu"}

    def smoke_test(peers: list[dict[str, Any]]) -> bool:
        return any("smoke-test" in json.dumps(peer) for peer in peers)

    for rule_set in (o for o in objects if o["kind"] == "NetworkPolicy"):
        name, annotations = rule_set["metadata"]["name"], rule_set["metadata"].get("annotations") or {}
        if name == "vllm-server":
            rule_set["spec"]["ingress"] = [r for r in rule_set["spec"]["ingress"] if not smoke_test(r.get("from", []))]
        if ANNOTATION in annotations:
            flows = json.loads(annotations[ANNOTATION])
            if name == "vllm-server":
                flows = [f for f in flows if not smoke_test([f["peer"]])]
            elif name == "smoke-test":
                flows = [f for f in flows if f["peer"].get("labels") != server_labels]
            annotations[ANNOTATION] = json.dumps(flows)
    assert check(objects, nca=nca, expectations=False) == []
    (line,) = check(objects, nca=nca)
    assert line.startswith("expectation caller: vllm/smoke-test-") and " -> vllm/vllm-tpu 8000/TCP " in line


def pool(picker: str) -> dict[str, Any]:
    return {
        "apiVersion": "inference.networking.k8s.io/v1",
        "kind": "InferencePool",
        "metadata": {"name": "pool", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "server"}},
            "targetPorts": [{"number": 8080}],
            "endpointPickerRef": {"name": picker, "port": {"number": 9002}},
        },
    }


def grpc_check(service_name: str, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "networking.gke.io/v1",
        "kind": "HealthCheckPolicy",
        "metadata": {"name": service_name, "namespace": NS},
        "spec": {
            "targetRef": {"group": "", "kind": "Service", "name": service_name},
            "default": {
                "config": {"type": "GRPC", "grpcHealthCheck": {"portSpecification": "USE_FIXED_PORT", "port": port}}
            },
        },
    }


CHECKS_FROM = [{"ipBlock": {"cidr": "35.191.0.0/16"}}, {"ipBlock": {"cidr": "130.211.0.0/22"}}]


def test_a_pickers_health_check_must_reach_it_on_gkes_default_port_or_the_pinned_one(nca):
    """An InferencePool's picker is health-checked by the load balancer: on 9003 unless a HealthCheckPolicy on its
    Service pins another port; the checks' ranges admitted only on ext-proc (9002) fail either way."""
    picker = service("epp", "epp", 9002, 9002)
    only_ext_proc = policy("epp", None, ingress=[{"from": CHECKS_FROM, "ports": tcp(9002)}], egress=[])
    objects = [namespace(), deployment("server"), deployment("epp"), deny(), picker, pool("epp"), only_ext_proc]
    assert expectations(objects, nca) == [
        f"expectation healthcheck: external {cidr} -> app/epp 9003/TCP "
        "(the load balancer's health check of Service app/epp)"
        for cidr in ("130.211.0.0-130.211.3.255", "35.191.0.0-35.191.255.255")  # sorted, as check() returns them
    ]
    pinned = [*objects, grpc_check("epp", 9004)]
    assert {line.split(" -> ")[1].split(" (")[0] for line in expectations(pinned, nca)} == {"app/epp 9004/TCP"}
    on_the_port = policy("epp", None, ingress=[{"from": CHECKS_FROM, "ports": tcp(9004)}], egress=[])
    assert expectations([*objects[:-1], on_the_port, grpc_check("epp", 9004)], nca) == []
