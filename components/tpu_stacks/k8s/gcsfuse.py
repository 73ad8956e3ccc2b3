"""GCS FUSE CSI volumes and the sidecar annotations that bound it (shared reference §6).

The sidecar takes a volume named `gke-gcsfuse-cache` as its file-cache backing; the tutorials
leave that volume and the sidecar unbounded ("0" limits, no sizeLimit, max-size -1). Here the
cache is sized from what it holds (the model's weights) and the sidecar gets real limits.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

DRIVER = "gcsfuse.csi.storage.gke.io"
CACHE_VOLUME = "gke-gcsfuse-cache"  # the name the sidecar looks for; any other name is ignored
GiB = 1024**3


def mount_options(cache_gib: int, only_dir: str | None = None, extra: tuple[str, ...] = ()) -> str:
    """The tutorial's parallel-download options, with the file cache capped at the volume size,
    plus `extra` options (e.g. the owner uid/gid a non-root workload writes as)."""
    options = [
        "implicit-dirs",
        "file-cache:enable-parallel-downloads:true",
        "file-cache:parallel-downloads-per-file:100",
        "file-cache:max-parallel-downloads:-1",
        "file-cache:download-chunk-size-mb:10",
        f"file-cache:max-size-mb:{cache_gib * 1024}",
    ]
    if only_dir:
        options.append(f"only-dir={only_dir}")
    return ",".join([*options, *extra])


def fuse_volume(name: str, bucket: pulumi.Input[str], options: str, read_only: bool = False) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(
        name=name,
        csi=k8s.core.v1.CSIVolumeSourceArgs(
            driver=DRIVER,
            read_only=read_only or None,
            volume_attributes={"bucketName": bucket, "mountOptions": options},
        ),
    )


def cache_volume(cache_gib: int) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(
        name=CACHE_VOLUME, empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit=f"{cache_gib}Gi")
    )


def sidecar_annotations(cache_gib: int, cpu_limit: str = "4", ephemeral_gib: int = 10) -> dict[str, str]:
    """Bounded sidecar: the memory-backed cache is charged to it, so its limit covers the cache."""
    return {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-request": "500m",
        "gke-gcsfuse/cpu-limit": cpu_limit,
        "gke-gcsfuse/memory-request": "1Gi",
        "gke-gcsfuse/memory-limit": f"{cache_gib + 2}Gi",
        "gke-gcsfuse/ephemeral-storage-limit": f"{ephemeral_gib}Gi",
    }
