"""A fresh project: the program enables the APIs it calls (never disabling them on destroy), and a
new service account's grants exist before anything runs as it. Checked in the plan document's terms:
`gcp:projects/service:Service` inputs and each resource's `dependsOn`/`dependencies`."""

from functools import cache
from pathlib import Path

import pytest

from tests.shipped import shipped

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "gcp:projects/service:Service"


@cache
def up(stack: str):
    capture = shipped(stack)
    assert capture.error is None, capture.error
    return capture


def records(stack: str, type_token: str):
    return [r for r in up(stack).sorted_resources() if r.type == type_token]


def apis(stack: str) -> dict[str, str]:
    return {r.inputs["service"]: r.urn for r in records(stack, SERVICE)}


@pytest.mark.parametrize("stack", ["dev", "vllm", "jetstream-gemma", "raytrain", "saxml", "sglang", "vllm-405b"])
def test_the_apis_each_stack_calls_are_enabled_and_never_disabled(stack):
    enabled = apis(stack)
    assert {
        "container.googleapis.com",
        "compute.googleapis.com",
        "iam.googleapis.com",
        "storage.googleapis.com",
    } <= set(enabled)
    assert all(r.inputs["disableOnDestroy"] is False for r in records(stack, SERVICE))
    (cluster,) = records(stack, "gcp:container/cluster:Cluster")
    assert enabled["container.googleapis.com"] in cluster.dependencies
    for bucket in records(stack, "gcp:storage/bucket:Bucket"):
        assert enabled["storage.googleapis.com"] in bucket.dependencies


def test_monitoring_is_enabled_where_managed_prometheus_is_on():
    assert "monitoring.googleapis.com" in apis("vllm")


def test_the_registry_and_the_build_wait_for_their_apis():
    enabled = apis("raytrain")
    (repository,) = records("raytrain", "gcp:artifactregistry/repository:Repository")
    assert enabled["artifactregistry.googleapis.com"] in repository.dependencies
    assert "cloudbuild.googleapis.com" in enabled


@pytest.mark.parametrize("stack", ["raytrain", "sglang", "vllm-405b"])
def test_every_stack_that_prints_a_build_enables_cloud_build(stack):
    """gcp/cloud_build.py's one rule: the printed `gcloud builds submit` needs the Cloud Build API, off in a fresh
    project (gcp/apis.py), whichever stack prints it; the builder account and its source bucket are declared too."""
    assert "cloudbuild.googleapis.com" in apis(stack)
    assert [r for r in up(stack).sorted_resources() if r.name.endswith("-image-builder")]


def test_the_nodes_role_is_granted_before_the_cluster_runs_nodes_as_that_account():
    (role,) = [r for r in records("vllm", "gcp:projects/iAMMember:IAMMember") if r.name.endswith("-nodes-role")]
    (cluster,) = records("vllm", "gcp:container/cluster:Cluster")
    assert role.urn in cluster.options_document()["dependsOn"]


def test_another_universe_gets_no_api_resources():
    """S3NS service names are not verified here: a wrong one would stop the first `up` (docs/sovereign.md)."""
    assert apis("saxml-s3ns") == {}
