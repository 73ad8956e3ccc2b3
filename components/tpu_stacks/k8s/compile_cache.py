"""A persistent XLA compilation cache that replicas share without ever writing the same directory.

Serving engines on TPU compile for minutes on first start. Pointing their cache at one shared
GCS FUSE directory breaks as soon as two replicas create the same directories at once (the vLLM
tutorial documents "cannot create directories"). Here each pod compiles into its own local
directory (an emptyDir); an init container restores the entries of one cache key from GCS before
the server starts, and a native sidecar uploads new entries every two minutes and on shutdown with
`gcloud storage rsync --no-clobber`. That goes through the GCS API, where each object write is
atomic and an entry another replica already uploaded is skipped: a second replica starts warm and
can neither break the first nor be broken by it.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

# Pinned Cloud SDK for talking to GCS through the API (not FUSE).
CLOUD_SDK_IMAGE = "gcr.io/google.com/cloudsdktool/google-cloud-cli:502.0.0-slim"
SYNC_SECONDS = 120
SMALL = k8s.core.v1.ResourceRequirementsArgs(
    requests={"cpu": "100m", "memory": "256Mi"}, limits={"cpu": "1", "memory": "1Gi"}
)  # a CPU limit: a sync must not take the CPUs that feed the TPU (k8s.security)


def cache_volume(name: str, size_gib: int = 20) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(name=name, empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit=f"{size_gib}Gi"))


def cache_mount(name: str, path: str) -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name=name, mount_path=path)


NO_PARALLEL_COMPOSITE_UPLOADS = [
    k8s.core.v1.EnvVarArgs(name="CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED", value="False")
]
"""For an uploader whose write grant is limited to its key's prefix: a parallel composite upload stages its parts
elsewhere in the bucket (gcloud's component prefix) and deletes them after (Cloud Storage, "Parallel composite
uploads": it needs roles/storage.objectUser on the bucket); plain uploads write only the destination objects."""


def sync_containers(
    prefix: str,
    volume: str,
    path: str,
    bucket: pulumi.Input[str],
    key: str,
    env: list[k8s.core.v1.EnvVarArgs] | None = None,
) -> list[k8s.core.v1.ContainerArgs]:
    """Restore (init container) and upload (native sidecar) of `gs://BUCKET/<key>` <-> `path`; `env` for the
    upload (NO_PARALLEL_COMPOSITE_UPLOADS where writes are limited to the key)."""
    remote = pulumi.Output.concat("gs://", bucket, "/", key)
    restore = remote.apply(
        lambda url: f"gcloud storage rsync --recursive {url} {path} || echo 'no compile cache yet for this key'"
    )
    upload = remote.apply(
        lambda url: (
            f"upload() {{ gcloud storage rsync --recursive --no-clobber {path} {url} || true; }}; "
            f"trap 'upload; exit 0' TERM; while true; do sleep {SYNC_SECONDS} & wait $!; upload; done"
        )
    )
    mounts = [cache_mount(volume, path)]
    return [
        k8s.core.v1.ContainerArgs(
            name=f"{prefix}-restore",
            image=CLOUD_SDK_IMAGE,
            command=["sh", "-c", restore],
            volume_mounts=mounts,
            resources=SMALL,
        ),
        k8s.core.v1.ContainerArgs(
            name=f"{prefix}-upload",
            image=CLOUD_SDK_IMAGE,
            command=["sh", "-c", upload],
            env=env,
            volume_mounts=mounts,
            resources=SMALL,
            restart_policy="Always",
        ),
    ]
