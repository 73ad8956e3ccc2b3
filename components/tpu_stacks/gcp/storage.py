"""A hardened GCS bucket: the one place a stack keeps weights, checkpoints or admin state.

Uniform bucket-level access (no object ACLs), public access prevention enforced, and kept on
`pulumi destroy` while it holds data unless the user asks otherwise (`force_destroy`).
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp


def hardened_bucket(
    resource_name: str,
    *,
    project: str,
    location: str,
    purpose: str,
    force_destroy: bool = False,
    storage_class: str = "STANDARD",
    parent: pulumi.Resource | None = None,
) -> gcp.storage.Bucket:
    """Declare the bucket; its name is auto-generated from `resource_name` (globally unique)."""
    return gcp.storage.Bucket(
        resource_name,
        gcp.storage.BucketArgs(
            project=project,
            location=location.upper(),
            storage_class=storage_class,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=force_destroy,
            labels={"managed-by": "tpu-stacks", "purpose": purpose},
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
