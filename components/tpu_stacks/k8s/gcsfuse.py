"""GCS FUSE CSI volumes and the sidecar annotations that bound it ([GCSFUSE]).

The sidecar takes a volume named `gke-gcsfuse-cache` as its file-cache backing; the tutorials
leave that volume and the sidecar unbounded ("0" limits, no sizeLimit, max-size -1). Here the
cache is sized from what it holds (the model's weights) and the sidecar gets real limits.

Ephemeral storage, and why the sidecar's figure is the whole pod's (sources below):
- Kubelet evicts a pod whose ephemeral-storage use exceeds the sum of its containers' limits. That
  use is the containers' writable layers and logs plus every emptyDir not backed by memory, whoever
  writes it (kubernetes/kubernetes pkg/kubelet/eviction/eviction_manager.go,
  `podEphemeralStorageLimitEviction`: `resourcehelper.PodLimits` against the pod's stats). Our
  server containers set no ephemeral-storage limit, so the sidecar's limit is the pod's: a 10 GiB
  sidecar limit evicted a vLLM pod as soon as its 20 GiB disk-backed XLA cache passed 10 GiB.
- The sidecar stages writes in its `gke-gcsfuse-buffer` emptyDir (temp-dir under /gcsfuse-buffer:
  gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go, pkg/sidecar_mounter/sidecar_mounter_config.go).
  With staged writes a new file is kept whole on the node's disk until it is closed (gcsfuse
  docs/semantics.md, "Staged Writes"); streaming writes, which upload as they go, are the default
  only from GKE 1.33.2-gke.4655000 (gcs-fuse-csi-driver docs/releases.md) and fall back to staging
  for out-of-order writes. So a workload that writes N bytes through the mount may stage N bytes.
- Memory-backed volumes (our file cache, /dev/shm) are memory, not ephemeral storage: the cache is
  covered by the sidecar's memory limit instead.
- The webhook copies a limit into an unset request (gcs-fuse-csi-driver pkg/webhook/config.go,
  `populateResource`), and the scheduler needs the request free on the node's boot disk. So the
  request is set on its own: what the pod keeps on disk (its disk-backed volumes plus writable
  layers and logs), while the limit adds what it may stage for a while.
Hardening (k8s.security): the injected sidecar follows Pod Security `restricted` on its own (uid
65534, read-only root, no capabilities, seccomp; gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go), so a
hardened pod stays admissible in a `restricted` namespace; the writable emptyDirs `harden` adds are disk
volumes, so pod builders compute these annotations from the hardened pod's volumes. A non-root workload
that writes through the mount needs the mount to be its own (`uid=`/`gid=` in `extra`).
Annotations: "Configure the Cloud Storage FUSE CSI driver sidecar container for GKE"
(cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-sidecar).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

DRIVER = "gcsfuse.csi.storage.gke.io"
CACHE_VOLUME = "gke-gcsfuse-cache"  # the name the sidecar looks for; any other name is ignored
GiB = 1024**3
WRITABLE_GIB = 4
"""Disk a pod uses outside its own emptyDir volumes: the containers' writable layers and logs (kubelet
rotates logs) and the sidecar's `gke-gcsfuse-tmp` volume."""


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


def disk_volumes_gib(volumes: Sequence[k8s.core.v1.VolumeArgs]) -> int:
    """GiB of the pod's emptyDir volumes on the node's disk (not `medium: Memory`), by their sizeLimit.

    Each must have one (`NGi`): an unbounded disk volume cannot be budgeted."""
    total = 0
    for volume in volumes:
        empty_dir = volume.empty_dir
        if empty_dir is None or empty_dir.medium == "Memory":
            continue
        size = empty_dir.size_limit
        match = re.fullmatch(r"(\d+)Gi", size) if isinstance(size, str) else None
        if match is None:
            raise ValueError(f"emptyDir {volume.name!r} needs a sizeLimit in Gi to be budgeted, not {size!r}")
        total += int(match.group(1))
    return total


def sidecar_annotations(
    cache_gib: int,
    cpu_limit: str = "4",
    *,
    staged_gib: int,
    volumes: Sequence[k8s.core.v1.VolumeArgs] = (),
    memory_limit: str | None = None,
) -> dict[str, str]:
    """Bounded sidecar. Memory: the memory-backed cache is charged to it, so its limit covers the cache
    (`memory_limit` instead, when given: "0" is no limit, for a sidecar with no file cache that must not throttle).

    Ephemeral storage (see the module docstring): its limit is the pod's, so it covers the pod's
    disk-backed `volumes`, `WRITABLE_GIB` of writable layers and logs, and `staged_gib`, the most the
    workload writes through the mount (which may be staged whole on the node's disk before upload).
    The request is what the pod keeps, without the staging."""
    kept = WRITABLE_GIB + disk_volumes_gib(volumes)
    return {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-request": "500m",
        "gke-gcsfuse/cpu-limit": cpu_limit,
        "gke-gcsfuse/memory-request": "1Gi",
        "gke-gcsfuse/memory-limit": memory_limit if memory_limit is not None else f"{cache_gib + 2}Gi",
        "gke-gcsfuse/ephemeral-storage-request": f"{kept}Gi",
        "gke-gcsfuse/ephemeral-storage-limit": f"{kept + staged_gib}Gi",
    }
