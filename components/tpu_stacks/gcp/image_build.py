"""The Cloud Build builder of an image a stack builds into its own repository: a service account of its own that may
push to that repository and write logs, and (for `gcloud builds submit`) a bucket the source is staged in, which it
may read. Used by every stack that prints a build command (Ray Train's image, SGLang-JAX's server image, multi-host
vLLM's Ray Serve image), each of which also turns the Cloud Build API on.

Why an account of our own: without one, Cloud Build runs a build as the project's default build account, which in
projects created since the change is the Compute Engine default service account, and "depending on your
organization's settings" may lack what the build needs
(https://cloud.google.com/build/docs/cloud-build-service-account-updates); Google recommends a user-specified account
with the least roles (https://cloud.google.com/build/docs/securing-builds/configure-user-specified-service-accounts).
With one, the build's logs must go to Cloud Logging (the build config's `logging: CLOUD_LOGGING_ONLY`), and
`gcloud builds submit --service-account` takes `projects/PROJECT/serviceAccounts/EMAIL`
(https://cloud.google.com/sdk/gcloud/reference/builds/submit); whoever runs it needs `iam.serviceAccounts.actAs` on
the account (Service Account User), which project owners have. raytrain/image.py says more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.gcp.apis import BUILD_APIS, enable_apis
from tpu_stacks.gcp.storage import hardened_bucket


def member(account: gcp.serviceaccount.Account) -> pulumi.Output[str]:
    """The account as an IAM member: its own e-mail (the provider knows the universe's domain), never a guess."""
    return account.email.apply(lambda email: f"serviceAccount:{email}")


def builder(
    name: str,
    project: str,
    region: str,
    repository: gcp.artifactregistry.Repository,
    account_id: str,
    display_name: str,
    parent: pulumi.Resource,
) -> tuple[gcp.serviceaccount.Account, list[pulumi.Resource]]:
    """The account builds run as, with what every build needs: push to this repository, write logs."""
    child = pulumi.ResourceOptions(parent=parent)
    account = gcp.serviceaccount.Account(
        f"{name}-image-builder",
        gcp.serviceaccount.AccountArgs(account_id=account_id, project=project, display_name=display_name),
        opts=child,
    )
    who = member(account)
    after_account = pulumi.ResourceOptions(parent=parent, depends_on=[account])
    grants: list[pulumi.Resource] = [
        gcp.artifactregistry.RepositoryIamMember(
            f"{name}-image-builder-push",
            gcp.artifactregistry.RepositoryIamMemberArgs(
                project=project,
                location=region,
                repository=repository.repository_id,
                role="roles/artifactregistry.writer",
                member=who,
            ),
            opts=after_account,
        ),
        gcp.projects.IAMMember(
            f"{name}-image-builder-logs",
            gcp.projects.IAMMemberArgs(project=project, role="roles/logging.logWriter", member=who),
            opts=after_account,
        ),
    ]
    return account, grants


def source_bucket(
    name: str,
    project: str,
    region: str,
    account: gcp.serviceaccount.Account,
    parent: pulumi.Resource,
    after: Sequence[pulumi.Resource] = (),
) -> gcp.storage.Bucket:
    """The bucket `gcloud builds submit --gcs-source-staging-dir` uploads the source to, readable by the builder."""
    bucket = hardened_bucket(
        f"{name}-build-source",
        project=project,
        location=region,
        purpose="build-source",
        force_destroy=True,  # uploaded source archives only: nothing to keep
        parent=parent,
        after=after,
    )
    gcp.storage.BucketIAMMember(
        f"{name}-image-builder-source",
        gcp.storage.BucketIAMMemberArgs(bucket=bucket.name, role="roles/storage.objectViewer", member=member(account)),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[account]),
    )
    return bucket


def submitted_build(
    name: str,
    project: str,
    region: str,
    repository: gcp.artifactregistry.Repository,
    image: pulumi.Input[str],
    account_id: str,
    display_name: str,
    parent: pulumi.Resource,
    command: Callable[[str, str, str], str],
    enable_api: bool,
    storage_api: Sequence[pulumi.Resource] = (),
) -> pulumi.Output[str]:
    """The builder account (push to `repository`, write logs) and the source bucket it reads, and the build
    command `command(image, account, bucket)` writes once they are known (gcp/cloud_build.submit_command): what a
    stack that prints a `gcloud builds submit` declares, SGLang-JAX's and multi-host vLLM's alike. `enable_api`
    (the default universe): the Cloud Build API the command calls is on, as Ray Train's image does (it is off in a
    fresh project, gcp/apis.py); the bucket waits for `storage_api`, the stack's own Cloud Storage API."""
    if enable_api:
        enable_apis(name, project, BUILD_APIS, parent)
    account, _ = builder(name, project, region, repository, account_id, display_name, parent)
    bucket = source_bucket(name, project, region, account, parent, storage_api)
    return pulumi.Output.all(image, account.name, bucket.name).apply(lambda parts: command(*parts))
