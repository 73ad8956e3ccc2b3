"""The vLLM server's pod template: engine container, weights on GCS FUSE, a safe compile cache.

The engine writes compiled programs to `VLLM_XLA_CACHE_PATH` (vllm/engine_env.py); the tutorial points that
at the shared GCS FUSE mount, which breaks with two replicas. Here it is a local directory per pod, kept in
GCS per model, slice and vLLM build by `k8s.compile_cache` (see there why a second replica cannot break).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.upstream import fact
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.k8s import compile_cache
from tpu_stacks.k8s.gcsfuse import cache_volume, fuse_volume, mount_options, sidecar_annotations
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.probes import liveness_probe, readiness_probe, startup_probe
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources
from tpu_stacks.objects import annotations
from tpu_stacks.vllm.engine_env import XLA_CACHE_DIR, engine_env
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.spec import HEALTH_PATH, PORT

SECRET_NAME = "hf-secret"
"""The stack's one Secret: the Hugging Face token and vLLM's API key (VllmStack declares it)."""
HF_SECRET_KEY = "hf_api_token"  # the tutorial's key name in Secret hf-secret
API_KEY_SECRET_KEY = "api_key"
HF_TOKEN_DIR = "/var/run/secrets/huggingface"
"""Where a pod that reads the Hugging Face token mounts it (a file, never an environment value)."""
API_KEY_ENV = str(fact("vllm.env.api-key").value)
"""Where vLLM reads its API key when no --api-key is given (the ledger row read it in vllm/envs.py)."""
LOCAL_CACHE = XLA_CACHE_DIR
XLA_CACHE_GIB = 20
USER = VLLM.image_user()
# The server downloads the weights into the mount on first start: the files belong to its user.
OWNER_OPTIONS = (f"uid={USER.uid}", f"gid={USER.uid}")
"""The per-pod XLA compile cache on the node's disk (an emptyDir, counted in the pod's ephemeral storage)."""


def _env(plan: VllmPlan, secret_name: str | None) -> list[k8s.core.v1.EnvVarArgs]:
    env = [
        *(k8s.core.v1.EnvVarArgs(name=name, value=value) for name, value in engine_env(plan.spec).items()),
        # Weights go to --download-dir (the bucket); only config and tokenizer files reach HOME (k8s.huggingface).
        *hf_env(),
    ]
    if secret_name and plan.model.architecture.gated:
        # The token is read from a file (HF_TOKEN_PATH), never exposed as an environment value (ledger:
        # huggingface-hub-vllm.token-path, huggingface-hub-vllm.token-file), read at the oldest release vllm-tpu
        # allows (ledger: vllm.requires.huggingface-hub).
        env.append(k8s.core.v1.EnvVarArgs(name="HF_TOKEN_PATH", value=f"{HF_TOKEN_DIR}/{HF_SECRET_KEY}"))
    if secret_name and plan.spec.api_key:
        # The server reads its key from the environment when no --api-key is given (ledger: vllm.env.api-key,
        # vllm.api-key.env-fallback).
        env.append(
            k8s.core.v1.EnvVarArgs(
                name=API_KEY_ENV,
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    secret_key_ref=k8s.core.v1.SecretKeySelectorArgs(name=secret_name, key=API_KEY_SECRET_KEY)
                ),
            )
        )
    return env


def _mounts(plan: VllmPlan, secret_name: str | None) -> list[k8s.core.v1.VolumeMountArgs]:
    mounts = [
        k8s.core.v1.VolumeMountArgs(name="weights", mount_path=plan.spec.download_dir),
        k8s.core.v1.VolumeMountArgs(name="dshm", mount_path="/dev/shm"),
    ]
    if plan.spec.compile_cache:
        mounts.append(k8s.core.v1.VolumeMountArgs(name="xla-cache", mount_path=LOCAL_CACHE))
    if secret_name and plan.model.architecture.gated:
        mounts.append(k8s.core.v1.VolumeMountArgs(name="hf-token", mount_path=HF_TOKEN_DIR, read_only=True))
    return mounts


def _volumes(plan: VllmPlan, bucket: pulumi.Input[str], secret_name: str | None) -> list[k8s.core.v1.VolumeArgs]:
    volumes = [
        fuse_volume("weights", bucket, mount_options(plan.cache_gib, only_dir="weights", extra=OWNER_OPTIONS)),
        cache_volume(plan.cache_gib),
        k8s.core.v1.VolumeArgs(
            name="dshm", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit="16Gi")
        ),
    ]
    if plan.spec.compile_cache:
        volumes.append(compile_cache.cache_volume("xla-cache", XLA_CACHE_GIB))
    if secret_name and plan.model.architecture.gated:
        volumes.append(
            k8s.core.v1.VolumeArgs(
                name="hf-token",
                secret=k8s.core.v1.SecretVolumeSourceArgs(
                    secret_name=secret_name,
                    items=[k8s.core.v1.KeyToPathArgs(key=HF_SECRET_KEY, path=HF_SECRET_KEY)],
                    default_mode=0o400,
                ),
            )
        )
    return volumes


def _cache_containers(plan: VllmPlan, bucket: pulumi.Input[str]) -> list[k8s.core.v1.ContainerArgs]:
    return compile_cache.sync_containers("xla-cache", "xla-cache", LOCAL_CACHE, bucket, plan.compile_cache_prefix)


def pod_template(
    plan: VllmPlan,
    pool: PoolPlan,
    labels: dict[str, str],
    bucket: pulumi.Input[str],
    ksa: str,
    secret_name: str | None,
    image: pulumi.Input[str],
) -> k8s.core.v1.PodTemplateSpecArgs:
    spec = plan.spec
    server = k8s.core.v1.ContainerArgs(
        name="vllm-tpu",
        image=image,
        command=["python3", "-m", "vllm.entrypoints.openai.api_server"],  # ledger: vllm.server.api-server-module
        args=plan.engine_args(),
        env=_env(plan, secret_name),
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=PORT)],
        resources=tpu_resources(pool, spec.resources.cpu, spec.resources.memory),
        startup_probe=startup_probe(HEALTH_PATH, PORT, spec.startup_minutes),
        readiness_probe=readiness_probe(HEALTH_PATH, PORT),
        liveness_probe=liveness_probe(HEALTH_PATH, PORT),
        volume_mounts=_mounts(plan, secret_name),
    )
    # Workload Identity needs no Kubernetes API token: the pod never calls the API.
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=ksa,
            node_selector=tpu_node_selector(pool),
            init_containers=_cache_containers(plan, bucket) if spec.compile_cache else None,
            containers=[server],
            volumes=_volumes(plan, bucket, secret_name),
            termination_grace_period_seconds=60,
        ),
        USER,
    )
    # The first start downloads the weights through the mount (--download-dir is the weights folder):
    # with staged writes all of them may sit on the node's disk before upload (k8s.gcsfuse explains).
    # After `harden`: its writable emptyDirs count in the pod's ephemeral storage too.
    sidecar = sidecar_annotations(plan.cache_gib, staged_gib=plan.cache_gib, volumes=pod.volumes)
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=sidecar), spec=pod
    )


def workload_annotations(plan: VllmPlan) -> dict[str, str]:
    """What the policy pack needs to re-check the fit at preview."""
    slo = plan.slo.annotations() if plan.slo else {}
    return {**annotations.for_serving(plan.request, plan.tensor_parallel_size), **slo}
