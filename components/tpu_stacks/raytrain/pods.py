"""The RayCluster's pod templates: a CPU head and one TPU worker per VM of every slice.

Both mount the checkpoint bucket at /data through GCS FUSE, as the tutorial does, with three
fixes ([K-RAY], [GCSFUSE]):
- the sidecar's file cache volume is named `gke-gcsfuse-cache`, the name the driver looks for
  (the tutorial's `gcs-fuse-cache` is a dead volume), sized to what a worker reads on resume;
- the sidecar is bounded; its ephemeral storage also covers the checkpoint writes it may stage
  before upload (k8s.gcsfuse explains why the sidecar's figure is the pod's);
- the mount belongs to the image's `ray` user, which writes the checkpoints.
The KubeRay TPU webhook (Ray add-on) adds TPU_WORKER_ID/HOSTNAMES and the pod affinity that keeps
each replica on one slice; with several slices it also adds the MEGASCALE coordinator settings
once MEGASCALE_NUM_SLICES is set (ai-on-gke/kuberay-tpu-webhook README).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.k8s.gcsfuse import cache_volume, fuse_volume, mount_options, sidecar_annotations
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources
from tpu_stacks.ray.pods import CLUSTER_LABEL, RAY_TMP_GIB, ROLE_LABEL
from tpu_stacks.ray.ports import TRAIN_HEAD_PORTS
from tpu_stacks.raytrain.plan import RayTrainPlan
from tpu_stacks.raytrain.spec import DATA_MOUNT, RAY_USER_ID

FUSE_VOLUME = "gcs-fuse-csi-ephemeral"  # the tutorial's volume name
HEAD_CACHE_GIB = 1  # the head writes Ray Train's run state only
SHM_LIMIT = "16Gi"
# Upstream's multi-slice mount options: files belong to the ray user, group-writable.
OWNER_OPTIONS = (f"uid={RAY_USER_ID}", f"gid={RAY_USER_ID}", "dir-mode=775", "file-mode=664")


def _volumes(bucket: pulumi.Input[str], cache_gib: int) -> list[k8s.core.v1.VolumeArgs]:
    return [
        fuse_volume(FUSE_VOLUME, bucket, mount_options(cache_gib, extra=OWNER_OPTIONS)),
        cache_volume(cache_gib),
        k8s.core.v1.VolumeArgs(
            name="dshm", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit=SHM_LIMIT)
        ),
    ]


def _mounts() -> list[k8s.core.v1.VolumeMountArgs]:
    return [
        k8s.core.v1.VolumeMountArgs(name=FUSE_VOLUME, mount_path=DATA_MOUNT),
        k8s.core.v1.VolumeMountArgs(name="dshm", mount_path="/dev/shm"),
    ]


USER = RAY.image_user()  # the image's ray user (RAY_USER_ID), never root


RAY_METRICS_PORT = (
    RAY.scrape_port()
)  # KubeRay's default metrics port (catalog/engines/ray.py, RAY; ledger: kuberay.port.metrics)


def pod_labels(plan: RayTrainPlan, role: str | None = None) -> dict[str, str]:
    """The Ray pods' labels (KubeRay adds its own): the cluster's, and with `role` the head's or workers'."""
    labels = {CLUSTER_LABEL: plan.spec.ray_cluster_name}
    return {**labels, ROLE_LABEL: role} if role else labels


def _metadata(
    cache_gib: int, volumes: list[k8s.core.v1.VolumeArgs] | None, labels: dict[str, str]
) -> k8s.meta.v1.ObjectMetaArgs:
    """A pod writes at most what it reads back (the cache's payload) through the mount at a time."""
    notes = sidecar_annotations(cache_gib, staged_gib=cache_gib, volumes=volumes or [])
    return k8s.meta.v1.ObjectMetaArgs(labels=labels, annotations=notes)


def head_template(
    plan: RayTrainPlan, bucket: pulumi.Input[str], image: pulumi.Input[str]
) -> k8s.core.v1.PodTemplateSpecArgs:
    """The head: GCS, dashboard and client ports, and the trainer's driver (it runs the RayJob's entrypoint)."""
    head = plan.spec.head
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=plan.spec.ksa_name,
            containers=[
                k8s.core.v1.ContainerArgs(
                    name="ray-head",
                    image=image,
                    image_pull_policy="IfNotPresent",
                    ports=[
                        k8s.core.v1.ContainerPortArgs(name=port_name, container_port=port)
                        for port_name, port in TRAIN_HEAD_PORTS.items()
                    ],
                    resources=k8s.core.v1.ResourceRequirementsArgs(
                        # The head is a CPU pod: limited as it asks (k8s.security: only TPU hosts go without).
                        requests={"cpu": head.cpu, "memory": head.memory},
                        limits={"cpu": head.cpu, "memory": head.memory},
                    ),
                    env=hf_env(),  # the driver may load a tokenizer from Hugging Face (k8s.huggingface)
                    volume_mounts=_mounts(),
                )
            ],
            volumes=_volumes(bucket, HEAD_CACHE_GIB),
        ),
        USER,  # no Kubernetes API token: the in-tree autoscaler, the one user of it, is off
        gib=RAY_TMP_GIB,
    )
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=_metadata(HEAD_CACHE_GIB, pod.volumes, pod_labels(plan, "head")), spec=pod
    )


def worker_env(plan: RayTrainPlan) -> list[k8s.core.v1.EnvVarArgs]:
    """The tutorial's JAX settings; with several slices, the count that turns on the webhook's MEGASCALE wiring;
    the Hugging Face client's bounds."""
    env = [
        k8s.core.v1.EnvVarArgs(name="JAX_PLATFORMS", value="tpu"),
        k8s.core.v1.EnvVarArgs(name="ENABLE_PJRT_COMPATIBILITY", value="true"),
        # MaxText's `hf` input pipeline and tokenizers come from Hugging Face: no Xet chunk cache in the
        # 10 GiB ~/.cache emptyDir, which its 10 GiB default alone would fill (k8s.huggingface).
        *hf_env(),
    ]
    if plan.spec.slices > 1:
        env.append(k8s.core.v1.EnvVarArgs(name="MEGASCALE_NUM_SLICES", value=str(plan.spec.slices)))
    return env


def worker_template(
    plan: RayTrainPlan, pool: PoolPlan, bucket: pulumi.Input[str], image: pulumi.Input[str]
) -> k8s.core.v1.PodTemplateSpecArgs:
    """One TPU VM: all its chips, the slice's node selectors, the JAX env and the bucket."""
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=plan.spec.ksa_name,
            node_selector=tpu_node_selector(pool),
            containers=[
                k8s.core.v1.ContainerArgs(
                    name="ray-worker",
                    image=image,
                    image_pull_policy="IfNotPresent",
                    resources=tpu_resources(pool, plan.spec.worker.cpu, plan.worker_memory),
                    env=worker_env(plan),
                    volume_mounts=_mounts(),
                )
            ],
            volumes=_volumes(bucket, plan.fuse_cache_gib),
        ),
        USER,
        gib=RAY_TMP_GIB,
    )
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=_metadata(plan.fuse_cache_gib, pod.volumes, pod_labels(plan, "worker")), spec=pod
    )


SUBMITTER_LABEL = "tpu-stacks.dev/ray-job-submitter"
SUBMITTER_RESOURCES = k8s.core.v1.ResourceRequirementsArgs(
    requests={"cpu": "500m", "memory": "200Mi"}, limits={"cpu": "1", "memory": "1Gi"}
)
"""KubeRay's own default for the submitter (ray-operator/controllers/ray/common/job.go,
GetDefaultSubmitterContainer)."""


def submitter_template(plan: RayTrainPlan, image: pulumi.Input[str]) -> k8s.core.v1.PodTemplateSpecArgs:
    """The RayJob's submitter pod (K8sJobMode), hardened like the Ray pods: KubeRay's default template has
    no security context, which a `restricted` namespace refuses. KubeRay keeps a given template and fills
    in the `ray job submit` command when the first container has none (rayjob_controller.go,
    getSubmitterTemplate). Its own label: it reaches the head's job API only (the dashboard allow)."""
    pod = harden(
        k8s.core.v1.PodSpecArgs(
            restart_policy="Never",
            containers=[
                k8s.core.v1.ContainerArgs(name="ray-job-submitter", image=image, resources=SUBMITTER_RESOURCES)
            ],
        ),
        USER,  # no Kubernetes API token: it talks to the Ray dashboard over HTTP
    )
    return k8s.core.v1.PodTemplateSpecArgs(metadata=k8s.meta.v1.ObjectMetaArgs(labels=submitter_labels(plan)), spec=pod)


def submitter_labels(plan: RayTrainPlan) -> dict[str, str]:
    """The submitter pod's labels (its network policy selects these)."""
    return {SUBMITTER_LABEL: plan.spec.ray_cluster_name}
