"""Every image a stack builds goes through one rule (gcp/cloud_build.py): the command's flags, and the logging every
build config must set because the build runs as the stack's own account."""

from __future__ import annotations

from pathlib import Path

import yaml

from tpu_stacks.gcp.cloud_build import BUILD_CONFIG, LOGGING, staging_dir, submit_command

LIBRARY = Path(__file__).resolve().parents[2] / "components" / "tpu_stacks"


def build_configs() -> list[Path]:
    return sorted(LIBRARY.rglob(BUILD_CONFIG))


def test_every_image_folders_build_logs_to_cloud_logging_only():
    """A build under a user-specified account has no default logs bucket: without this option it is refused
    (https://cloud.google.com/build/docs/securing-builds/configure-user-specified-service-accounts). Found, not listed:
    an image folder added later is checked too."""
    found = build_configs()
    assert len(found) >= 3, found  # Ray Train's trainer, SGLang-JAX's server, multi-host vLLM's Ray Serve image
    wrong = {
        str(path.relative_to(LIBRARY)): (yaml.safe_load(path.read_text()).get("options") or {}).get("logging")
        for path in found
    }
    assert {path: value for path, value in wrong.items() if value != LOGGING} == {}


def test_the_command_runs_in_the_stacks_project_and_region_as_its_builder():
    command = submit_command(
        "components/tpu_stacks/sglang/image",
        {"_IMAGE": "r/i:t", "_VERSION": "1"},
        "my-project",
        "us-central1",
        "projects/my-project/serviceAccounts/b@my-project.iam.gserviceaccount.com",
        "my-bucket",
    )
    assert command.split() == [
        "gcloud",
        "builds",
        "submit",
        "components/tpu_stacks/sglang/image",
        "--project=my-project",
        "--region=us-central1",
        "--config=components/tpu_stacks/sglang/image/cloudbuild.yaml",
        "--substitutions=_IMAGE=r/i:t,_VERSION=1",
        "--service-account=projects/my-project/serviceAccounts/b@my-project.iam.gserviceaccount.com",
        "--gcs-source-staging-dir=gs://my-bucket/source",
    ]
    assert staging_dir("my-bucket") == "gs://my-bucket/source"
