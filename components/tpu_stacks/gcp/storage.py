"""A hardened GCS bucket: the one place a stack keeps weights, checkpoints or admin state.

Uniform bucket-level access (no object ACLs), public access prevention enforced, and two decisions
that only show when the program meets the real cloud:

- Destroy keeps the data. GCS refuses to delete a bucket that holds objects unless the caller empties
  it first (the provider's `force_destroy`; without it `pulumi destroy` stops with "Error trying to
  delete bucket ... containing objects without `force_destroy` set to true",
  hashicorp/terraform-provider-google#17127). A stack's weights and checkpoints are what took hours
  to make, so by default the bucket is `retain_on_delete`: `pulumi destroy` removes it from the
  stack without an error and leaves it, with its objects, in the project (delete it by hand:
  `gcloud storage rm -r gs://NAME`). `force_destroy` (the workloads' `forceDestroyBucket`) is the
  opposite choice: the provider empties the bucket and deletes it, and nothing is retained. A
  retained bucket is not reused by the next `pulumi up`: bucket names are auto-generated, so the
  next stack gets a new, empty one.
- Checkpoints written through GCS FUSE get a hierarchical namespace. Orbax (MaxText's checkpointer)
  writes each step to a temporary directory and renames it when complete; through a FUSE mount the
  path looks local, so it renames a directory (google/orbax#3537: `AUTO` atomicity selects
  `ATOMIC_RENAME` for mount paths). GCS FUSE renames directories only in hierarchical-namespace
  buckets, atomically; in a flat bucket it refuses them unless `--rename-dir-limit` is set, and even
  then only for directories without subdirectories and not atomically (GoogleCloudPlatform/gcsfuse
  docs/semantics.md, "Missing features", and its HNS section, PR #2510). An Orbax step directory has
  subdirectories, so the mount option cannot help: checkpoint buckets are created with
  `hierarchical_namespace`, which needs uniform bucket-level access (set here) and can only be chosen
  at creation (the provider's field is ForceNew, GoogleCloudPlatform/magic-modules#11852, whose
  `force_destroy` also deletes the bucket's folders).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

FOLDER_PURPOSES = frozenset({"checkpoints"})
"""Bucket purposes whose writers rename directories through GCS FUSE, so the bucket needs a hierarchical
namespace: `checkpoints` is RayTrainStack's, where MaxText writes Orbax checkpoints under its /data
mount (and Ray Train its run state). Weights (vLLM), converted checkpoints (JetStream: uploaded through
the GCS API, read-only mounts) and Saxml's admin state (GCS API) never rename a directory."""


def hardened_bucket(
    resource_name: str,
    *,
    project: str,
    location: str,
    purpose: str,
    force_destroy: bool = False,
    storage_class: str = "STANDARD",
    parent: pulumi.Resource | None = None,
    after: Sequence[pulumi.Resource] = (),
) -> gcp.storage.Bucket:
    """Declare the bucket; its name is auto-generated from `resource_name` (globally unique).

    Kept on `pulumi destroy` (retained, not deleted) unless `force_destroy`; hierarchical namespace when
    `purpose` is one of `FOLDER_PURPOSES`."""
    folders = purpose in FOLDER_PURPOSES
    return gcp.storage.Bucket(
        resource_name,
        gcp.storage.BucketArgs(
            project=project,
            location=location.upper(),
            storage_class=storage_class,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=force_destroy,
            hierarchical_namespace=gcp.storage.BucketHierarchicalNamespaceArgs(enabled=True) if folders else None,
            labels={"managed-by": "tpu-stacks", "purpose": purpose},
        ),
        opts=pulumi.ResourceOptions(parent=parent, retain_on_delete=not force_destroy, depends_on=list(after)),
    )
