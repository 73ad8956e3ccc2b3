"""Containers that talk to the bucket through the GCS API: wait for the checkpoint, keep the compile cache.

Waiting. Pulumi creates the Deployment only after the converter Job completed; the init container
below also checks that `model.safetensors` and `tokenizer.model` exist before the server starts, so
a pod scheduled while a conversion is re-run (or after the objects were removed) waits in `Init`
with a message naming the Job, instead of crash-looping on a missing file.

Compile cache: the shared per-pod cache with GCS sync of `k8s.compile_cache`.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.jetstream.plan import JetStreamPlan
from tpu_stacks.jetstream.spec import COMPILE_CACHE_DIR
from tpu_stacks.k8s import compile_cache
from tpu_stacks.k8s.compile_cache import CLOUD_SDK_IMAGE, SMALL

CACHE_VOLUME = "jax-cache"
POLL_SECONDS = 30


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
        name="wait-for-checkpoint",
        image=CLOUD_SDK_IMAGE,
        command=["sh", "-c", pulumi.Output.from_input(bucket).apply(script)],
        resources=SMALL,
    )


def cache_volume() -> k8s.core.v1.VolumeArgs:
    return compile_cache.cache_volume(CACHE_VOLUME)


def cache_mount() -> k8s.core.v1.VolumeMountArgs:
    return compile_cache.cache_mount(CACHE_VOLUME, COMPILE_CACHE_DIR)


def cache_containers(plan: JetStreamPlan, bucket: pulumi.Input[str]) -> list[k8s.core.v1.ContainerArgs]:
    """Restore (init container) and upload (native sidecar) of this key's compile cache."""
    return compile_cache.sync_containers(
        "jax-cache", CACHE_VOLUME, COMPILE_CACHE_DIR, bucket, plan.compile_cache_prefix
    )
