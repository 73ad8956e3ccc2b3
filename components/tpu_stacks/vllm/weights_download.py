"""The one-shot weights download Job of a multi-host vLLM stack (decided in `vllm.download_plan`).

One pod, on the cluster's CPU nodes (no TPU), writes the model once into the weights bucket through GCS FUSE;
`pulumi up` waits for it to complete before it declares the RayService, whose hosts then only read. Hardened
like every pod here (k8s.security); the gated model's token is read from the stack's Secret as a file; its
network policy allows DNS, the metadata server and HTTPS outside the cluster only (vllm.network).
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.gcp.identity import BucketGrantArgs
from tpu_stacks.k8s.gcsfuse import fuse_volume, sidecar_annotations
from tpu_stacks.k8s.security import harden
from tpu_stacks.objects.awaits import job_budget
from tpu_stacks.vllm import download_plan
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.pod import OWNER_OPTIONS, USER, _mounts, _volumes
from tpu_stacks.vllm.rayservice import token_env
from tpu_stacks.workload import READ_ROLE, WRITE_ROLE, under_prefix

CONTAINER = "download"
WRITE_OPTIONS = ("implicit-dirs", f"only-dir={download_plan.WEIGHTS_DIR}", *OWNER_OPTIONS)
"""The same folder of the bucket the servers mount (`only-dir=weights`), as the server image's user; no file
cache: the Job writes, nothing is read twice."""


def writer_grants(bucket: pulumi.Input[str]) -> list[BucketGrantArgs]:
    """The download Job's identity: list and read the bucket (gcsfuse lists the folder it mounts; a retried download
    skips complete files), write only under the weights folder (objectUser: a file written again replaces an
    object, which Cloud Storage counts as a delete)."""
    return [
        BucketGrantArgs(bucket=bucket, role=READ_ROLE),
        BucketGrantArgs(
            bucket=bucket,
            role=WRITE_ROLE,
            condition=under_prefix(bucket, download_plan.WEIGHTS_DIR, "vLLM weights download: the weights folder"),
        ),
    ]


def server_grants(plan: VllmPlan) -> Callable[[pulumi.Input[str]], list[BucketGrantArgs]]:
    """The Ray pods' identity: read the bucket (the weights, the compile cache); write only under the compile cache's
    key, which the TPU hosts upload with `gcloud storage rsync --no-clobber` (k8s.compile_cache: list the
    destination, read, create; objectUser under the prefix, parallel composite uploads off)."""

    def grants(bucket: pulumi.Input[str]) -> list[BucketGrantArgs]:
        read = [BucketGrantArgs(bucket=bucket, role=READ_ROLE)]
        if not plan.spec.compile_cache:
            return read
        title = "vLLM servers: the XLA compile cache"
        cache = under_prefix(bucket, plan.compile_cache_prefix, title)
        return [*read, BucketGrantArgs(bucket=bucket, role=WRITE_ROLE, condition=cache)]

    return grants


def weights_bytes(plan: VllmPlan) -> int:
    return plan.verdict.memory.part("weights")


def weights_download_job(
    name: str,
    plan: VllmPlan,
    bucket: pulumi.Input[str],
    secret_name: str | None,
    image: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> k8s.batch.v1.Job:
    """Declare the Job; Pulumi waits until it completes (its deadline from the model's size)."""
    spec = plan.spec
    path = download_plan.model_path(spec.download_dir, plan.model.id)
    token = [m for m in _mounts(plan, secret_name) if m.name == "hf-token"]
    volumes = [
        fuse_volume("weights", bucket, ",".join(WRITE_OPTIONS)),
        *(v for v in _volumes(plan, bucket, secret_name) if v.name == "hf-token"),
    ]
    container = k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=image,
        command=download_plan.command(plan.model.id, path),
        env=token_env(plan, secret_name),
        resources=k8s.core.v1.ResourceRequirementsArgs(
            requests={"cpu": download_plan.CPU, "memory": download_plan.MEMORY},
            limits={"cpu": download_plan.CPU, "memory": download_plan.MEMORY},
        ),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="weights", mount_path=spec.download_dir), *token],
    )
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            # Workload Identity: the bucket's one writer (weights_writer), not the servers' read-only account
            service_account_name=download_plan.writer_ksa(spec.ksa_name),
            restart_policy="Never",
            containers=[container],
            volumes=volumes,
        ),
        USER,
    )
    deadline = download_plan.deadline_seconds(weights_bytes(plan))
    annotations = sidecar_annotations(0, staged_gib=download_plan.STAGED_GIB, volumes=pod.volumes or [])
    labels = dict(download_plan.LABELS)
    return k8s.batch.v1.Job(
        f"{name}-weights-download",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=download_plan.JOB_NAME, namespace=spec.namespace, labels=labels),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=download_plan.BACKOFF_LIMIT,
            active_deadline_seconds=deadline,
            # Kept when done: a Job deleted by a TTL would be created again (and its image pulled) at the next up.
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=annotations), spec=pod
            ),
        ),
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(custom_timeouts=job_budget(deadline).custom_timeouts(), delete_before_replace=True),
        ),
    )
