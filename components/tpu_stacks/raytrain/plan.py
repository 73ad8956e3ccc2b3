"""Every decision of a `RayTrainStack`, made before the first resource exists.

From the spec and the user's cluster settings: the slice (sized from the model or checked to hold
it) and the cluster that holds it (one pool per slice, the Ray operator and GCS FUSE add-ons, the
tutorial's system pool), the Ray accelerator type, the MaxText mesh (checked to cover the slice's
chips exactly), the run name, the host memory and GCS FUSE budgets, the training image's pins, and
the exact command the RayJob and a person at `ray job submit` run. Anything wrong is one
`UserError` naming the key the user wrote, the value and the fix. Pure: no provider SDK.
"""

from __future__ import annotations

import math
import re
import shlex

from tpu_stacks import names
from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.catalog.upstream import number
from tpu_stacks.cluster.capacity import is_fallback
from tpu_stacks.cluster.plan import (
    ClusterPlan,
    WorkloadPlan,
    plan_workload_cluster,
    require_addons,
    require_ray_operator,
)
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec, SystemPoolSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.images import MOVING_TAGS, image_problem
from tpu_stacks.names import DNS1035_LABEL, IMAGE_TAG, REPOSITORY_ID, check_gcs_path
from tpu_stacks.raytrain.spec import (
    DATA_MOUNT,
    ICI_AXES,
    MANAGED_KEYS,
    MAXTEXT_CONFIG,
    TRAINER_IMAGE_DIR,
    TRAINER_PATH,
    ImageSpec,
    RayTrainSpec,
    default_tag,
)
from tpu_stacks.sizing import (
    OPTIMIZER_MOMENTS,
    TRAINING_BYTES,
    Candidate,
    TrainingRequest,
    choose_slice,
    file_cache_gib,
)

# KubeRay: a RayCluster name has at most 53 characters, a RayJob's 6 fewer (utils/constant.go).
MAX_RAYCLUSTER_NAME = number("kuberay.name.raycluster-max")
MAX_RAYJOB_NAME = MAX_RAYCLUSTER_NAME - number("kuberay.name.rayjob-margin")
REPOSITORY = "ray-maxtext"
"""The default Artifact Registry repository id's prefix; the stack's cluster name follows it."""
RAY_STORAGE = f"{DATA_MOUNT}/ray-train"
"""Ray Train's RunConfig storage_path: shared by every node through the bucket (Ray requires shared storage)."""
GiB = 1024**3
SYSTEM_POOL = SystemPoolSpec(machine_type="n1-standard-16", nodes=1)
"""The tutorial's --machine-type, one node: it holds the 8-CPU head. Only when cluster.systemPool is not given."""
SLICE_KEYS = {
    "generation": "raytrain.tpuGeneration",
    "topology": "raytrain.topology",
    "machine_type": "raytrain.machineType",
    "count": "raytrain.slices",
    "threads_per_core": "raytrain.threadsPerCore",
    "threadsPerCore": "raytrain.threadsPerCore",
    "spot": "raytrain.spot",
    "reservation": "raytrain.reservation",
    "capacity": "raytrain.capacity",
}
"""The derived slice's fields, as the user spells them in the raytrain section."""


class RayTrainPlan(WorkloadPlan):
    """Everything decided for one training stack: one node pool per slice of the run, the Ray operator
    and GCS FUSE."""

    spec: RayTrainSpec
    request: TrainingRequest
    accelerator_type: str
    parallelism: dict[str, int]
    run_name: str

    @property
    def hosts(self) -> int:
        """TPU VMs (Ray workers) of one slice: the worker group's numOfHosts."""
        return self.shape.nodes

    @property
    def workers(self) -> int:
        """Ray Train workers across all slices (one per TPU VM)."""
        return self.hosts * self.spec.slices

    @property
    def devices(self) -> int:
        """JAX devices of one slice, which the ICI mesh must cover."""
        return self.shape.jax_devices

    @property
    def checkpoint_shard_bytes(self) -> int:
        """What one host writes (and reads back on resume): its share of weights and optimizer state."""
        request = self.request
        per_param = (
            TRAINING_BYTES[request.weight_dtype]
            + TRAINING_BYTES[request.moment_dtype] * OPTIMIZER_MOMENTS[request.optimizer]
        )
        return self.model.params * per_param // self.hosts

    @property
    def fuse_cache_gib(self) -> int:
        """The sidecar's memory-backed file cache: one host's checkpoint shard, read on resume."""
        return file_cache_gib(self.checkpoint_shard_bytes)

    @property
    def worker_memory(self) -> str:
        """Host memory of a worker: twice its shard (async checkpoint copy + restore buffers) plus
        16 GiB for Ray, Python and MaxText, at least 32 GiB, in steps of 8 GiB. Not the tutorial's 200G."""
        if self.spec.worker.memory:
            return self.spec.worker.memory
        need = 2 * self.checkpoint_shard_bytes / GiB + 16
        return f"{max(32, math.ceil(need / 8) * 8)}Gi"

    def maxtext_args(self) -> list[str]:
        """MaxText's config file and key=value settings, in the tutorial's order."""
        spec = self.spec
        args = [
            MAXTEXT_CONFIG,
            f"base_output_directory={spec.output_directory}",
            f"dataset_type={spec.dataset_type}",
            f"per_device_batch_size={spec.per_device_batch_size:g}",
            f"max_target_length={spec.max_target_length}",
            f"model_name={spec.model}",
            f"steps={spec.steps}",
            *(f"ici_{axis}_parallelism={size}" for axis, size in self.parallelism.items()),
            f"run_name={self.run_name}",
        ]
        if spec.checkpoint_period:
            args.append(f"checkpoint_period={spec.checkpoint_period}")
        if spec.slices > 1:
            args.append(f"dcn_data_parallelism={spec.slices}")  # data parallel across slices over DCN
        return [*args, *spec.extra_args]

    def trainer_args(self) -> list[str]:
        """The trainer's flags: the slice layout its ScalingConfig is built from."""
        return [
            f"--accelerator-type={self.accelerator_type}",
            f"--topology={self.shape.topology}",
            f"--hosts-per-slice={self.hosts}",
            f"--chips-per-host={self.shape.chips_per_vm}",
            f"--slices={self.spec.slices}",
            f"--max-failures={self.spec.max_failures}",
            f"--storage-path={RAY_STORAGE}",
        ]

    def entrypoint(self) -> str:
        """What the RayJob (or `ray job submit`) runs on the head."""
        return shlex.join(["python", TRAINER_PATH, *self.trainer_args(), *self.maxtext_args()])


def _slice(spec: RayTrainSpec, request: TrainingRequest) -> Candidate:
    gen = generation(spec.tpu_generation, key="raytrain.tpuGeneration")
    if spec.topology is None and spec.machine_type:
        raise UserError(
            "raytrain.machineType",
            spec.machine_type,
            "needs a topology",
            "set raytrain.topology too, or remove machineType",
        )
    return choose_slice(request, gen, spec.topology, "raytrain", spec.machine_type)


def _parallelism(spec: RayTrainSpec, shape: SliceShape, devices: int) -> dict[str, int]:
    """The ICI mesh: given axes (or FSDP over every device), checked to multiply to the slice."""
    axes: dict[str, int] = {}
    for given, size in (spec.parallelism or {"fsdp": devices}).items():
        axis = given.removeprefix("ici_").removesuffix("_parallelism")
        if axis not in ICI_AXES:
            raise UserError(
                f"raytrain.parallelism.{given}", size, "is not a MaxText ICI axis", f"valid: {', '.join(ICI_AXES)}"
            )
        if size == 0 or size < -1:
            raise UserError(
                f"raytrain.parallelism.{given}", size, "is not a mesh size", "use a positive size, or -1 for the rest"
            )
        axes[axis] = size
    shown = " x ".join(f"{axis}={size}" for axis, size in axes.items())
    auto = [axis for axis, size in axes.items() if size == -1]
    fixed = math.prod(size for size in axes.values() if size != -1)
    unit = "chip" if devices == shape.chips else "JAX device"  # tpu7x: two devices per chip
    where = f"the {devices} {unit}{'' if devices == 1 else 's'} of one {shape.generation} {shape.topology} slice"
    if len(auto) > 1:
        raise UserError(
            "raytrain.parallelism", shown, "has more than one axis set to -1", "give every axis but one a size"
        )
    if (auto and devices % fixed) or (not auto and fixed != devices):
        raise UserError(
            "raytrain.parallelism",
            shown,
            f"multiplies to {fixed}, not {where}",
            f"make the sizes multiply to {devices} (e.g. fsdp={devices // 4 or 1}, tensor={min(4, devices)}), "
            "or set one axis to -1",
        )
    return axes


def _check_extra_args(spec: RayTrainSpec) -> None:
    for index, arg in enumerate(spec.extra_args):
        key, sep, _ = arg.partition("=")
        if not sep or not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            raise UserError(
                f"raytrain.extraArgs[{index}]",
                arg,
                "is not a MaxText key=value setting",
                "write it like remat_policy=full",
            )
        if key in MANAGED_KEYS:
            raise UserError(
                f"raytrain.extraArgs[{index}]",
                arg,
                "repeats a setting the stack writes",
                f"set raytrain.{MANAGED_KEYS[key]} instead",
            )
        if key.startswith("ici_") and key.endswith("_parallelism"):
            raise UserError(
                f"raytrain.extraArgs[{index}]",
                arg,
                "sets the ICI mesh outside raytrain.parallelism",
                "move it to raytrain.parallelism so the mesh is checked against the slice",
            )


def _check_names(spec: RayTrainSpec) -> None:
    if not DNS1035_LABEL.fullmatch(spec.ray_cluster_name) or len(spec.ray_cluster_name) > MAX_RAYCLUSTER_NAME:
        raise UserError(
            "raytrain.rayClusterName",
            spec.ray_cluster_name,
            "is not a valid RayCluster name",
            f"use lowercase letters, digits and '-', starting with a letter, at most {MAX_RAYCLUSTER_NAME} characters",
        )
    run_name = spec.run_name
    if run_name is not None and (not DNS1035_LABEL.fullmatch(run_name) or len(run_name) > MAX_RAYJOB_NAME):
        raise UserError(
            "raytrain.runName",
            spec.run_name,
            "is not a valid RayJob name",
            f"use lowercase letters, digits and '-', starting with a letter, at most {MAX_RAYJOB_NAME} "
            "characters (it also names the checkpoint folder)",
        )


def _run_name(spec: RayTrainSpec, shape: SliceShape) -> str:
    """The given run name, or model-length-topology[-Nslices] as a DNS-1035 label."""
    if spec.run_name is not None:
        return spec.run_name
    derived = re.sub(r"[^a-z0-9]+", "-", f"{spec.model}-{spec.max_target_length}-{shape.topology}".lower())
    derived += f"-{spec.slices}slices" if spec.slices > 1 else ""
    derived = derived if derived[:1].isalpha() else f"run-{derived}"
    return derived[:MAX_RAYJOB_NAME].strip("-")


def _check_tag(key: str, value: str, tag: str) -> None:
    if not IMAGE_TAG.fullmatch(tag) or image_problem(f"image:{tag}", (*MOVING_TAGS, "stable")):
        raise UserError(key, value, "is not pinned", f"use a version tag or a digest, e.g. {default_tag()}")


def check_image(image: ImageSpec) -> None:
    """Refuse a moving or missing image before anything is declared."""
    if image.build == "prebuilt":
        if not image.reference:
            raise UserError(
                "raytrain.image.reference",
                MISSING,
                "is required with build prebuilt",
                f"give the pinned image reference (built from {TRAINER_IMAGE_DIR})",
            )
        if "@sha256:" not in image.reference:
            name, _, tag = image.reference.rpartition(":")
            if not name or "/" in tag:
                raise UserError(
                    "raytrain.image.reference",
                    image.reference,
                    "has no tag, so it pulls :latest",
                    f"add a version tag or a digest, e.g. :{default_tag()}",
                )
            _check_tag("raytrain.image.reference", image.reference, tag)
        return
    if image.reference:
        raise UserError(
            "raytrain.image.reference",
            image.reference,
            f"is only used with build prebuilt, not {image.build}",
            "remove it, or set raytrain.image.build to prebuilt",
        )
    if image.repository is not None and not REPOSITORY_ID.matches(image.repository):
        raise UserError(
            "raytrain.image.repository",
            image.repository,
            "is not an Artifact Registry repository id",
            "use lowercase letters, digits and '-'",
        )
    if image.tag is not None:
        _check_tag("raytrain.image.tag", image.tag, image.tag)
    if image.build == "trigger" and image.source is None:
        raise UserError(
            "raytrain.image.source",
            MISSING,
            "is required with build trigger",
            "name the repository Cloud Build reads, e.g. {uri: https://github.com/you/your-project}",
        )


def pool_name(shape: SliceShape) -> str:
    """`v6e-16` as the tutorial names it: generation and chips (suffixed -1, -2 per slice)."""
    return f"{shape.generation}-{shape.chips}"


def _plan_cluster(spec: RayTrainSpec, cluster: ClusterSpec, shape: SliceShape) -> ClusterPlan:
    """The user's cluster with one pool per slice of the run, the add-ons its pods need, and the
    tutorial's system pool unless the user chose one."""
    pool = SliceSpec(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        count=spec.slices,
        name=pool_name(shape),
        # A ComputeClass has no threads-per-core setting: the default (SMT off) is not applied to a fallback's
        # auto-created nodes, and one the user wrote is refused (docs/capacity.md).
        threads_per_core=None
        if is_fallback(spec.capacity) and "threads_per_core" not in spec.model_fields_set
        else spec.threads_per_core,
        spot=spec.spot,
        reservation=spec.reservation or None,
        capacity=spec.capacity,
    )
    cluster = require_addons(require_ray_operator(cluster, "RayTrainStack"), "RayTrainStack", "gcs_fuse")
    if "system_pool" not in cluster.model_fields_set:
        cluster = cluster.model_copy(update={"system_pool": SYSTEM_POOL})
    return plan_workload_cluster(cluster, pool, SLICE_KEYS, "raytrain.model")


def plan_raytrain(spec: RayTrainSpec, cluster: ClusterSpec) -> RayTrainPlan:
    """Size and check everything, the cluster included; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="raytrain.model")
    _check_names(spec)
    if not (
        spec.output_directory.startswith(DATA_MOUNT + "/")
        or spec.output_directory == DATA_MOUNT
        or spec.output_directory.startswith("gs://")
    ):
        raise UserError(
            "raytrain.outputDirectory",
            spec.output_directory,
            "is not on the checkpoint bucket",
            f"use {DATA_MOUNT}/ (the bucket's mount) or a gs:// path: a pod's local disk is lost on restart",
        )
    if spec.output_directory.startswith("gs://"):
        check_gcs_path(spec.output_directory, "raytrain.outputDirectory")
    _check_extra_args(spec)
    check_image(spec.image)
    request = TrainingRequest(model=model, per_device_batch=spec.per_device_batch_size, seq_len=spec.max_target_length)
    verdict = _slice(spec, request)
    shape = verdict.shape
    accelerator_type = RAY.platform(shape.generation)
    if accelerator_type is None:
        supported = ", ".join(RAY.served_generations or ())
        raise UserError(
            "raytrain.tpuGeneration",
            spec.tpu_generation,
            "has no Ray accelerator type in Ray's TPU support",
            f"use one of {supported}",
        )
    devices = shape.jax_devices
    parallelism = _parallelism(spec, shape, devices)
    cluster_plan = _plan_cluster(spec, cluster, shape)
    return RayTrainPlan(
        spec=_with_repository(spec, cluster_plan),
        model=model,
        request=request,
        verdict=verdict,
        accelerator_type=accelerator_type,
        parallelism=parallelism,
        run_name=_run_name(spec, shape),
        cluster=cluster_plan,
    )


def _with_repository(spec: RayTrainSpec, cluster: ClusterPlan) -> RayTrainSpec:
    """The spec with the image's repository id decided: the user's as given, else `ray-maxtext-<cluster>`.

    Artifact Registry ids are unique per project and region: with one fixed default, `raytrain` and
    `raytrain-multislice` in one project both created `ray-maxtext` and the second `up` failed with
    AlreadyExists. The scope is the cluster's name, what the plan already has that differs between
    stacks (the pure plan cannot ask Pulumi for the stack's name): GKE keeps it unique per project and
    location and each workload stack creates its own cluster. A GKE name (at most 40 characters, a
    letter first) after the prefix is always a valid id. Two stacks on one existing cluster in one
    region share the default: give each its own `image.repository`."""
    image = spec.image
    if image.build == "prebuilt" or image.repository is not None:
        return spec
    repository = REPOSITORY_ID.check("raytrain.image.repository", f"{REPOSITORY}-{cluster.spec.name}")
    return spec.model_copy(update={"image": image.model_copy(update={"repository": repository})})


def builder_account_id(repository: str) -> str:
    """The Cloud Build builder's service account id of the training image's repository (names.builder_account_id)."""
    return names.builder_account_id(repository, "raytrain.image.repository")
