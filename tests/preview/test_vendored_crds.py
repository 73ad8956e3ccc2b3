"""The CRD schemas ship with the preview package: strict custom-resource checks in any clone."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import pytest

from tpu_stacks_preview.schema import LIBRARY_CRDS, VENDORED_CRDS, resolve_crd_dir, validate_objects

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "ns"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:1.37"}], "restartPolicy": "Never"}}}}}]},
}  # fmt: skip
RAYCLUSTER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "rc", "namespace": "ns"},
    "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {
        "containers": [{"name": "head", "image": "rayproject/ray:2.49.0"}]}}}},
}  # fmt: skip
RAYSERVICE = {
    "apiVersion": "ray.io/v1",
    "kind": "RayService",
    "metadata": {"name": "rs", "namespace": "ns"},
    "spec": {"serveConfigV2": "applications: []\n", "rayClusterConfig": {"headGroupSpec": {"rayStartParams": {},
        "template": {"spec": {"containers": [{"name": "head", "image": "rayproject/ray:2.60.0"}]}}}}},
}  # fmt: skip
PODMONITORING = {
    "apiVersion": "monitoring.googleapis.com/v1",
    "kind": "PodMonitoring",
    "metadata": {"name": "pm", "namespace": "ns"},
    "spec": {"selector": {"matchLabels": {"app": "x"}}, "endpoints": [{"port": 8000, "interval": "15s"}]},
}


def test_the_default_crd_directory_is_the_shipped_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TPU_STACKS_CRDS", raising=False)
    assert resolve_crd_dir(project_dir=tmp_path) == VENDORED_CRDS  # a project with no CRD folder beside it


@pytest.mark.parametrize(
    ("good", "misspell", "where"),
    [
        (JOBSET, lambda o: o["spec"].__setitem__("replicatedJob", o["spec"].pop("replicatedJobs")), "spec"),
        (RAYCLUSTER, lambda o: o["spec"]["headGroupSpec"].__setitem__("rayStartParam", {}), "spec/headGroupSpec"),
        (RAYSERVICE, lambda o: o["spec"].__setitem__("serveConfigV3", "{}"), "spec"),
        (PODMONITORING, lambda o: o["spec"]["endpoints"][0].__setitem__("intervall", "15s"), "spec/endpoints/0"),
    ],
    ids=["JobSet", "RayCluster", "RayService", "PodMonitoring"],
)
def test_a_misspelled_field_is_a_schema_error_with_no_shared_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, good: dict, misspell, where: str
) -> None:
    monkeypatch.delenv("TPU_STACKS_CRDS", raising=False)
    assert validate_objects([good], project_dir=tmp_path).problems == []
    bad = __import__("copy").deepcopy(good)
    misspell(bad)
    problems = validate_objects([bad], project_dir=tmp_path).problems
    assert [p.path for p in problems] == [where], problems
    assert "was unexpected" in problems[0].message


@pytest.mark.parametrize("folder", [VENDORED_CRDS, LIBRARY_CRDS], ids=["planner", "library"])
def test_every_vendored_crd_matches_its_recorded_provenance(folder: Path) -> None:
    with (folder / "PROVENANCE.tsv").open(encoding="utf-8") as table:
        rows = list(csv.DictReader(table, delimiter="\t"))
    assert {row["file"] for row in rows} == {path.name for path in folder.glob("*.yaml")}
    for row in rows:
        digest = hashlib.sha256((folder / row["file"]).read_bytes()).hexdigest()
        assert row["sha256 prefix"] == f"sha256:{digest[:16]}", row["file"]
        if row["upstream repository"].startswith("written here from"):
            # No upstream CRD exists (GKE's ComputeClass): the row names the documentation it is written from.
            assert row["upstream path"].startswith("cloud.google.com/"), row["file"]
            continue
        # A release tag, or "-" where upstream tags no release of its current CRDs (gke-gateway-api's last tag,
        # v1.4.0, is from 2024): then the commit alone pins the file.
        assert row["upstream repository"] and (row["tag"].startswith("v") or row["tag"] == "-"), row["file"]
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row["file"]


def test_objects_of_a_kind_the_library_declares_validate_against_its_crd(tmp_path: Path) -> None:
    """InferenceObjective's CRD ships with the library (stacks declare it), not in the planner's folder: a
    hand-written objective still validates strictly, even with --crds pointing at another folder."""
    objective = {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha2",
        "kind": "InferenceObjective",
        "metadata": {"name": "o", "namespace": "ns"},
        "spec": {"priority": 1, "poolRef": {"name": "pool"}},
    }
    assert not (VENDORED_CRDS / "inference.networking.x-k8s.io_inferenceobjectives.yaml").exists()
    other = tmp_path / "crds"
    other.mkdir()
    for crd_dir in (None, other):
        report = validate_objects([objective], crd_dir=crd_dir)
        assert report.problems == [] and report.validated == 1
        bad = {**objective, "spec": {"priority": 1, "poolRef": {"nmae": "pool"}}}
        assert {p.path for p in validate_objects([bad], crd_dir=crd_dir).problems} == {"spec/poolRef"}
