"""The SGLang-JAX server's pod template: the engine container, the weights bucket on GCS FUSE as its download
directory, and a local JAX compile cache.

The server downloads the weights itself on its first start: its model loader calls huggingface_hub's
snapshot_download with `--download-dir` as the cache (ledger: sglang.flag.download-dir), here the bucket's
`weights/` folder, so a later start reads them back. The JAX compile cache is where the scheduler finds
JAX_COMPILATION_CACHE_DIR (ledger: sglang.env.jax-compilation-cache-dir): an emptyDir per pod.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.upstream import text
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.k8s import compile_cache
from tpu_stacks.k8s.gcsfuse import cache_volume, fuse_volume, mount_options, sidecar_annotations
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.probes import liveness_probe, readiness_probe, startup_probe
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources
from tpu_stacks.objects import annotations
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.sglang.plan import SglangPlan
from tpu_stacks.sglang.spec import HEALTH_PATH, PORT

CONTAINER = "sglang-jax"
HF_SECRET_KEY = "hf_api_token"
TOKEN_DIR = "/var/run/secrets/huggingface"
COMPILE_CACHE_DIR = "/jax-cache"
COMPILE_CACHE_GIB = 20
COMPILE_CACHE_ENV = text("sglang.env.jax-compilation-cache-dir")
USER = SGLANG.image_user()
OWNER_OPTIONS = (f"uid={USER.uid}", f"gid={USER.uid}")
"""The server writes the weights into the mount on its first start: the files belong to its user."""
SERVER_COMMAND = ["python3", "-m", "sgl_jax.launch_server"]  # ledger: sglang.server.module


def _env(plan: SglangPlan, secret_name: str | None) -> list[k8s.core.v1.EnvVarArgs]:
    env = [k8s.core.v1.EnvVarArgs(name=COMPILE_CACHE_ENV, value=COMPILE_CACHE_DIR), *hf_env()]
    # read from a file by huggingface_hub (HF_TOKEN_PATH), never an environment value, in the 0.34 release sglang-jax
    # requires (ledger: huggingface-hub-sglang.token-path, huggingface-hub-sglang.token-file,
    # sglang-jax.requires.huggingface-hub)
    if secret_name:
        env.append(k8s.core.v1.EnvVarArgs(name="HF_TOKEN_PATH", value=f"{TOKEN_DIR}/{HF_SECRET_KEY}"))
    return env


def _volumes(plan: SglangPlan, bucket: pulumi.Input[str], secret_name: str | None) -> list[k8s.core.v1.VolumeArgs]:
    volumes = [
        fuse_volume("weights", bucket, mount_options(plan.cache_gib, only_dir="weights", extra=OWNER_OPTIONS)),
        cache_volume(plan.cache_gib),
        compile_cache.cache_volume("jax-cache", COMPILE_CACHE_GIB),
    ]
    if secret_name:
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


def _mounts(plan: SglangPlan, secret_name: str | None) -> list[k8s.core.v1.VolumeMountArgs]:
    mounts = [
        k8s.core.v1.VolumeMountArgs(name="weights", mount_path=plan.spec.download_dir),
        compile_cache.cache_mount("jax-cache", COMPILE_CACHE_DIR),
    ]
    if secret_name:
        mounts.append(k8s.core.v1.VolumeMountArgs(name="hf-token", mount_path=TOKEN_DIR, read_only=True))
    return mounts


def pod_template(
    plan: SglangPlan,
    pool: PoolPlan,
    labels: dict[str, str],
    bucket: pulumi.Input[str],
    secret_name: str | None,
    image: pulumi.Input[str],
) -> k8s.core.v1.PodTemplateSpecArgs:
    spec = plan.spec
    server = k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=image,
        command=SERVER_COMMAND,
        args=plan.engine_args(),
        env=_env(plan, secret_name),
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=PORT)],
        resources=tpu_resources(pool, spec.resources.cpu, spec.resources.memory),
        startup_probe=startup_probe(HEALTH_PATH, PORT, spec.startup_minutes),
        readiness_probe=readiness_probe(HEALTH_PATH, PORT),
        liveness_probe=liveness_probe(HEALTH_PATH, PORT),
        volume_mounts=_mounts(plan, secret_name),
    )
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=spec.ksa_name,
            node_selector=tpu_node_selector(pool),
            containers=[server],
            volumes=_volumes(plan, bucket, secret_name),
            termination_grace_period_seconds=60,
        ),
        USER,
    )
    # The first start downloads the weights through the mount: staged writes may hold all of them on the node's
    # disk before upload (k8s/gcsfuse.py explains); after `harden`, whose emptyDirs count too.
    sidecar = sidecar_annotations(plan.cache_gib, staged_gib=plan.cache_gib, volumes=pod.volumes)
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=sidecar), spec=pod
    )


def workload_annotations(plan: SglangPlan) -> dict[str, str]:
    """What the policy pack needs to re-check the fit at preview."""
    return annotations.for_serving(plan.request, plan.tensor_parallel_size)
