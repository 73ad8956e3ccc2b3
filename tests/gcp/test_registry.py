"""Artifact Registry repositories are the stack's own: Artifact Registry ids are unique per project and
region, so two stacks in one project must never declare the same id (the second `up` would fail with
AlreadyExists). Defaults are scoped to the stack's cluster, user-set ids are kept, nothing is random."""

from functools import cache
from pathlib import Path

import yaml

from tests.shipped import shipped
from tpu_stacks_preview.engine import run_program

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "gcp:artifactregistry/repository:Repository"


@cache
def repository_of(stack: str) -> dict:
    capture = shipped(stack)
    assert capture.error is None, capture.error
    (repository,) = capture.of_type(REPOSITORY)
    return repository.inputs


def test_the_two_training_stacks_share_a_project_and_region_but_not_a_repository():
    single, multi = repository_of("raytrain"), repository_of("raytrain-multislice")
    assert (single["project"], single["location"]) == (multi["project"], multi["location"])
    assert single["repositoryId"] != multi["repositoryId"]


def test_a_user_set_id_is_kept_and_a_default_is_scoped_to_the_cluster():
    config = yaml.safe_load((ROOT / "Pulumi.raytrain.yaml").read_text())["config"]
    assert repository_of("raytrain")["repositoryId"] == config["tpu-stacks:raytrain"]["image"]["repository"]
    assert repository_of("raytrain-multislice")["repositoryId"] == "ray-maxtext-raytrain-multislice"


def test_planning_twice_gives_the_same_id():
    first = shipped("raytrain-multislice")  # the shared run; the second is a run of its own
    second = run_program(ROOT, "raytrain-multislice", preview=False)
    assert [r.inputs["repositoryId"] for r in first.of_type(REPOSITORY)] == [
        r.inputs["repositoryId"] for r in second.of_type(REPOSITORY)
    ]
