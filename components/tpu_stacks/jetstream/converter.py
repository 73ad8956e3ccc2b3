"""The checkpoint-converter Job of the converter flow ([K-JETSTREAM-CONV]), without its faults.

Upstream's Job asks for `google.com/tpu: 8` on a `2x4` node, yet the converter only downloads from
Hugging Face, runs `convert_checkpoints` with torch on the CPU and uploads with `gcloud storage cp`
([CONVERTER] checkpoint_converter.sh). Here it requests no TPU at all:
- Standard: it runs on the cluster's jobs pool (cluster/jobs_pool.py), a CPU node sized for its requests that
  exists only while it runs (the pool autoscales from 0, and its taint keeps everything else off), so no TPU VM
  exists, and bills, while it downloads and converts: the TPU pool scales from 0 when the servers, declared after
  this Job, ask. The e2-standard-4 system nodes (16 GB) are too small for a 7B/8B state dict.
  `converter.nodeSelector` moves it to nodes of your own. On an existing cluster whose pools the stack does not
  create, it runs on the CPUs of the TPU pool's VMs as before (tolerating their taint, taking no chip).
- Autopilot: an ordinary CPU pod; Autopilot provisions a general-purpose node for it.
Its scratch space is a per-pod volume (download + converted copy + /tmp staging), so neither the
node's boot disk nor Autopilot's ephemeral-storage cap limits it. The disk must be one the VM can
attach: the machine it lands on decides it (catalog/disks.py: a CPU series' disk types, or a TPU generation's,
`Generation.disk_types`: v6e and tpu7x VMs attach only Hyperdisk, for which GKE installs no StorageClass, so one is
declared here). Also unlike upstream: a name per model, so two conversions can run at once; finished Jobs kept
`ttlHours` (not 30 s) so the logs can be read; a bounded number of retries and an active deadline; the token read
from a file.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.disks import PREINSTALLED_STORAGE_CLASSES, scratch_disk_type
from tpu_stacks.catalog.image_users import JETSTREAM_CONVERTER
from tpu_stacks.catalog.tpu import NODEPOOL_LABEL, TPU_TAINT_KEY
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.jetstream.plan import JetStreamPlan
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.security import HOME, harden
from tpu_stacks.objects.awaits import job_budget

CONTAINER = "inference-checkpoint"  # the tutorial's container name
HF_MOUNT = "/huggingface"  # the converter script reads /huggingface/HUGGINGFACE_TOKEN ([CONVERTER])
HF_SECRET_KEY = "HUGGINGFACE_TOKEN"
# Where the converter script writes, all on its scratch disk: it downloads, converts and stages ([CONVERTER];
# convert_checkpoints uses /tmp); first it clones jetstream-pytorch into /jetstream-pytorch and runs its
# install_everything.sh (ai-on-gke tutorials-and-examples/inference-servers/checkpoints/checkpoint_converter.sh,
# `convert_pytorch_checkpoint`), whose pip installs go to ~/.local for a non-root user whose site-packages is
# not writable; HOME also holds the Hugging Face client's cache (k8s.huggingface) and gcloud's config. The
# 2 GiB HOME emptyDir of `harden` would hold none of that, and the read-only root no clone [I: not run here].
SCRATCH_DIRS = {
    "base": "/base",
    "pt-ckpt": "/pt-ckpt",
    "tmp": "/tmp",
    "home": HOME,
    "jetstream-pytorch": "/jetstream-pytorch",
}
DISK_PROVISIONER = "pd.csi.storage.gke.io"  # GKE's Compute Engine Persistent Disk CSI driver (PD and Hyperdisk)


def converter_labels(plan: JetStreamPlan) -> dict[str, str]:
    """The Job's and its pod's labels (its network policy selects exactly these)."""
    return {"app": "jetstream-checkpoint-converter", "model": plan.names.checkpoint_dir or ""}


def hf_token_volume(secret_name: str) -> k8s.core.v1.VolumeArgs:
    """The token as a read-only file, owner-readable only (the tutorial's defaultMode 0400)."""
    return k8s.core.v1.VolumeArgs(
        name="huggingface-credentials",
        secret=k8s.core.v1.SecretVolumeSourceArgs(
            secret_name=secret_name,
            default_mode=0o400,
            items=[k8s.core.v1.KeyToPathArgs(key=HF_SECRET_KEY, path=HF_SECRET_KEY)],
        ),
    )


def hf_token_mount() -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name="huggingface-credentials", mount_path=HF_MOUNT, read_only=True)


def _placement(
    plan: JetStreamPlan, pool: PoolPlan
) -> tuple[dict[str, str] | None, list[k8s.core.v1.TolerationArgs] | None]:
    """Your nodes (`converter.nodeSelector`), else the jobs pool (its label, and its taint tolerated), else on
    Autopilot any CPU node, else (an existing cluster's pools) the TPU pool's VMs without a chip."""
    converter = plan.spec.converter
    if converter.node_selector is not None:
        return converter.node_selector, None
    jobs = plan.cluster.jobs_pool
    if jobs is not None:
        key, value = jobs.taint
        return jobs.node_selector(), [
            k8s.core.v1.TolerationArgs(key=key, operator="Equal", value=value, effect="NoSchedule")
        ]
    if pool.autopilot:
        return None, None
    toleration = k8s.core.v1.TolerationArgs(key=TPU_TAINT_KEY, operator="Exists", effect="NoSchedule")
    return {NODEPOOL_LABEL: pool.name}, [toleration]


def scratch_storage(plan: JetStreamPlan, pool: PoolPlan) -> tuple[str, str | None]:
    """(the scratch volume's StorageClass, the disk type of a class to declare for it, or None).

    `converter.storageClass` as the user set it. On the nodes the stack placed it on (Standard, no nodeSelector) the
    disk type their machine attaches, from the catalogue: the jobs pool's CPU machine (its series), or the TPU
    pool's VMs (the generation); GKE's own class for pd-balanced (standard-rwo), else a class of this converter's
    (`<namespace>-<job>`, one per Job, cluster-wide unique). Elsewhere (Autopilot's general-purpose nodes, your own
    nodes) the spec's default class."""
    converter = plan.spec.converter
    if "storage_class" in converter.model_fields_set or converter.node_selector is not None or pool.autopilot:
        return converter.storage_class, None
    jobs = plan.cluster.jobs_pool
    disk_type = scratch_disk_type(jobs.machine_type if jobs is not None else pool.shape.machine_type)
    if disk_type in PREINSTALLED_STORAGE_CLASSES:
        return PREINSTALLED_STORAGE_CLASSES[disk_type], None
    return f"{plan.spec.namespace}-{plan.converter_job_name}", disk_type


def _scratch_class(name: str, storage_class: str, disk_type: str, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A StorageClass for a disk type GKE has none for (Hyperdisk: "Scale your storage performance with
    Hyperdisk" creates one the same way), bound when the pod is scheduled so the disk is made in its zone."""
    return k8s.storage.v1.StorageClass(
        f"{name}-converter-scratch",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=storage_class),
        provisioner=DISK_PROVISIONER,
        parameters={"type": disk_type},
        volume_binding_mode="WaitForFirstConsumer",
        reclaim_policy="Delete",
        opts=opts,
    )


def _scratch_volume(plan: JetStreamPlan, storage_class: str) -> k8s.core.v1.VolumeArgs:
    converter = plan.spec.converter
    return k8s.core.v1.VolumeArgs(
        name="scratch",
        ephemeral=k8s.core.v1.EphemeralVolumeSourceArgs(
            volume_claim_template=k8s.core.v1.PersistentVolumeClaimTemplateArgs(
                spec=k8s.core.v1.PersistentVolumeClaimSpecArgs(
                    access_modes=["ReadWriteOnce"],
                    storage_class_name=storage_class,
                    resources=k8s.core.v1.VolumeResourceRequirementsArgs(
                        requests={"storage": f"{converter.disk_gib}Gi"}
                    ),
                )
            )
        ),
    )


def converter_job(
    name: str,
    plan: JetStreamPlan,
    pool: PoolPlan,
    bucket: pulumi.Input[str],
    secret_name: str,
    opts: pulumi.ResourceOptions,
) -> k8s.batch.v1.Job:
    """Declare the Job; Pulumi waits for it to complete (up to `converter.timeoutMinutes`)."""
    converter = plan.spec.converter
    labels = converter_labels(plan)
    node_selector, tolerations = _placement(plan, pool)
    storage_class, disk_type = scratch_storage(plan, pool)
    if disk_type is not None:
        scratch_class = _scratch_class(name, storage_class, disk_type, opts)
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[scratch_class]))
    container = k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=converter.image,
        args=pulumi.Output.from_input(bucket).apply(plan.converter_args),
        env=hf_env(),  # HOME (and so the client's HF_HOME) is on the scratch disk
        resources=k8s.core.v1.ResourceRequirementsArgs(
            requests={"cpu": converter.cpu, "memory": converter.memory, "ephemeral-storage": "10Gi"},
            limits={"cpu": converter.cpu, "memory": converter.memory},  # a CPU job: bounded as it asks
        ),
        volume_mounts=[
            hf_token_mount(),
            *(
                k8s.core.v1.VolumeMountArgs(name="scratch", mount_path=path, sub_path=sub)
                for sub, path in SCRATCH_DIRS.items()
            ),
        ],
    )
    return k8s.batch.v1.Job(
        f"{name}-converter",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=plan.converter_job_name, namespace=plan.spec.namespace, labels=labels),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=converter.backoff_limit,
            active_deadline_seconds=converter.timeout_minutes * 60,
            ttl_seconds_after_finished=converter.ttl_hours * 3600 if converter.ttl_hours else None,
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels),
                # No Kubernetes API token (Workload Identity needs none); /tmp is the scratch disk's.
                spec=harden(
                    k8s.core.v1.PodSpecArgs(
                        service_account_name=plan.spec.ksa_name,
                        restart_policy="Never",
                        node_selector=node_selector,
                        tolerations=tolerations,
                        containers=[container],
                        volumes=[hf_token_volume(secret_name), _scratch_volume(plan, storage_class)],
                    ),
                    JETSTREAM_CONVERTER,
                ),
            ),
        ),
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                # Pulumi waits for Complete until just after the Job's own deadline (k8s/probes.py).
                custom_timeouts=job_budget(converter.timeout_minutes * 60).custom_timeouts(),
                delete_before_replace=True,
            ),
        ),
    )
