"""Strict validation catches typos in built-in kinds and custom resources, and says what it skipped."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.manifests import Manifest, render_manifests
from tpu_stacks_preview.schema import CRDS_ENV, convert_crd_schema, validate_objects


def _objects(capture: Capture) -> dict[str, dict]:
    return {m.id: m.object for m in render_manifests(capture)}


def test_the_fixture_program_validates_cleanly(raw_up: Capture, crds: Path) -> None:
    report = validate_objects(render_manifests(raw_up), kubernetes_version="1.33", crd_dir=crds)
    assert report.problems == []
    assert report.validated == 4 and report.notices == []


def test_every_misspelled_field_is_reported(typo_up: Capture, crds: Path) -> None:
    report = validate_objects(render_manifests(typo_up), crd_dir=crds)
    assert [(p.object_id, p.path, p.message) for p in report.problems] == [
        ("Deployment/serving/typo-server", "spec", "Additional properties are not allowed ('replicaz' was unexpected)"),
        (
            "Deployment/serving/typo-server",
            "spec/template/spec/containers/0",
            "Additional properties are not allowed ('resourcez' was unexpected)",
        ),
    ]


def test_custom_resources_are_checked_against_their_crd(raw_up: Capture, crds: Path) -> None:
    jobset = copy.deepcopy(_objects(raw_up)["JobSet/training/pretrain"])
    jobset["spec"]["replicatedJob"] = jobset["spec"].pop("replicatedJobs")
    jobset["metadata"]["lables"] = {"app": "x"}
    report = validate_objects([jobset], crd_dir=crds)
    assert {(p.path, p.message) for p in report.problems} == {
        ("spec", "Additional properties are not allowed ('replicatedJob' was unexpected)"),
        ("metadata", "Additional properties are not allowed ('lables' was unexpected)"),
    }


def test_kinds_without_any_schema_are_problems(crds: Path) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    old = {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}}
    report = validate_objects([widget, old], crd_dir=crds)
    assert [p.object_id for p in report.problems] == ["Deployment/d", "Widget/w"]
    assert "no CRD for it" in report.problems[1].message


def test_missing_crd_directory_is_one_notice_and_skips_only_crds(raw_up: Capture, tmp_path: Path) -> None:
    objects = _objects(raw_up)
    broken_jobset = copy.deepcopy(objects["JobSet/training/pretrain"])
    broken_jobset["spec"]["replicatedJob"] = broken_jobset["spec"].pop("replicatedJobs")
    monitoring = {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring", "metadata": {"name": "m"}}
    broken_deployment = copy.deepcopy(objects["Deployment/serving/llm"])
    broken_deployment["spec"]["replicaz"] = 1
    report = validate_objects([broken_jobset, monitoring, broken_deployment], crd_dir=tmp_path / "absent")
    assert len(report.notices) == 1
    assert str(tmp_path / "absent") in report.notices[0] and "2 custom resource(s)" in report.notices[0]
    assert [p.object_id for p in report.problems] == ["Deployment/serving/llm"]  # built-ins still checked


def test_crd_directory_comes_from_argument_then_environment(
    raw_up: Capture, crds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_jobset = tmp_path / "crds"
    only_jobset.mkdir()
    shutil.copy(crds / "jobset.x-k8s.io_jobsets.yaml", only_jobset)
    jobset = copy.deepcopy(_objects(raw_up)["JobSet/training/pretrain"])
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] = "4"
    monitoring = {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring", "metadata": {"name": "m"}}

    monkeypatch.setenv(CRDS_ENV, str(only_jobset))
    report = validate_objects([jobset, monitoring])
    assert report.crd_dir == only_jobset
    assert [(p.object_id, p.path) for p in report.problems] == [
        ("JobSet/training/pretrain", "spec/replicatedJobs/0/template/spec/parallelism"),
        ("PodMonitoring/m", "(root)"),  # its CRD is not in this directory
    ]
    overridden = validate_objects([monitoring], crd_dir=crds)  # the argument beats the environment
    assert overridden.crd_dir == crds
    assert [p.message for p in overridden.problems] == ["'spec' is a required property"]


def test_crd_conversion_rules() -> None:
    node = {
        "type": "object",
        "properties": {
            "port": {"x-kubernetes-int-or-string": True},
            "note": {"type": "string", "nullable": True},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {}}},
        },
    }
    assert convert_crd_schema(node) == {
        "type": "object",
        "properties": {
            "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "note": {"type": ["string", "null"]},
            "free": {"type": "object", "properties": {"a": {}}},
        },
        "additionalProperties": False,
    }


def test_unknown_kubernetes_version_is_the_users_error() -> None:
    with pytest.raises(UserError, match="1.12"):
        validate_objects([Manifest("", {"apiVersion": "v1", "kind": "ConfigMap"})], kubernetes_version="1.12")
