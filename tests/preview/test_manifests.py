"""Rendered Kubernetes objects look like what the provider sends: ints, masked secrets, one file each."""

from __future__ import annotations

from pathlib import Path

import yaml

from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.manifests import HEADER, render_manifests, write_manifests


def test_one_file_per_object_named_kind_namespace_name(raw_up: Capture, tmp_path: Path) -> None:
    written = write_manifests(render_manifests(raw_up), tmp_path)
    assert [p.name for p in written] == [
        "deployment-serving-llm.yaml",
        "jobset-training-pretrain.yaml",
        "secret-serving-db.yaml",
        "service-serving-llm.yaml",
    ]


def test_numbers_are_ints_again(raw_up: Capture, tmp_path: Path) -> None:
    write_manifests(render_manifests(raw_up), tmp_path)
    deployment = yaml.safe_load((tmp_path / "deployment-serving-llm.yaml").read_text())
    assert list(deployment)[:3] == ["apiVersion", "kind", "metadata"]
    assert type(deployment["spec"]["replicas"]) is int and deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert type(container["ports"][0]["containerPort"]) is int
    assert container["resources"]["limits"]["google.com/tpu"] == 4
    jobset = yaml.safe_load((tmp_path / "jobset-training-pretrain.yaml").read_text())
    assert type(jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"]) is int


def test_secrets_are_masked_but_keep_their_shape(raw_up: Capture, tmp_path: Path) -> None:
    write_manifests(render_manifests(raw_up), tmp_path)
    secret = yaml.safe_load((tmp_path / "secret-serving-db.yaml").read_text())
    assert secret["stringData"] == {"password": "[secret]"}


def test_rewrites_are_deterministic_and_only_replace_our_files(raw_up: Capture, tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("mine: true\n")
    (tmp_path / "deployment-serving-gone.yaml").write_text(HEADER + "kind: Deployment\n")
    first = {p.name: p.read_bytes() for p in write_manifests(render_manifests(raw_up), tmp_path)}
    second = {p.name: p.read_bytes() for p in write_manifests(render_manifests(raw_up), tmp_path)}
    assert first == second
    assert (tmp_path / "notes.yaml").exists()  # not written by a plan: left alone
    assert not (tmp_path / "deployment-serving-gone.yaml").exists()  # stale plan output: removed
