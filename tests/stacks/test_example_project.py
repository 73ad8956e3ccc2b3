"""A user's own Pulumi project that installs the components and builds a TpuCluster plans offline."""

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cluster-only"
PLAN = str(Path(sys.executable).parent / "tpu-stacks")


def test_example_installs_the_components_like_a_user():
    requirement = (EXAMPLE / "requirements.txt").read_text()
    assert "tpu-stacks @ file:../../components" in requirement
    assert (EXAMPLE / requirement.split("file:")[1].strip() / "pyproject.toml").exists()
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert project["runtime"]["name"] == "python" and project["name"] != "tpu-stacks"


def test_plan_of_the_example(tmp_path):
    out = tmp_path / "plan.json"
    result = subprocess.run(
        [
            PLAN,
            "plan",
            "--cwd",
            str(EXAMPLE),
            "--stack",
            "dev",
            "--policy-pack",
            str(ROOT / "policies"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["project"] == "tpu-cluster-example"
    pools = [
        r
        for r in document["resources"]
        if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == "serving-tpu-v6e-2x4"
    ]
    assert pools and pools[0]["inputs"]["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert pools[0]["inputs"]["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert [v for v in document["policy"]["violations"] if v["enforcement"] == "mandatory"] == []
