"""The workloads' buckets as the engine receives them (the plan document's inputs and options): kept on
`pulumi destroy` unless `forceDestroyBucket`, and a hierarchical namespace where checkpoints are written
through GCS FUSE (Orbax renames directories)."""

from functools import cache
from pathlib import Path

import pytest

from tests.mocks import capture
from tests.shipped import shipped
from tpu_stacks.gcp.storage import hardened_bucket

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "gcp:storage/bucket:Bucket"


@cache
def bucket_of(stack: str):
    capture_ = shipped(stack)
    assert capture_.error is None, capture_.error
    # The workload's data bucket (Ray Train also declares a bucket for the image build's uploaded source).
    (bucket,) = [b for b in capture_.of_type(BUCKET) if b.inputs["labels"]["purpose"] != "build-source"]
    return bucket


@pytest.mark.parametrize("stack", ["vllm", "saxml", "jetstream-gemma", "raytrain", "raytrain-multislice"])
def test_destroy_keeps_a_bucket_that_holds_data(stack):
    """Without forceDestroyBucket, destroy leaves the bucket (and its objects) instead of failing on it."""
    bucket = bucket_of(stack)
    assert bucket.inputs["forceDestroy"] is False
    assert bucket.options_document()["retainOnDelete"] is True


def test_force_destroy_deletes_the_bucket_and_retains_nothing():
    bucket = bucket_of("dev")  # Pulumi.dev.yaml: forceDestroyBucket: true
    assert bucket.inputs["forceDestroy"] is True
    assert bucket.options_document()["retainOnDelete"] is False


@pytest.mark.parametrize("stack", ["raytrain", "raytrain-multislice"])
def test_the_build_source_bucket_is_hardened_and_emptied_on_destroy(stack):
    """Uploaded source archives only: deleted with the stack, never public, no folders needed."""
    capture_ = shipped(stack)
    (source,) = [b for b in capture_.of_type(BUCKET) if b.inputs["labels"]["purpose"] == "build-source"]
    assert source.inputs["forceDestroy"] is True and source.options_document()["retainOnDelete"] is False
    assert source.inputs["publicAccessPrevention"] == "enforced" and "hierarchicalNamespace" not in source.inputs


@pytest.mark.parametrize("stack", ["raytrain", "raytrain-multislice"])
def test_training_checkpoints_get_a_hierarchical_namespace(stack):
    """MaxText's Orbax renames each step's temporary directory through the /data mount: only a
    hierarchical-namespace bucket lets GCS FUSE rename a directory with subdirectories."""
    bucket = bucket_of(stack)
    assert bucket.inputs["labels"]["purpose"] == "checkpoints"
    assert bucket.inputs["hierarchicalNamespace"] == {"enabled": True}
    assert bucket.inputs["uniformBucketLevelAccess"] is True  # what a hierarchical namespace requires


@pytest.mark.parametrize("stack", ["dev", "vllm", "saxml", "jetstream-gemma"])
def test_buckets_that_rename_no_directory_stay_flat(stack):
    assert "hierarchicalNamespace" not in bucket_of(stack).inputs


def test_the_bucket_helper_alone():
    def build():
        hardened_bucket("ckpt", project="p", location="us-east5", purpose="checkpoints", force_destroy=True)
        hardened_bucket("weights", project="p", location="us-east5", purpose="model-weights")

    mocks = capture(build)
    checkpoints = mocks.named(BUCKET, "ckpt").inputs
    weights = mocks.named(BUCKET, "weights").inputs
    assert checkpoints["hierarchicalNamespace"] == {"enabled": True} and checkpoints["forceDestroy"] is True
    assert "hierarchicalNamespace" not in weights and weights["location"] == "US-EAST5"
