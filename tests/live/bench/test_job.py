"""The objects one bench run creates, built from planned stacks: valid against Kubernetes' own schemas, the Job
hardened, its NetworkPolicy the contract's (DNS, the server's port, HTTPS out; no ingress), admitted by the server's
own policy, and the ConfigMap holding the configuration bench means to send."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.live.support import ROOT, planned
from tpu_stacks.k8s.connectivity import ANNOTATION
from tpu_stacks.k8s.platform_flows import PRIVATE_RANGES
from tpu_stacks_live.bench.config import IMAGE, INFERENCE_PERF_VERSION, Workload
from tpu_stacks_live.bench.job import RUN, config_document, deadline_seconds, group, manifests
from tpu_stacks_live.bench.target import bench_target
from tpu_stacks_live.probe.contract import selects
from tpu_stacks_preview.schema import validate_objects

WORKLOAD = Workload(rates=(1.0, 2.0, 4.0), input_tokens=1800, output_tokens=128, duration_s=120)


def _objects(stack: str) -> tuple[dict, dict, dict]:
    policy, config_map, job = manifests(bench_target(planned(stack)), WORKLOAD, "abc123")
    return policy, config_map, job


@pytest.mark.parametrize("stack", ["dev", "vllm-gateway", "vllm-405b"])
def test_the_objects_are_valid_kubernetes_objects(stack):
    report = validate_objects(list(_objects(stack)), kubernetes_version="1.33", project_dir=ROOT)
    assert report.problems == [] and report.validated == 3


def test_the_job_runs_the_pinned_image_once_hardened_and_bounded():
    _, config_map, job = _objects("dev")
    assert IMAGE == f"quay.io/inference-perf/inference-perf:v{INFERENCE_PERF_VERSION}"
    spec = job["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == IMAGE and not IMAGE.endswith(":latest")
    assert container["command"] == ["inference-perf", "--config_file", "/config/config.yml"]
    assert (spec["backoffLimit"], pod["restartPolicy"]) == (0, "Never")
    assert spec["activeDeadlineSeconds"] == deadline_seconds(WORKLOAD) > 3 * 120
    assert spec["ttlSecondsAfterFinished"] > 0
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
    context = container["securityContext"]
    assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert set(container["resources"]["limits"]) == {"cpu", "memory"}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/config"]["readOnly"] is True
    assert {"/tmp", "/home/app"} <= set(mounts)  # reports and the Hugging Face cache, on emptyDirs
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"]["name"] == config_map["metadata"]["name"]
    assert all(job["metadata"]["labels"][RUN] == "abc123" for job in (job, config_map))


def test_the_config_map_holds_the_configuration_for_the_stacks_server():
    target = bench_target(planned("dev"))
    _, config_map, _ = _objects("dev")
    document = yaml.safe_load(config_map["data"]["config.yml"])
    assert document == config_document(target, WORKLOAD)
    assert document["server"] == {
        "type": "vllm",
        "model_name": "Qwen/Qwen2.5-1.5B-Instruct",
        "base_url": "http://vllm-service.vllm.svc.cluster.local:8000",
        "ignore_eos": True,
    }
    assert document["tokenizer"] == {"pretrained_model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct"}
    assert [s["rate"] for s in document["load"]["stages"]] == [1.0, 2.0, 4.0]
    assert document["data"]["input_distribution"]["mean"] == 1800
    assert document["storage"]["local_storage"]["path"].startswith("/tmp/")
    assert "api_key" not in json.dumps(document)


def test_secrets_reach_the_pod_from_their_secrets_never_the_config_map():
    _, config_map, job = _objects("vllm-gateway")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "hf-secret", "key": "api_key"}
    assert container["command"][-2:] == ["--server.api_key", "$(API_KEY)"]  # expanded by the kubelet
    assert env["HF_TOKEN_PATH"]["value"] == "/var/run/secrets/huggingface/hf_api_token"
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    assert volumes["hf-token"]["secret"] == {
        "secretName": "hf-secret",
        "items": [{"key": "hf_api_token", "path": "hf_api_token"}],
    }
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["hf-token"] == {"name": "hf-token", "mountPath": "/var/run/secrets/huggingface", "readOnly": True}
    assert "hf-secret" not in config_map["data"]["config.yml"]


def test_the_network_policy_is_the_contract_no_ingress_and_three_egress_flows():
    policy, _, job = _objects("dev")
    spec = policy["spec"]
    pod_labels = job["spec"]["template"]["metadata"]["labels"]
    assert selects(spec["podSelector"]["matchLabels"], pod_labels)
    assert spec["podSelector"]["matchLabels"][RUN] == "abc123"  # this run's pod, no other
    assert spec["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in spec
    rules = spec["egress"]
    assert rules[0] == {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
    assert rules[1] == {
        "to": [{"podSelector": {"matchLabels": {"app": "vllm-tpu"}}}],
        "ports": [{"port": 8000, "protocol": "TCP"}],
    }
    assert rules[2] == {
        "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": list(PRIVATE_RANGES)}}],
        "ports": [{"port": 443, "protocol": "TCP"}],
    }
    flows = json.loads(policy["metadata"]["annotations"][ANNOTATION])
    assert flows == json.loads(group(bench_target(planned("dev"))).annotation())
    assert {(f["direction"], f["peer"]["kind"], f["port"]) for f in flows} == {
        ("egress", "hosts", 53),
        ("egress", "pods", 8000),
        ("egress", "external", 443),
    }


@pytest.mark.parametrize("stack", ["dev", "vllm-gateway", "vllm-405b"])
def test_the_servers_own_policy_admits_the_bench_pod_on_the_port_it_calls(stack):
    plan = planned(stack)
    target = bench_target(plan)
    _, _, job = _objects(stack)
    pod_labels = job["spec"]["template"]["metadata"]["labels"]
    server_policies = [
        p
        for p in plan.of_kind("NetworkPolicy")
        if p["metadata"]["namespace"] == target.namespace
        and selects(p["spec"]["podSelector"].get("matchLabels") or {}, target.server_labels)
        and p["spec"]["podSelector"].get("matchLabels")
    ]
    admitted = [
        rule
        for p in server_policies
        for rule in p["spec"].get("ingress") or []
        if any(
            "podSelector" in peer
            and "namespaceSelector" not in peer
            and selects(peer["podSelector"].get("matchLabels") or {}, pod_labels)
            for peer in rule.get("from") or []
        )
        and any(port.get("port") == target.server_port for port in rule.get("ports") or [])
    ]
    assert admitted, f"no ingress rule of {[p['metadata']['name'] for p in server_policies]} admits {pod_labels}"


def _settings(document: dict, prefix: str = "") -> list[str]:
    """Every setting of the configuration file, as `section.key` (a length distribution or the stage list whole)."""
    found = []
    for key, value in document.items():
        if isinstance(value, dict) and not key.endswith("_distribution"):
            found += _settings(value, f"{prefix}{key}.")
        else:
            found.append(f"{prefix}{key}")
    return found


def test_every_setting_bench_passes_to_inference_perf_has_a_ledger_row():
    """Each key of the file is named, in backticks, by a claim of an inference-perf row (`server.base_url`, the report
    switches and `data.type` had none): what we pass is what upstream was read to do with it."""
    from tpu_stacks.catalog.upstream import ledger

    claims = [row.claim for row in ledger().rows_of("inference-perf")]
    settings = _settings(config_document(bench_target(planned("dev")), WORKLOAD))
    assert "server.base_url" in settings and "report.request_lifecycle.per_request" in settings
    assert [key for key in settings if not any(f"`{key}" in claim for claim in claims)] == []


def test_the_token_file_variable_is_the_one_the_pinned_huggingface_hub_releases_read():
    """bench's inference-perf (huggingface_hub 1.x, through transformers 5.13.0) and the servers whose variable it
    copies (vLLM's 1.x, SGLang's 0.34) read the same name; the Job takes it from the ledger, not typed again."""
    from tpu_stacks.catalog.upstream import text
    from tpu_stacks_live.bench.job import HF_TOKEN_PATH

    assert HF_TOKEN_PATH == text("huggingface-hub-sglang.token-path") == "HF_TOKEN_PATH"
