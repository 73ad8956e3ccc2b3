"""The probe pod: hardened by the library's own rules, never Ready, labelled to be found, valid for the API."""

from __future__ import annotations

import re

import kubernetes_validate
import pytest
from kubernetes.client import ApiClient, V1Pod

from tests.live.probe.stacks import objects
from tpu_stacks.catalog.image_users import PYTHON
from tpu_stacks.k8s.security import container_security_context, pod_security_context
from tpu_stacks.objects.annotations import API_TOKEN_REASON
from tpu_stacks_live.probe import plan, pod

RUN = "0a1b2c"


@pytest.fixture(scope="module")
def probes() -> dict[str, plan.Probe]:
    return {p.check: p for p in plan.probes(objects("vllm-gateway"))}


def build(probe: plan.Probe) -> dict:
    attempts = list(probe.attempts) or [{"id": "connect", "op": "connect", "host": "10.8.2.5", "port": 8000}]
    return pod.manifest(probe, attempts, "docker.io/library/python:3.12.8-slim-bookworm", RUN, 60)


def test_every_probe_pod_is_hardened_as_harden_hardens_the_python_image(probes):
    for probe in probes.values():
        manifest = build(probe)
        spec = manifest["spec"]
        assert spec["securityContext"] == pod.plain(pod_security_context(PYTHON))
        (container,) = spec["containers"]
        assert container["securityContext"] == pod.plain(container_security_context(PYTHON))
        assert container["securityContext"]["runAsNonRoot"] and container["securityContext"]["readOnlyRootFilesystem"]
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert {m["mountPath"] for m in container["volumeMounts"]} == {"/tmp", "/home/app"}
        assert spec["restartPolicy"] == "Never" and spec["activeDeadlineSeconds"] == 90
        # No shell: the agent's Python source is the program, its spec the one argument.
        assert container["command"][:2] == ["python3", "-c"] and "def main" in container["command"][2]


def test_only_a_probe_of_the_api_server_keeps_a_token_and_says_why(probes):
    for check, probe in probes.items():
        manifest = build(probe)
        token = manifest["spec"]["automountServiceAccountToken"]
        assert token is check.startswith("probe-api-server"), check
        assert (API_TOKEN_REASON in manifest["metadata"]["annotations"]) is token
    picker = build(probes["probe-api-server:vllm/vllm-epp"])
    assert picker["spec"]["serviceAccountName"] == "vllm-epp"
    assert "serviceAccountName" not in build(probes["probe-dns:vllm/vllm-epp"])["spec"]


def test_the_pod_never_becomes_ready_and_carries_the_flows_labels_and_its_runs(probes):
    manifest = build(probes["probe-tpu-runtime:vllm/vllm-server"])
    assert manifest["spec"]["readinessGates"] == [{"conditionType": "tpu-stacks.dev/probe-never-ready"}]
    assert manifest["metadata"]["labels"] == {
        "app": "vllm-tpu",
        "tpu-stacks.dev/probe": "true",
        "tpu-stacks.dev/probe-run": RUN,
        "tpu-stacks.dev/probe-kind": "tpu-runtime",
    }
    env = {e["name"]: e for e in manifest["spec"]["containers"][0]["env"]}
    assert env["NODE_IP"]["valueFrom"] == {"fieldRef": {"fieldPath": "status.hostIP"}}
    assert env["RES_OPTIONS"]["value"] == "timeout:2 attempts:2"  # a dropped DNS query fails within the timeout
    deny = build(probes["probe-deny:vllm/vllm-server:8000"])
    assert {k for k in deny["metadata"]["labels"] if not k.startswith("tpu-stacks.dev/probe")} == set()


def test_pod_names_are_valid_and_unique_per_probe(probes):
    names = [build(p)["metadata"]["name"] for p in probes.values()]
    assert len(set(names)) == len(names)
    assert all(len(n) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", n) for n in names)


def test_the_pod_is_valid_for_the_strict_pod_schema_and_the_pinned_clients_model(probes):
    for probe in probes.values():
        manifest = build(probe)
        kubernetes_validate.validate(manifest, "1.33", strict=True)
        assert ApiClient().sanitize_for_serialization(V1Pod.from_dict(manifest)) == manifest
    broken = build(probes["probe-dns:vllm/vllm-server"])
    broken["spec"]["readinessGate"] = broken["spec"].pop("readinessGates")  # a typo must not pass
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.33", strict=True)


def test_the_help_says_creating_pods_is_the_only_write():
    from tpu_stacks_live.probe import HELP

    assert "the only write verify makes" in HELP and "without --probe it only reads" in HELP
