"""The JetStream pod: the `jetstream-pytorch-server` engine and the `jetstream-http` gateway.

Containers share the pod's network: the HTTP gateway on 8000 turns `/generate` into gRPC calls to
the engine on 9000 ([K-JETSTREAM]). Probes: each container's liveness checks itself
(the engine's gRPC port, the gateway's root); readiness is end to end through the gateway's
`/healthcheck` where the gateway has it (v0.2.3+), and the engine's gRPC port in any case, so the
Service sends traffic only once the model is loaded. A startup probe gives the first load and XLA
compile `startupMinutes`.

Converter flow: the checkpoint comes read-only from the bucket through GCS FUSE (`implicit-dirs`,
as the tutorial), behind an init container that waits for it. Download flow: `jpt serve` downloads
into a local per-pod directory (upstream dropped its FUSE working dir for a race) and reads the
token from the file its entrypoint expects.
"""

from __future__ import annotations

import math

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.models import dtype_bytes
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.jetstream.compile_cache import cache_containers, cache_mount, cache_volume, wait_for_checkpoint
from tpu_stacks.jetstream.converter import hf_token_mount, hf_token_volume
from tpu_stacks.jetstream.engine import JETSTREAM_METRICS_FLAG, JETSTREAM_USER
from tpu_stacks.jetstream.plan import JetStreamPlan
from tpu_stacks.jetstream.spec import COMPILE_CACHE_DIR, GRPC_PORT, HTTP_PORT, METRICS_PORT, MODELS_DIR, WEIGHTS_DIR
from tpu_stacks.k8s.gcsfuse import fuse_volume, sidecar_annotations
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.probes import liveness_probe, readiness_probe, tcp_probe
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources

CHECKPOINT_VOLUME = "gcs-fuse-checkpoint"  # the tutorial's volume name
CHECKPOINT_MOUNT_OPTIONS = "implicit-dirs"  # upstream's only option ([K-JETSTREAM-CONV]): the engine reads it once
HTTP_RESOURCES = k8s.core.v1.ResourceRequirementsArgs(
    requests={"cpu": "500m", "memory": "512Mi"}, limits={"cpu": "1", "memory": "1Gi"}
)  # the gateway gets a CPU limit, the engine none (k8s.security says why)
USER = JETSTREAM_USER
GiB = 1024**3
HF_HOME = f"{WEIGHTS_DIR}/.huggingface"
"""Download flow: the Hugging Face client's cache and token on the weights volume (k8s.huggingface; ledger:
huggingface-hub-jetstream.hf-home), beside `jpt serve`'s `<working_dir>/<repo id>/hf_original`
(jetstream_pt/fetch_models.py `_hf_dir`)."""


def _weights_gib(plan: JetStreamPlan) -> int:
    """Download flow: the bf16 safetensors, plus the int8 copy `jpt serve` writes when quantizing."""
    params = plan.model.params
    payload = params * dtype_bytes("bf16") + (params * dtype_bytes("int8") if plan.spec.quantize_weights else 0)
    return math.ceil(payload * 1.2 / GiB)


def exports_metrics(plan: JetStreamPlan) -> bool:
    """The engine serves Prometheus metrics on METRICS_PORT (its flag is among the server's arguments)."""
    return any(a.startswith(f"{JETSTREAM_METRICS_FLAG}=") for a in plan.server_args())


def _server(plan: JetStreamPlan, pool: PoolPlan) -> k8s.core.v1.ContainerArgs:
    spec = plan.spec
    mounts = [cache_mount()] if spec.compile_cache else []
    if plan.converter_flow:
        mounts.append(k8s.core.v1.VolumeMountArgs(name=CHECKPOINT_VOLUME, mount_path=MODELS_DIR, read_only=True))
    else:
        mounts += [hf_token_mount(), k8s.core.v1.VolumeMountArgs(name="weights", mount_path=WEIGHTS_DIR)]
    # JAX reads this variable in any build; the download flow's flag names the same directory.
    env = (
        [k8s.core.v1.EnvVarArgs(name="JAX_COMPILATION_CACHE_DIR", value=COMPILE_CACHE_DIR)]
        if spec.compile_cache
        else []
    )
    if not plan.converter_flow:  # `jpt serve` downloads from Hugging Face
        env += hf_env(home=HF_HOME)
    return k8s.core.v1.ContainerArgs(
        name="jetstream-pytorch-server",
        image=plan.server_image,
        args=plan.server_args(),
        env=env or None,
        ports=[
            k8s.core.v1.ContainerPortArgs(name="grpc", container_port=GRPC_PORT),
            *(  # Managed Prometheus scrapes JetStream's metrics server (gcp/monitoring)
                [k8s.core.v1.ContainerPortArgs(name="metrics", container_port=METRICS_PORT)]
                if exports_metrics(plan)
                else []
            ),
        ],
        resources=tpu_resources(pool, spec.resources.cpu, spec.resources.memory),
        startup_probe=tcp_probe(GRPC_PORT, period=10, failures=spec.startup_minutes * 6),
        readiness_probe=tcp_probe(GRPC_PORT, period=10, failures=3),
        liveness_probe=tcp_probe(GRPC_PORT, period=15, failures=4),
        volume_mounts=mounts or None,
    )


def _http(plan: JetStreamPlan) -> k8s.core.v1.ContainerArgs:
    return k8s.core.v1.ContainerArgs(
        name="jetstream-http",
        image=plan.http_image,
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=HTTP_PORT)],
        resources=HTTP_RESOURCES,
        readiness_probe=readiness_probe(plan.health_path, HTTP_PORT),
        liveness_probe=liveness_probe("/", HTTP_PORT),
    )


def _volumes(plan: JetStreamPlan, bucket: pulumi.Input[str], secret_name: str | None) -> list[k8s.core.v1.VolumeArgs]:
    volumes = [cache_volume()] if plan.spec.compile_cache else []
    if plan.converter_flow:
        volumes.append(fuse_volume(CHECKPOINT_VOLUME, bucket, CHECKPOINT_MOUNT_OPTIONS, read_only=True))
    else:
        if secret_name:
            volumes.append(hf_token_volume(secret_name))
        volumes.append(
            k8s.core.v1.VolumeArgs(
                name="weights", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit=f"{_weights_gib(plan)}Gi")
            )
        )
    return volumes


def pod_template(
    plan: JetStreamPlan,
    pool: PoolPlan,
    labels: dict[str, str],
    bucket: pulumi.Input[str],
    secret_name: str | None,
) -> k8s.core.v1.PodTemplateSpecArgs:
    init: list[k8s.core.v1.ContainerArgs] = []
    if plan.converter_flow:
        init.append(wait_for_checkpoint(plan, bucket))
    if plan.spec.compile_cache:
        init += cache_containers(plan, bucket)
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=plan.spec.ksa_name,
            node_selector=tpu_node_selector(pool),
            init_containers=init or None,
            containers=[_server(plan, pool), _http(plan)],
            volumes=_volumes(plan, bucket, secret_name) or None,
            termination_grace_period_seconds=60,
        ),
        USER,  # no Kubernetes API token: Workload Identity needs none
    )
    # A bounded GCS FUSE sidecar without a file cache: the engine reads the checkpoint once, through a
    # read-only mount (nothing staged); the sidecar's ephemeral limit is the pod's, so it covers the
    # disk-backed compile cache and the writable emptyDirs of `harden` (k8s.gcsfuse explains).
    sidecar = sidecar_annotations(0, staged_gib=0, volumes=pod.volumes) if plan.converter_flow else None
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=sidecar), spec=pod
    )
