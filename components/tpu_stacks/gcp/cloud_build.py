"""The `gcloud builds submit` command of an image a stack builds into its own repository: one rule for every stack
that prints one (Ray Train's trainer image, SGLang-JAX's server image, multi-host vLLM's Ray Serve image).

The build runs in the stack's project and region, as the stack's own builder account
(`--service-account=projects/PROJECT/serviceAccounts/EMAIL`), its source staged in the stack's source bucket, which
that account may read (gcp/image_build.py declares both and says why;
https://cloud.google.com/sdk/gcloud/reference/builds/submit). The folder's cloudbuild.yaml must then send the logs
to Cloud Logging only (`options.logging: CLOUD_LOGGING_ONLY`): a user-specified account has no default logs bucket
(https://cloud.google.com/build/docs/securing-builds/configure-user-specified-service-accounts). The stack turns the
Cloud Build API on, off in a fresh project (gcp/apis.py; gcp/image_build.submitted_build, raytrain/image.py).
Pure: no provider SDK (the plans import it).
"""

from __future__ import annotations

from collections.abc import Mapping

SOURCE_FOLDER = "source"
"""Where `gcloud builds submit` stages the uploaded source in the stack's source bucket."""
BUILD_CONFIG = "cloudbuild.yaml"
"""In the image folder: the build's steps, with the substitutions the command passes."""
LOGGING = "CLOUD_LOGGING_ONLY"
"""The build config's `options.logging` a build as a user-specified account needs."""


def staging_dir(bucket: str) -> str:
    """The `--gcs-source-staging-dir` in the stack's source bucket."""
    return f"gs://{bucket}/{SOURCE_FOLDER}"


def submit_command(
    folder: str, substitutions: Mapping[str, str], project: str, region: str, account: str, bucket: str
) -> str:
    """`gcloud builds submit` of `folder` (from the repository root) with its cloudbuild.yaml and `substitutions`,
    in `project` and `region`, as the builder `account` (projects/P/serviceAccounts/E), the source staged in
    `bucket`."""
    values = ",".join(f"{key}={value}" for key, value in substitutions.items())
    return (
        f"gcloud builds submit {folder} --project={project} --region={region} --config={folder}/{BUILD_CONFIG} "
        f"--substitutions={values} --service-account={account} --gcs-source-staging-dir={staging_dir(bucket)}"
    )
