"""Wrong locations, projects, universes and machine types in a stack file, as a careless user writes
them: each is refused by `tpu-stacks plan` with a non-zero exit and exactly one stderr line that names
the key as written (`gcp:zone`, `tpu-stacks:cluster.location`, `tpu-stacks:jetstream.zone`...), no
traceback, and no resource declared before the refusal. The plan runs in-process (the console
script's own `run`), and every program run is recorded so the declared resources can be counted."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clients import CLIENTS
from tpu_stacks_preview import cli as plan_cli
from tpu_stacks_preview.capture import STACK_TYPE

ROOT = Path(__file__).resolve().parents[2]
BASE = {"gcp:project": "my-tpu-project", "gcp:region": "us-central1"}
V6E = [{"generation": "v6e", "topology": "2x4"}]
V5E = [{"generation": "v5e", "topology": "2x4"}]
QWEN = "Qwen/Qwen2.5-1.5B-Instruct"
RAYTRAIN = yaml.safe_load((ROOT / "Pulumi.raytrain.yaml").read_text())["config"]["tpu-stacks:raytrain"]  # v6e 4x4
S3NS = {"gcp:universeDomain": "s3nsapis.fr", "gcp:project": "s3ns:my-tpu-project", "gcp:region": "u-france-east1"}


@dataclass(frozen=True)
class Case:
    id: str
    config: dict[str, Any]
    key: str
    """The key as the user wrote it: the one line starts with `tpu-stacks: KEY: `."""
    also: tuple[str, ...] = ()


def cluster(**fields: Any) -> dict[str, Any]:
    return {"tpu-stacks:cluster": {"name": "c", **fields}}


CASES = [
    # -- regions and zones that do not exist -------------------------------------------------------------
    Case(
        "gcp-zone-no-region",
        {"gcp:region": "us-central9", "gcp:zone": "us-central9-a", **cluster(slices=V6E)},
        "gcp:zone",
        ("is in us-central9, which is not a region",),
    ),
    Case(
        "gcp-region-no-region",
        {"gcp:region": "europe-west99", **cluster(slices=V6E)},
        "gcp:region",
        ("is not a region of Google Cloud", "Compute Engine"),
    ),
    Case("location-no-region", cluster(location="asia-middle7", slices=V6E), "tpu-stacks:cluster.location"),
    Case(
        "location-no-zone",
        cluster(location="us-central1-d", slices=V6E),
        "tpu-stacks:cluster.location",
        ("is not a zone of us-central1", "us-central1-a, us-central1-b"),
    ),
    Case(
        "node-location-no-zone",
        cluster(location="us-central1", nodeLocations=["us-central1-e"], slices=V6E),
        "tpu-stacks:cluster.nodeLocations[0]",
        ("is not a zone of us-central1",),
    ),
    Case(
        "slice-zone-no-zone",
        cluster(
            location="us-east5", nodeLocations=["us-east5-a", "us-east5-b"], slices=[{**V6E[0], "zone": "us-east5-x"}]
        ),
        "tpu-stacks:cluster.slices[0].zone",
        ("is not a zone of us-east5",),
    ),
    Case(
        "existing-no-zone",
        {
            "tpu-stacks:scenario": "vllm",
            **cluster(location="us-central1-b", existing={"name": "prod", "location": "us-central1-q"}),
            "tpu-stacks:vllm": {"model": QWEN, "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.existing.location",
    ),
    Case(
        "s3ns-zone-no-zone",
        {
            **S3NS,
            "gcp:zone": "u-france-east1-d",
            "tpu-stacks:scenario": "saxml",
            **cluster(),
            "tpu-stacks:saxml": {"sourceRanges": CLIENTS},
        },
        "gcp:zone",
        ("is not a zone of universe s3ns",),
    ),
    Case("google-zone-of-s3ns", cluster(location="u-france-east1-a", slices=V6E), "tpu-stacks:cluster.location"),
    Case(
        "gcp-zone-outside-gcp-region",
        {"gcp:zone": "us-east5-a", **cluster(slices=V6E)},  # BASE sets gcp:region us-central1
        "gcp:zone",
        ("is not a zone of gcp:region 'us-central1'",),
    ),
    Case(
        "gcp-zone-is-a-region",
        {"gcp:zone": "us-central1", **cluster(slices=V6E)},  # passed before: a region is its own region
        "gcp:zone",
        ("is not a zone of gcp:region 'us-central1'",),
    ),
    # -- zones that do not offer the slice's TPU generation -------------------------------------------
    Case(
        "location-without-v6e",
        cluster(location="us-central1-a", slices=V6E),
        "tpu-stacks:cluster.location",
        ("does not offer TPU v6e", "use us-central1-b", "TPU regions and zones", "cluster.allowUncatalogued"),
    ),
    Case(
        "gcp-zone-without-v5e",
        {"gcp:zone": "us-central1-b", **cluster(slices=V5E)},
        "gcp:zone",
        ("does not offer TPU v5e", "use us-central1-a"),
    ),
    Case(
        "slice-zone-without-v6e",
        cluster(
            location="us-central1",
            nodeLocations=["us-central1-a", "us-central1-b"],
            slices=[{**V6E[0], "zone": "us-central1-a"}],
        ),
        "tpu-stacks:cluster.slices[0].zone",
        ("does not offer TPU v6e",),
    ),
    Case(
        "one-node-location-without-v4",
        cluster(location="us-east5", nodeLocations=["us-east5-c"], slices=[{"generation": "v4", "topology": "2x2x1"}]),
        "tpu-stacks:cluster.nodeLocations[0]",
        ("does not offer TPU v4", "use us-central2-b"),
    ),
    Case(
        "tpu7x-outside-us-central1",
        cluster(
            location="europe-west4-a",
            minVersion="1.34.3-gke.1318000",
            slices=[{"generation": "tpu7x", "topology": "2x2x1"}],
        ),
        "tpu-stacks:cluster.location",
        ("does not offer TPU tpu7x",),
    ),
    Case(
        "autopilot-region-without-v6e",
        cluster(location="europe-west1", mode="autopilot", slices=V6E),
        "tpu-stacks:cluster.location",
        ("has no zone that offers TPU v6e", "use europe-west4-a"),
    ),
    Case(
        "vllm-without-v6e",
        {
            "tpu-stacks:scenario": "vllm",
            **cluster(location="us-west4-a"),
            "tpu-stacks:vllm": {"model": QWEN, "tpuGeneration": "v6e", "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.location",
        ("does not offer TPU v6e",),
    ),
    Case(
        "jetstream-zone-without-v5e",
        {
            "gcp:region": "us-west4",
            "tpu-stacks:scenario": "jetstream",
            **cluster(location="us-west4", nodeLocations=["us-west4-a", "us-west4-b"]),
            "tpu-stacks:jetstream": {"model": "google/gemma-7b-it", "tpuGeneration": "v5e", "zone": "us-west4-b"},
        },
        "tpu-stacks:jetstream.zone",
        ("does not offer TPU v5e", "use us-west4-a"),
    ),
    Case(
        "saxml-without-v5e",
        {
            "tpu-stacks:scenario": "saxml",
            **cluster(location="us-central1-b"),
            "tpu-stacks:saxml": {"sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.location",
        ("does not offer TPU v5e",),
    ),
    Case(
        "gcp-zone-without-v6e-raytrain",
        {"gcp:zone": "us-central1-a", "tpu-stacks:scenario": "raytrain", **cluster(), "tpu-stacks:raytrain": RAYTRAIN},
        "gcp:zone",
        ("does not offer TPU v6e",),
    ),
    # -- machine types that do not exist -----------------------------------------------------------------
    Case(
        "system-pool-size",
        cluster(location="us-central1-b", systemPool={"machineType": "e2-standard-3"}, slices=V6E),
        "tpu-stacks:cluster.systemPool.machineType",
        ("is not a machine type of the E2 series",),
    ),
    Case(
        "system-pool-series",
        cluster(location="us-central1-b", systemPool={"machineType": "z9-standard-4"}, slices=V6E),
        "tpu-stacks:cluster.systemPool.machineType",
        ("is not a machine type in the catalogue",),
    ),
    Case(
        "slice-machine-type",
        cluster(location="us-central1-b", slices=[{**V6E[0], "machineType": "ct6e-standard-2t"}]),
        "tpu-stacks:cluster.slices[0].machineType",
    ),
    # -- project ids and numbers ---------------------------------------------------------------------------
    Case("gcp-project-short", {"gcp:project": "proj", **cluster(location="us-central1-b")}, "gcp:project", ("6-30",)),
    Case("gcp-project-upper", {"gcp:project": "My-Project", **cluster(location="us-central1-b")}, "gcp:project"),
    Case("gcp-project-underscore", {"gcp:project": "my_project", **cluster(location="us-central1-b")}, "gcp:project"),
    Case(
        "cluster-project-hyphen", cluster(location="us-central1-b", project="my-project-"), "tpu-stacks:cluster.project"
    ),
    Case("cluster-project-digit", cluster(location="us-central1-b", project="1project"), "tpu-stacks:cluster.project"),
    Case(
        "gcp-project-s3ns-short",
        {**S3NS, "gcp:project": "s3ns:ab", **cluster(location="u-france-east1-a")},
        "gcp:project",
    ),
    Case(
        "existing-project",
        {
            "tpu-stacks:scenario": "vllm",
            **cluster(
                location="us-central1-b", existing={"name": "prod", "location": "us-central1-b", "project": "Bad_Proj"}
            ),
            "tpu-stacks:vllm": {"model": QWEN, "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.existing.project",
    ),
    Case(
        "project-number-letters",
        {**cluster(location="us-central1-b"), "tpu-stacks:identity": {"projectNumber": "12ab34"}},
        "tpu-stacks:identity.projectNumber",
        ("is not a project number",),
    ),
    Case(
        "project-number-zero",
        {**cluster(location="us-central1-b"), "tpu-stacks:identity": {"projectNumber": "0123"}},
        "tpu-stacks:identity.projectNumber",
    ),
    # -- universe and gcp:universeDomain -----------------------------------------------------------------
    Case(
        "universe-domain-typo",
        {"gcp:universeDomain": "s3nsapis.com", **cluster(location="us-central1-b")},
        "gcp:universeDomain",
        ("is not the API domain of a known universe",),
    ),
    Case(
        "universe-without-domain",
        cluster(location="u-france-east1-a", universe="s3ns"),
        "tpu-stacks:cluster.universe",
        ("needs gcp:universeDomain: s3nsapis.fr",),
    ),
    Case(
        "universe-contradicts-domain",
        {**S3NS, **cluster(location="u-france-east1-a", universe="google")},
        "tpu-stacks:cluster.universe",
        ("contradicts gcp:universeDomain",),
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    directory = tmp_path_factory.mktemp("location-cases")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "stacks", directory / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    return directory


def plan(project: Path, stack: str, config: dict[str, Any], monkeypatch, out: Path | None = None):
    """`tpu-stacks plan --stack STACK` in-process: (exit code, stdout, stderr, resources declared by a failed run)."""
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": {**BASE, **config}}))
    runs = []
    real = plan_cli.run_program

    def recording(*args, **kwargs):
        runs.append(real(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(plan_cli, "run_program", recording)
    parser = argparse.ArgumentParser()
    plan_cli.add_arguments(parser)  # the CLI's own flags and defaults, as `tpu-stacks plan` parses them
    argv = ["--stack", stack, "--cwd", str(project), "--placeholder-secrets"] + (["--json", str(out)] if out else [])
    args = parser.parse_args(argv)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = plan_cli.run(args)
    declared = [f"{r.type} {r.name}" for run in runs if run.error for r in run.resources if r.type != STACK_TYPE]
    return code, stdout.getvalue(), stderr.getvalue(), declared


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 25 and len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_wrong_location_project_or_universe_is_one_line_before_any_resource(project, monkeypatch, case):
    code, stdout, stderr, declared = plan(project, f"loc-{case.id}", case.config, monkeypatch)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code != 0, stdout[-2000:]
    assert "Traceback" not in stdout + stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"tpu-stacks: {case.key}: "), lines[0]
    for text in case.also:
        assert text in lines[0], lines[0]
    assert declared == [], declared


def test_the_override_plans_and_the_plan_document_records_it(project, monkeypatch, tmp_path):
    """`cluster.allowUncatalogued: true` for a zone newer than the catalogue: planned, labelled, warned."""
    config = cluster(location="us-west4-a", allowUncatalogued=True, slices=V6E)
    code, stdout, stderr, _ = plan(project, "loc-override", config, monkeypatch, tmp_path / "plan.json")
    assert code == 0, stderr
    assert "cluster.location: 'us-west4-a' does not offer TPU v6e in the catalogue" in stdout  # the warning
    document = json.loads((tmp_path / "plan.json").read_text())
    (gke,) = [r for r in document["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert gke["inputs"]["resourceLabels"]["tpu-stacks-uncatalogued"] == "true"


def test_without_the_override_the_same_cluster_has_no_label(project, monkeypatch, tmp_path):
    config = cluster(location="us-central1-b", slices=V6E)
    code, _, stderr, _ = plan(project, "loc-plain", config, monkeypatch, tmp_path / "plan.json")
    assert code == 0, stderr
    document = json.loads((tmp_path / "plan.json").read_text())
    (gke,) = [r for r in document["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert "tpu-stacks-uncatalogued" not in gke["inputs"]["resourceLabels"]
