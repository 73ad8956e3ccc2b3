"""The pack as a whole: defaults, configuration, the example config, the docs, the real gRPC
entry point, and an upstream tutorial stack judged end to end."""

import json
import subprocess
import sys
import threading

import grpc
import jsonschema
import pulumi_gcp as gcp
import pytest
import yaml
from pulumi.runtime.proto import analyzer_pb2_grpc

from tests.policies import objects as o
from tests.policies.conftest import PACK_DIR
from tests.policies.harness import Pack, capture, of, raw, run
from tpu_policies import PACK_NAME, POLICIES
from tpu_stacks.catalog.models import SAXML_175B_TEST
from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.gcp.identity import WorkloadIdentity

ADVISORY = {
    "no-public-endpoint",
    "serving-clients-named",
    "pinned-images",
    "tpu-model-sizable",
    "tpu-slo-capacity-modelled",
    "pods-least-privilege",
    "control-plane-restricted",
    "tpu-zone-catalogued",
}
BAD_POOL = raw(
    "gcp:container/nodePool:NodePool",
    "tpu",
    {
        "nodeCount": 4.0,
        "placementPolicy": {"type": "COMPACT", "tpuTopology": "4x8"},
        "nodeLocations": ["us-central1-a"],
        "nodeConfig": {"machineType": "ct5lp-hightpu-4t", "workloadMetadataConfig": {"mode": "GKE_METADATA"}},
    },
)


def test_defaults_mandatory_except_the_advisory_rules():
    """no-privileged-pods is mandatory by default since issue 20; tpu-model-sizable is advisory."""
    info = Pack().info
    assert info.name == PACK_NAME
    levels = {name: level for name, (level, _) in Pack().config.items()}
    assert len(levels) == len(POLICIES) == 25
    assert {name for name, level in levels.items() if level == "advisory"} == ADVISORY
    assert {level for name, level in levels.items() if name not in ADVISORY} == {"mandatory"}


def test_advisory_rule_made_mandatory_and_mandatory_rule_disabled_by_config():
    lb = capture(lambda: o.service("vllm"))
    assert [d.level for d in of(run(lb), "no-public-endpoint")] == ["advisory"]
    assert [d.level for d in of(run(lb, {"no-public-endpoint": "mandatory"}), "no-public-endpoint")] == ["mandatory"]
    assert [
        d.level for d in of(run(lb, {"no-public-endpoint": {"enforcementLevel": "mandatory"}}), "no-public-endpoint")
    ] == ["mandatory"]
    assert len(of(run([BAD_POOL]), "tpu-node-pool-shape")) == 1
    assert run([BAD_POOL], {"tpu-node-pool-shape": "disabled"}) == []
    assert {d.level for d in run([BAD_POOL] + lb, {"all": "advisory"})} == {"advisory"}


def test_settings_are_validated_against_the_schema():
    with pytest.raises(jsonschema.ValidationError):
        Pack({"storage-least-privilege": {"deniedRoles": "roles/owner"}})


def test_example_config_covers_every_policy_and_is_valid():
    config = json.loads((PACK_DIR / "config.example.json").read_text())
    assert set(config) == {p.name for p in POLICIES}
    pack = Pack(config)  # reconciled and schema-validated as the engine does
    assert {name: level for name, (level, _) in pack.config.items()} == {
        name: level for name, (level, _) in Pack().config.items()
    }
    for policy in POLICIES:
        schema = policy.config_schema.properties if policy.config_schema else {}
        given = config[policy.name] if isinstance(config[policy.name], dict) else {}
        assert set(given) - {"enforcementLevel"} == set(schema), policy.name  # every setting shown, none invented


def test_docs_describe_every_policy_and_setting():
    docs = (PACK_DIR.parent / "docs" / "policies.md").read_text()
    for policy in POLICIES:
        assert f"`{policy.name}`" in docs
        for setting in policy.config_schema.properties if policy.config_schema else {}:
            assert f"`{setting}`" in docs


def test_pack_files_for_the_cli():
    manifest = yaml.safe_load((PACK_DIR / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python" and manifest["description"]
    requirements = (PACK_DIR / "requirements.txt").read_text()
    assert "pulumi-policy" in requirements and "-e ../components" in requirements


def test_entry_point_serves_the_same_verdicts_over_grpc():
    """`python policies` as the CLI starts it: port on stdout, GetAnalyzerInfo -> Configure -> Analyze."""
    process = subprocess.Popen(
        [sys.executable, str(PACK_DIR)], cwd=PACK_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    watchdog = threading.Timer(30, process.kill)
    watchdog.start()
    try:
        line = process.stdout.readline()
        assert line.strip().isdigit(), process.stderr.read().decode()
        with grpc.insecure_channel(f"127.0.0.1:{int(line)}") as channel:
            stub = analyzer_pb2_grpc.AnalyzerStub(channel)
            config = {"no-public-endpoint": "mandatory"}
            resources = [BAD_POOL] + capture(lambda: o.service("vllm"))
            over_grpc = Pack(config, transport=stub).analyze(resources)
        assert over_grpc == Pack(config).analyze(resources)
        assert {(d.policy, d.level) for d in over_grpc} == {
            ("tpu-node-pool-shape", "mandatory"),
            ("no-public-endpoint", "mandatory"),
        }
    finally:
        watchdog.cancel()
        process.kill()
        process.wait()


def test_saxml_tutorial_as_upstream_wrote_it():
    """Two v5e 4x8 slices, the 175B test model, and the tutorial's bad practices (upstream-manifests 2.7)."""

    def stack():
        cluster = TpuCluster(
            "sax",
            {
                "project": "p",
                "location": "us-central1-a",
                "slices": [{"generation": "v5e", "topology": "4x8", "count": 2, "name": "tpu"}],
            },
        )
        WorkloadIdentity(
            "sax", {"project": "p", "ksa_name": "sax-sa", "mode": "service-account", "gsa_name": "sax-iam-sa"}
        )
        gcp.projects.IAMMember(
            "sax-admin",
            project="p",
            role="roles/storage.admin",
            member="serviceAccount:sax-iam-sa@p.iam.gserviceaccount.com",
        )
        notes = o.serving_notes(SAXML_175B_TEST, 32, engine="saxml", context=256)
        model_server = o.pod(
            "tpu-v5-lite-podslice",
            "4x8",
            4,
            securityContext={"privileged": True},
            hostNetwork=True,
            dnsPolicy="ClusterFirstWithHostNet",
        )
        o.jobset("sax-model-server-set", model_server, 8, notes)
        o.deployment(
            "sax-http",
            {
                "containers": [
                    {"name": "sax-http", "image": "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0"}
                ]
            },
        )
        o.service("sax-http-lb")
        return cluster

    found = run(capture(stack))
    # pods-hardened: sax-http escalates and has no seccomp (the host-network model server is rule 11's);
    # pods-least-privilege: root, capabilities, writable root and the API token on both pods, plus sax-http's
    # missing CPU limit (the model server takes TPUs); control-plane-restricted: the default public endpoint.
    assert sorted((d.policy, d.level) for d in found) == [
        ("control-plane-restricted", "advisory"),
        ("no-privileged-pods", "mandatory"),
        ("no-privileged-pods", "mandatory"),
        ("no-public-endpoint", "advisory"),
        *[("pods-hardened", "mandatory")] * 2,
        *[("pods-least-privilege", "advisory")] * 9,
        ("storage-least-privilege", "mandatory"),
    ]
    assert not [d for d in found if "can't run policy" in d.message]
