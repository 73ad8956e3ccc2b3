"""The shipped `cluster` stack (`Pulumi.cluster.yaml`, the `cluster` scenario of `stacks/cluster_only.py`)
plans with exit code 0 and builds what `examples/cluster-only` builds from a user's own project:
the same v6e 2x4 pool, plus the Workload Identity ServiceAccount a workload's pods run as."""

import json
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks

ROOT = Path(__file__).resolve().parents[2]
POOL = "gcp:container/nodePool:NodePool"


def plan(tmp_path: Path, cwd: Path, stack: str) -> dict:
    out = tmp_path / f"{cwd.name}-{stack}.json"
    command = ["plan", "--cwd", str(cwd), "--stack", stack, "--policy-pack", str(ROOT / "policies")]
    result = tpu_stacks(*command, "--json", str(out))
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def cluster_plan(tmp_path_factory) -> dict:
    return plan(tmp_path_factory.mktemp("cluster"), ROOT, "cluster")


def by_name(document: dict, type_: str) -> dict[str, dict]:
    return {r["name"]: r for r in document["resources"] if r["type"] == type_}


def test_the_stack_file_selects_the_cluster_scenario():
    config = yaml.safe_load((ROOT / "Pulumi.cluster.yaml").read_text())["config"]
    assert config["tpu-stacks:scenario"] == "cluster"
    assert config["tpu-stacks:cluster"]["slices"]  # the cluster scenario takes its slices from the stack file


def test_the_cluster_stack_plans_with_no_violation(cluster_plan):
    assert cluster_plan["stack"] == "cluster"
    # Only the advice that the control plane is open: no network to authorize is known to a shipped stack
    # file (cluster.controlPlane, docs/security.md).
    found = [(v["policy"], v["enforcement"]) for v in cluster_plan["policy"]["violations"]]
    assert found == [("control-plane-restricted", "advisory")], cluster_plan["policy"]["violations"]
    assert cluster_plan["schema"]["problems"] == []


def test_the_tpu_pool_is_the_examples(cluster_plan, tmp_path):
    example = plan(tmp_path, ROOT / "examples" / "cluster-only", "dev")
    ours, theirs = by_name(cluster_plan, POOL)["serving-tpu-v6e-2x4"], by_name(example, POOL)["serving-tpu-v6e-2x4"]
    for field in ("autoscaling", "initialNodeCount", "location", "nodeLocations", "placementPolicy"):
        assert ours["inputs"].get(field) == theirs["inputs"].get(field), field
    assert ours["inputs"]["nodeConfig"]["machineType"] == theirs["inputs"]["nodeConfig"]["machineType"]
    # v6e 2x4 is 8 chips: one ct6e-standard-8t VM, scaling between 1 and 2 nodes (the stack file's bounds)
    assert ours["inputs"]["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert ours["inputs"]["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}


def test_the_workload_identity_service_account(cluster_plan):
    (account,) = by_name(cluster_plan, "kubernetes:core/v1:ServiceAccount").values()
    assert account["inputs"]["metadata"]["name"] == "tpu-workload"
    assert account["inputs"]["metadata"]["namespace"] == "default"
    assert account["provider"] and "serving-k8s" in account["provider"]  # never the ambient kubeconfig
    outputs = cluster_plan["outputs"]
    assert outputs["serviceAccount"] == "tpu-workload"
    assert outputs["workloadPool"] == "my-tpu-project.svc.id.goog"
    assert outputs["workloadMember"].endswith("/my-tpu-project.svc.id.goog/subject/ns/default/sa/tpu-workload")
    assert [s["topology"] for s in outputs["slices"]] == ["2x4"]
