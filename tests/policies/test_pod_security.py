"""Rules 14-16: pods-hardened (mandatory), pods-least-privilege and control-plane-restricted (advisory),
each with a violating and a passing raw resource."""

import pulumi_gcp as gcp

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.objects.annotations import API_TOKEN_REASON

HARDENED = "pods-hardened"
LEAST = "pods-least-privilege"
CONTROL_PLANE = "control-plane-restricted"
GOOD_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "capabilities": {"drop": ["ALL"]},
}
SECCOMP = {"seccompProfile": {"type": "RuntimeDefault"}}


def deployment(container_security=None, pod_notes=None, pod_security=None, **pod):
    spec = o.pod("tpu-v6e-slice", "2x4", 8, securityContext=container_security, **pod)
    if pod_security is not None:
        spec["securityContext"] = pod_security
    return lambda: o.deployment("d", spec, pod_notes=pod_notes)


def cpu_helper(limits):
    spec = {
        "containers": [{"name": "helper", "image": o.PINNED, "securityContext": GOOD_CONTAINER, "resources": limits}],
        "securityContext": SECCOMP,
        "automountServiceAccountToken": False,
    }
    return lambda: o.deployment("h", spec)


def check(build, policy):
    return of(run(capture(build)), policy)


def test_a_plain_pod_escalates_and_has_no_seccomp():
    problems = check(deployment(), HARDENED)
    assert [p.level for p in problems] == ["mandatory", "mandatory"]
    assert (
        "server may gain privileges" in problems[0].message and "allowPrivilegeEscalation: false" in problems[0].message
    )
    assert "without a seccomp profile" in problems[1].message


def test_an_unconfined_container_profile_overrides_the_pods():
    unconfined = {**GOOD_CONTAINER, "seccompProfile": {"type": "Unconfined"}}
    (problem,) = check(deployment(unconfined, pod_security=SECCOMP), HARDENED)
    assert "without a seccomp profile" in problem.message


def test_a_hardened_pod_passes_and_host_network_pods_are_left_to_rule_11():
    assert check(deployment(GOOD_CONTAINER, pod_security=SECCOMP), HARDENED) == []
    assert check(deployment(hostNetwork=True), HARDENED) == []


def _hardened(name: str, image: str = o.PINNED) -> dict:
    return {
        "containers": [{"name": name, "image": image, "securityContext": GOOD_CONTAINER}],
        "securityContext": SECCOMP,
    }


def rayjob(submitter=None, worker=None):
    cluster = {
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": _hardened("ray-head")}},
        "workerGroupSpecs": [
            {
                "groupName": "tpu",
                "replicas": 1,
                "numOfHosts": 1,
                "template": {"spec": worker or _hardened("ray-worker")},
            }
        ],
    }
    return lambda: o.rayjob("train", cluster, submitter)


def test_a_rayjobs_submitter_and_its_cluster_groups_are_judged():
    plain_submitter = {"containers": [{"name": "ray-job-submitter", "image": o.PINNED}]}
    problems = check(rayjob(submitter=plain_submitter), HARDENED)
    assert [p.message.split(":", 1)[0] for p in problems] == ["spec.submitterPodTemplate"] * 2
    assert "ray-job-submitter may gain privileges" in problems[0].message
    plain_worker = {"containers": [{"name": "ray-worker", "image": o.PINNED}]}
    (escalates, _) = check(rayjob(submitter=_hardened("ray-job-submitter"), worker=plain_worker), HARDENED)
    assert escalates.message.startswith("spec.rayClusterSpec.workerGroupSpecs[0].template: container(s) ray-worker")


def test_a_hardened_rayjob_passes_with_or_without_its_own_submitter_template():
    assert check(rayjob(submitter=_hardened("ray-job-submitter")), HARDENED) == []
    assert check(rayjob(), HARDENED) == []  # KubeRay's default submitter is not in the program


def test_least_privilege_lists_each_missing_piece_as_advisory():
    problems = check(deployment({"allowPrivilegeEscalation": False}, pod_security=SECCOMP), LEAST)
    assert {p.level for p in problems} == {"advisory"}
    messages = " | ".join(p.message for p in problems)
    assert "run as root" in messages and "drop ALL" in messages and "readOnlyRootFilesystem" in messages
    assert "API token" in messages
    assert "CPU limit" not in messages  # the TPU container goes without, by design
    assert len(problems) == 4


def test_added_capabilities_other_than_net_bind_service_are_flagged():
    raw = {**GOOD_CONTAINER, "capabilities": {"drop": ["ALL"], "add": ["NET_RAW"]}}
    spec = {"pod_security": SECCOMP, "automountServiceAccountToken": False}
    (problem,) = check(deployment(raw, **spec), LEAST)
    assert "keep capabilities" in problem.message
    allowed = {**GOOD_CONTAINER, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}
    assert check(deployment(allowed, **spec), LEAST) == []


def test_a_least_privilege_pod_passes_and_a_stated_token_reason_is_accepted():
    assert check(deployment(GOOD_CONTAINER, pod_security=SECCOMP, automountServiceAccountToken=False), LEAST) == []
    noted = deployment(GOOD_CONTAINER, {API_TOKEN_REASON: "reads pods"}, pod_security=SECCOMP)
    assert check(noted, LEAST) == []


def test_a_cpu_only_container_needs_a_cpu_limit():
    (problem,) = check(cpu_helper({"limits": {"memory": "1Gi"}}), LEAST)
    assert "helper take no TPU and have no CPU limit" in problem.message
    assert check(cpu_helper({"limits": {"memory": "1Gi", "cpu": "1"}}), LEAST) == []


def cluster(**args):
    return lambda: gcp.container.Cluster("c", location="us-central1-a", initial_node_count=1, **args)


def test_an_open_control_plane_is_advised_against():
    (problem,) = check(cluster(), CONTROL_PLANE)
    assert problem.level == "advisory" and "whole internet" in problem.message
    everyone = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block="0.0.0.0/0")]
    )
    assert len(check(cluster(master_authorized_networks_config=everyone), CONTROL_PLANE)) == 1
    halves = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=block)
            for block in ("0.0.0.0/1", "128.0.0.0/1")  # the whole internet in two pieces
        ]
    )
    assert len(check(cluster(master_authorized_networks_config=halves), CONTROL_PLANE)) == 1


def test_authorized_networks_or_a_private_endpoint_pass():
    office = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block="203.0.113.0/24")]
    )
    assert check(cluster(master_authorized_networks_config=office), CONTROL_PLANE) == []
    private = gcp.container.ClusterPrivateClusterConfigArgs(enable_private_endpoint=True, enable_private_nodes=True)
    assert check(cluster(private_cluster_config=private), CONTROL_PLANE) == []
