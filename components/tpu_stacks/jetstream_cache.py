"""Containers that talk to the bucket through the GCS API: wait for the checkpoint, keep the compile cache.

Waiting. Pulumi creates the Deployment only after the converter Job completed; the init container
below also checks that `model.safetensors` and `tokenizer.model` exist before the server starts, so
a pod scheduled while a conversion is re-run (or after the objects were removed) waits in `Init`
with a message naming the Job, instead of crash-looping on a missing file.

Compile cache. Each pod compiles into a local directory; an init container restores the entries of
this key from GCS and a native sidecar uploads new ones with `gcloud storage rsync --no-clobber`,
where every object write is atomic. Two replicas never write one directory through FUSE (the
failure the vLLM tutorial documents). Same pattern as `vllm_pod`; see the report on sharing it.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.jetstream_spec import COMPILE_CACHE_DIR, JetStreamPlan
from tpu_stacks.vllm_spec import CLOUD_SDK_IMAGE  # the one pinned Cloud SDK image of the project

CACHE_VOLUME = "jax-cache"
SYNC_SECONDS = 120
POLL_SECONDS = 30
SMALL = k8s.core.v1.ResourceRequirementsArgs(requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "1Gi"})


def wait_for_checkpoint(plan: JetStreamPlan, bucket: pulumi.Input[str]) -> k8s.core.v1.ContainerArgs:
    """Init container: block (not crash) until the converter's two output objects exist."""
    namespace, job = plan.spec.namespace, plan.converter_job_name

    def script(name: str) -> str:
        prefix = f"gs://{name}/{plan.checkpoint_prefix}"
        return (
            f"until gcloud storage ls {prefix}model.safetensors {prefix}tokenizer.model >/dev/null 2>&1; do "
            f"echo 'waiting for the converted checkpoint in {prefix} (kubectl logs -n {namespace} job/{job})'; "
            f"sleep {POLL_SECONDS}; done; echo 'checkpoint found in {prefix}'"
        )

    return k8s.core.v1.ContainerArgs(
        name="wait-for-checkpoint", image=CLOUD_SDK_IMAGE, command=["sh", "-c", pulumi.Output.from_input(bucket).apply(script)],
        resources=SMALL,
    )


def cache_volume() -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(name=CACHE_VOLUME, empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit="20Gi"))


def cache_mount() -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name=CACHE_VOLUME, mount_path=COMPILE_CACHE_DIR)


def cache_containers(plan: JetStreamPlan, bucket: pulumi.Input[str]) -> list[k8s.core.v1.ContainerArgs]:
    """Restore (init container) and upload (native sidecar) of this key's compile cache."""
    remote = pulumi.Output.concat("gs://", bucket, "/", plan.compile_cache_prefix)
    restore = remote.apply(
        lambda url: f"gcloud storage rsync --recursive {url} {COMPILE_CACHE_DIR} || echo 'no compile cache yet for this key'"
    )
    upload = remote.apply(
        lambda url: (
            f"upload() {{ gcloud storage rsync --recursive --no-clobber {COMPILE_CACHE_DIR} {url} || true; }}; "
            f"trap 'upload; exit 0' TERM; while true; do sleep {SYNC_SECONDS} & wait $!; upload; done"
        )
    )
    return [
        k8s.core.v1.ContainerArgs(name="jax-cache-restore", image=CLOUD_SDK_IMAGE, command=["sh", "-c", restore],
                                  volume_mounts=[cache_mount()], resources=SMALL),
        k8s.core.v1.ContainerArgs(name="jax-cache-upload", image=CLOUD_SDK_IMAGE, command=["sh", "-c", upload],
                                  volume_mounts=[cache_mount()], resources=SMALL, restart_policy="Always"),
    ]
