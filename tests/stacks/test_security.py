"""Every shipped stack's rendered objects, walked independently of the code that built them: each pod
is hardened, each workload namespace enforces a Pod Security level its pods pass, and each network
policy selects the pods it protects while its allows name peers that exist."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tests.stacks.test_shipped_stacks import STACKS, WORKLOAD_STACKS, planned
from tpu_stacks.k8s.smoke import GATEWAY_READER
from tpu_stacks.objects.annotations import NO_CPU_LIMIT_REASON
from tpu_stacks_preview.manifests import render_manifests

ALLOWED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
"""The volume types Pod Security `restricted` allows (kubernetes.io/docs/concepts/security/pod-security-standards)."""
SMOKE_TEST = {"matchLabels": {"app.kubernetes.io/component": "smoke-test"}}
API_TOKEN_PODS = {
    "custom-metrics-stackdriver-adapter",  # serves an aggregated API and reads pods
    "vllm-epp",  # the Inference Gateway picker watches its InferencePool, objectives and the pool's pods
}


@cache
def objects(stack: str) -> list[dict[str, Any]]:
    _, up = planned(stack)
    return [m.object for m in render_manifests(up)]


def pods(stack: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(owner name, namespace, pod template) of every workload object, custom resources included."""
    found = []
    for obj in objects(stack):
        kind, spec, meta = obj["kind"], obj.get("spec") or {}, obj["metadata"]
        templates = []
        if kind in ("Deployment", "Job"):
            templates = [spec["template"]]
        elif kind == "JobSet":
            templates = [job["template"]["spec"]["template"] for job in spec["replicatedJobs"]]
        elif kind == "RayCluster":
            templates = [spec["headGroupSpec"]["template"], *(g["template"] for g in spec["workerGroupSpecs"])]
            # KubeRay labels every pod of a RayCluster `ray.io/cluster: <name>` (RayClusterLabelKey).
            templates = [
                {
                    **t,
                    "metadata": {
                        **t["metadata"],
                        "labels": {**t["metadata"]["labels"], "ray.io/cluster": meta["name"]},
                    },
                }
                for t in templates
            ]
        elif kind == "RayJob":
            templates = [spec["submitterPodTemplate"]]
        elif kind == "RayService":
            cluster = spec["rayClusterConfig"]
            # KubeRay labels a RayService's serving pods `ray.io/serve: "true"` (KubeRay v1.7.0 common/pod.go
            # BuildPod; the head's once its Serve proxy is healthy): the stack's Service selects that state.
            templates = [
                {**t, "metadata": {**t["metadata"], "labels": {**t["metadata"]["labels"], "ray.io/serve": "true"}}}
                for t in [cluster["headGroupSpec"]["template"], *(g["template"] for g in cluster["workerGroupSpecs"])]
            ]
        found += [(meta["name"], meta.get("namespace", "default"), t) for t in templates]
    return found


def namespaces(stack: str) -> dict[str, dict[str, str]]:
    return {
        o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in objects(stack) if o["kind"] == "Namespace"
    }


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, selector  # our policies use matchLabels only
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    spec = template["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_every_pod_and_container_is_hardened(stack):
    for owner, _, template in pods(stack):
        spec = template["spec"]
        pod = spec["securityContext"]
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, owner
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0 and pod["fsGroup"] == pod["runAsUser"], owner
        # the pods that call the API: named, or a smoke test reading its Gateway's address (k8s/smoke.py)
        reads_gateway = spec.get("serviceAccountName") == GATEWAY_READER
        assert spec["automountServiceAccountToken"] is (owner in API_TOKEN_PODS or reads_gateway), owner
        for container in containers(template):
            context = container["securityContext"]
            where = f"{owner}/{container['name']}"
            assert context["allowPrivilegeEscalation"] is False and context["privileged"] is False, where
            assert context["capabilities"] == {"drop": ["ALL"]}, where
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["runAsNonRoot"] is True and context["runAsUser"] == pod["runAsUser"], where
            mounted = {m["mountPath"] for m in container.get("volumeMounts", [])}
            assert "/tmp" in mounted, where  # a read-only root needs somewhere to write temporary files


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_cpu_limits_on_every_container_that_takes_no_tpu(stack):
    for owner, _, template in pods(stack):
        for container in containers(template):
            limits = container.get("resources", {}).get("limits", {})
            stated = (template["metadata"].get("annotations") or {}).get(NO_CPU_LIMIT_REASON)
            if "google.com/tpu" not in limits and not stated:  # a stated reason: the picker, as upstream runs it
                assert "cpu" in limits, f"{owner}/{container['name']}"


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_every_workload_namespace_enforces_the_strictest_level_its_pods_pass(stack):
    labelled = namespaces(stack)
    for owner, namespace, template in pods(stack):
        labels = labelled[namespace]  # every workload runs in a namespace the stack creates and labels
        host_network = template["spec"].get("hostNetwork", False)
        expected = "privileged" if host_network else "restricted"
        assert labels["pod-security.kubernetes.io/enforce"] in (expected, "privileged"), owner
        assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.33"
        assert labels["pod-security.kubernetes.io/warn"] == "restricted"
        if labels["pod-security.kubernetes.io/enforce"] == "restricted":
            spec = template["spec"]
            assert not (spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC")), owner
            for volume in spec.get("volumes", []):
                assert set(volume) - {"name"} <= ALLOWED_VOLUMES, (owner, volume["name"])
    privileged = {n for n, labels in labelled.items() if labels["pod-security.kubernetes.io/enforce"] == "privileged"}
    host_network_namespaces = {ns for _, ns, t in pods(stack) if t["spec"].get("hostNetwork")}
    assert privileged == host_network_namespaces  # privileged only where a host-network pod needs it


def test_saxml_runs_in_its_own_privileged_namespace_for_its_host_network_servers():
    labels = namespaces("saxml")["saxml"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    assert {ns for _, ns, _ in pods("saxml")} == {"saxml"}


def policies(stack: str) -> list[dict[str, Any]]:
    return [o for o in objects(stack) if o["kind"] == "NetworkPolicy"]


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_each_namespace_denies_ingress_and_each_pod_is_selected_by_its_policy(stack):
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for policy in policies(stack):
        by_namespace.setdefault(policy["metadata"]["namespace"], []).append(policy)
    for owner, namespace, template in pods(stack):
        found = by_namespace[namespace]
        deny = [p for p in found if p["spec"]["podSelector"] == {}]
        assert [p["spec"]["policyTypes"] for p in deny] == [["Ingress"]] and "ingress" not in deny[0]["spec"]
        own = [
            p
            for p in found
            if p["spec"]["podSelector"] and selects(p["spec"]["podSelector"], template["metadata"]["labels"])
        ]
        if template["spec"].get("hostNetwork"):
            continue  # NetworkPolicy does not apply to host-network pods (docs/security.md)
        assert len(own) == 1, (owner, [p["metadata"]["name"] for p in own])
        assert own[0]["spec"]["policyTypes"] == ["Ingress", "Egress"], owner


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_every_policy_selects_pods_and_every_same_namespace_peer_exists(stack):
    for policy in policies(stack):
        namespace, spec = policy["metadata"]["namespace"], policy["spec"]
        labels = [t["metadata"].get("labels", {}) for _, ns, t in pods(stack) if ns == namespace]
        if spec["podSelector"]:
            assert any(selects(spec["podSelector"], pod) for pod in labels), policy["metadata"]["name"]
        rules = [
            *(r.get("from", []) for r in spec.get("ingress", [])),
            *(r.get("to", []) for r in spec.get("egress", [])),
        ]
        for peer in (p for rule in rules for p in rule):
            # The smoke-test Job's pods may be turned off; the servers' allow for them stays.
            if "podSelector" in peer and "namespaceSelector" not in peer and peer["podSelector"] != SMOKE_TEST:
                assert any(selects(peer["podSelector"], pod) for pod in labels), (policy["metadata"]["name"], peer)


def test_vllm_accepts_its_load_balancer_clients_and_prometheus_and_https_keeps_off_the_private_ranges():
    """An internal load balancer names its clients: the stack's source ranges (the client's own address, kept by
    externalTrafficPolicy Local), never every address; pods and nodes of the cluster are not in an ipBlock on
    Cilium."""
    (server,) = [p for p in policies("vllm") if p["metadata"]["name"] == "vllm-server"]
    ingress = server["spec"]["ingress"]
    (service,) = [o for o in objects("vllm") if o["kind"] == "Service" and o["spec"].get("type") == "LoadBalancer"]
    ranges = service["spec"]["loadBalancerSourceRanges"]
    assert ranges and "0.0.0.0/0" not in ranges
    assert ingress[0] == {
        "from": [{"ipBlock": {"cidr": c}} for c in ranges],
        "ports": [{"port": 8000, "protocol": "TCP"}],
    }
    assert ingress[2]["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gmp-system"}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}},
        }
    ]
    https = [r for r in server["spec"]["egress"] if r["ports"] == [{"port": 443, "protocol": "TCP"}]]
    assert https == [
        {
            "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}}],
            "ports": [{"port": 443, "protocol": "TCP"}],
        }
    ]


def test_ray_pods_talk_to_each_other_on_every_port_and_others_reach_only_the_dashboard():
    head = next(p for p in policies("raytrain") if p["metadata"]["name"] == "ray-head")["spec"]
    cluster_rule, *dashboard, _ = head["ingress"]
    assert cluster_rule["ports"] == [{"protocol": "TCP"}] and cluster_rule["from"] == [
        {"podSelector": {"matchLabels": {"tpu-stacks.dev/ray-cluster": "maxtext-tpu-cluster"}}}
    ]
    # The dashboard's job API: the submitter and GKE's Ray add-on through konnectivity; nobody else, and no pod
    # selector trusted in every namespace (a label is no identity: anyone may set it on a pod of their own).
    assert [rule["ports"] for rule in dashboard] == [[{"port": 8265, "protocol": "TCP"}]] * 2
    assert all(rule["from"] and rule["from"][0].get("podSelector", {}).get("matchLabels") for rule in dashboard)
    assert all(peer.get("namespaceSelector") != {} for rule in dashboard for peer in rule["from"])


@pytest.mark.parametrize("stack", STACKS)
def test_no_stack_declares_a_pod_in_the_default_namespace(stack):
    found = pods(stack)
    assert found or stack == "cluster", stack  # the cluster-only stack declares no pods
    assert all(ns != "default" for _, ns, _ in found)


def _port_numbers(template: dict[str, Any], port: Any) -> int:
    """A PodMonitoring endpoint's port: a number, or a container port's name in the template."""
    if isinstance(port, int):
        return port
    named = {p.get("name"): p["containerPort"] for c in containers(template) for p in c.get("ports", [])}
    return named[port]


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_managed_prometheus_may_scrape_every_port_a_pod_monitoring_names(stack):
    """Each PodMonitoring's pods accept its ports from the gmp-system collectors, or nothing is scraped."""
    monitorings = [o for o in objects(stack) if o["kind"] == "PodMonitoring"]
    collectors = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gmp-system"}},
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}},
    }
    for monitoring in monitorings:
        namespace = monitoring["metadata"]["namespace"]
        scraped = [
            t
            for _, ns, t in pods(stack)
            if ns == namespace and selects(monitoring["spec"]["selector"], t["metadata"].get("labels", {}))
        ]
        assert scraped, monitoring["metadata"]["name"]
        for template in scraped:
            if template["spec"].get("hostNetwork"):
                continue
            (own,) = [
                p
                for p in policies(stack)
                if p["metadata"]["namespace"] == namespace
                and p["spec"]["podSelector"]
                and selects(p["spec"]["podSelector"], template["metadata"]["labels"])
            ]
            allowed = {
                port["port"]
                for rule in own["spec"].get("ingress", [])
                if collectors in rule.get("from", []) or "from" not in rule
                for port in rule.get("ports", [])
            }
            for endpoint in monitoring["spec"]["endpoints"]:
                assert _port_numbers(template, endpoint["port"]) in allowed, (own["metadata"]["name"], endpoint)
