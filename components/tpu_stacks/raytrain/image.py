"""The training image of `RayTrainStack` as resources: its repository and how Cloud Build makes it.

The image is ours (`trainer_image/` in this package, see `raytrain.sources`: a Dockerfile and the
trainer). Its repository is this stack's: `raytrain.plan` scopes the default id to the stack's
cluster. Its pins (Ray, MaxText) and default tag live in `raytrain.spec`, its checks in
`raytrain.plan.check_image`; the pins reach the build as Cloud Build substitutions -> Docker build
args, so they are written once. The repository keeps tags immutable, so a tag names one image for
good. Three paths:
- submit (default): the repository, a builder service account and a bucket for the uploaded source
  are declared; `pulumi up` prints the `gcloud builds submit` command that builds and pushes the
  reference the RayCluster pulls, as that account.
- trigger: a manual Cloud Build trigger on the project's repository, run as the same builder account;
  run it with the printed command.
- prebuilt: any pinned reference the user gives; nothing is declared.

Why a builder account of our own on both paths: without one, Cloud Build runs a build as the project's
default build account, which in projects created since the change is the Compute Engine default
service account, and "depending on your organization's settings" may lack what the build needs
(https://cloud.google.com/build/docs/cloud-build-service-account-updates,
https://cloud.google.com/build/docs/cloud-build-service-account); Google recommends a user-specified
account with the least roles (https://cloud.google.com/build/docs/securing-builds/configure-user-specified-service-accounts).
Its roles, and nothing else: Artifact Registry writer on this repository (push), Logs Writer (with a
user-specified account the logs must go to Cloud Logging or a user-created bucket: the build config
sets `logging: CLOUD_LOGGING_ONLY`), and, for `submit`, Storage Object Viewer on the source bucket
(`gcloud builds submit --gcs-source-staging-dir`: the user uploads the source there, the build reads it
as its account). `gcloud builds submit --service-account` takes `projects/PROJECT/serviceAccounts/EMAIL`
(https://cloud.google.com/sdk/gcloud/reference/builds/submit); whoever runs it needs
`iam.serviceAccounts.actAs` on the account (Service Account User), which project owners have.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.gcp import cloud_build
from tpu_stacks.gcp.apis import BUILD_APIS, enable_apis
from tpu_stacks.gcp.image_build import builder, source_bucket
from tpu_stacks.gcp.registry import docker_repository, image_reference
from tpu_stacks.gcp.universe import Universe
from tpu_stacks.raytrain.plan import builder_account_id
from tpu_stacks.raytrain.spec import (
    MAXTEXT_REPOSITORY,
    MAXTEXT_REVISION,
    RAY_VERSION,
    TRAINER_IMAGE_DIR,
    ImageSpec,
    default_tag,
)

BUILD_CONFIG = "cloudbuild.yaml"
"""In the image folder: one docker build step with the substitutions below as build args."""


def substitutions(image: pulumi.Input[str], context: str) -> dict[str, pulumi.Input[str]]:
    """What cloudbuild.yaml needs: the image to push, the pins, the folder to build."""
    return {
        "_IMAGE": image,
        "_RAY_VERSION": RAY_VERSION,
        "_MAXTEXT_REPOSITORY": MAXTEXT_REPOSITORY,
        "_MAXTEXT_REVISION": MAXTEXT_REVISION,
        "_CONTEXT": context,
    }


def repository_id(image: ImageSpec) -> str:
    """The repository id `raytrain.plan` decided (the user's, or one scoped to the stack's cluster)."""
    if image.repository is None:
        raise ValueError("raytrain.plan decides image.repository before any resource is declared")
    return image.repository


def submit_command(image: str, project: str, region: str, account: str, source_bucket: str) -> str:
    """`gcloud builds submit` of the image folder as the builder `account` (projects/P/serviceAccounts/E),
    the source staged in `source_bucket`; run from the project root (gcp/cloud_build.py)."""
    values = {key: str(value) for key, value in substitutions(image, ".").items()}
    return cloud_build.submit_command(TRAINER_IMAGE_DIR, values, project, region, account, source_bucket)


def declare_image(
    image: ImageSpec,
    name: str,
    project: str,
    region: str,
    universe: Universe,
    parent: pulumi.Resource,
    nodes_account: pulumi.Input[str] | None = None,
    storage_api: Sequence[pulumi.Resource] = (),
) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """(image reference, the command that builds it); declares the repository, the builder account and
    the trigger (or the source bucket `submit` uploads to, after `storage_api`)."""
    if image.build == "prebuilt":
        return pulumi.Output.from_input(image.reference or ""), pulumi.Output.from_input(
            "prebuilt image: nothing to build"
        )
    # The nodes pull the image as the cluster's node service account: it may read this repository only.
    # (An existing cluster whose node account is not given: grant it yourself, docs/raytrain.md.)
    # Cloud Build builds the image (the printed submit command, or the trigger): its API is on first.
    if universe.is_default:
        enable_apis(name, project, BUILD_APIS, parent)
    repository = docker_repository(
        name,
        gcp.artifactregistry.RepositoryArgs(
            repository_id=repository_id(image),
            project=project,
            location=region,
            format="DOCKER",
            mode="STANDARD_REPOSITORY",
            description="Ray Train + MaxText training images (tpu-stacks)",
            docker_config=gcp.artifactregistry.RepositoryDockerConfigArgs(immutable_tags=True),
            labels={"managed-by": "tpu-stacks"},
        ),
        nodes_account,
        parent,
        enable_api=universe.is_default,
    )
    reference = image_reference(region, project, repository, f"{image.name}:{image.tag or default_tag()}")
    account_id = builder_account_id(repository_id(image))
    account, grants = builder(name, project, region, repository, account_id, "Builds the Ray Train image", parent)
    if image.build == "trigger":
        return reference, _trigger(image, name, project, region, account, grants, reference, parent)
    bucket = source_bucket(name, project, region, account, parent, storage_api)
    return reference, pulumi.Output.all(reference, account.name, bucket.name).apply(
        lambda parts: submit_command(parts[0], project, region, parts[1], parts[2])
    )


def _trigger(
    image: ImageSpec,
    name: str,
    project: str,
    region: str,
    account: gcp.serviceaccount.Account,
    grants: list[pulumi.Resource],
    reference: pulumi.Output[str],
    parent: pulumi.Resource,
) -> pulumi.Output[str]:
    """A manual trigger that builds the image from the project's repository as the builder account."""
    source = image.source
    assert source is not None  # raytrain.plan.check_image
    trigger_name = f"{repository_id(image)}-image"
    gcp.cloudbuild.Trigger(
        f"{name}-image-trigger",
        gcp.cloudbuild.TriggerArgs(
            name=trigger_name,
            project=project,
            location=region,
            description="Builds the RayTrainStack training image (run it by hand: gcloud builds triggers run)",
            service_account=account.name,  # projects/PROJECT/serviceAccounts/EMAIL
            source_to_build=gcp.cloudbuild.TriggerSourceToBuildArgs(
                uri=source.uri, ref=source.ref, repo_type=source.repo_type
            ),
            filename=f"{source.dir.rstrip('/')}/{BUILD_CONFIG}",
            substitutions=substitutions(reference, source.dir.rstrip("/")),
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=grants),
    )
    return pulumi.Output.from_input(f"gcloud builds triggers run {trigger_name} --project={project} --region={region}")
