"""What a Ray Train + MaxText run asks for: the validated config of `RayTrainStack`.

The user names a MaxText model, a TPU generation (and optionally a topology and a slice count) and
MaxText's training settings; `raytrain.plan.plan_raytrain` derives everything else. Upstream facts
(the tutorial's values, KubeRay's and MaxText's names) are from [D-GKE-RAY] and
[K-RAY] unless a comment names another source. Pure: no provider SDK.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from tpu_stacks.catalog.engines.ray import RAY
from tpu_stacks.catalog.tpu import generation_names, names_text
from tpu_stacks.cluster.spec import workload_cluster
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.inputs.field_rules import ComponentInput, EngineArgs, ImageName, K8sName, Quantity, SpecModel
from tpu_stacks.raytrain.engine import MAXTEXT_REVISION as MAXTEXT_REVISION  # the pin: the engine's record

# The tutorial's Ray: rayproject/ray:2.49.1-py312 and `pip install "ray[default]==2.49.1"` ([D-GKE-RAY]).
RAY_VERSION = RAY.version  # one place: the engine catalogue (catalog/engines/)
MAXTEXT_REPOSITORY = "https://github.com/AI-Hypercomputer/maxtext.git"
TRAINER_IMAGE_DIR = "components/tpu_stacks/raytrain/trainer_image"
"""The training image's folder (Dockerfile, cloudbuild.yaml, the trainer) from the repository root:
what `gcloud builds submit` and a Cloud Build trigger build. Installed: `raytrain.sources.trainer_image_dir()`."""
# Paths inside the image (its Dockerfile): the trainer and MaxText's base config.
TRAINER_PATH = "/app/raytrain_trainer.py"
MAXTEXT_CONFIG = "/app/maxtext/src/MaxText/configs/base.yml"
DATA_MOUNT = "/data"
RAY_USER_ID = RAY.image_user().uid
"""The `ray` user of rayproject images (catalog/engines/ray.py, RAY.user)."""
# MaxText's ici_<axis>_parallelism settings (src/MaxText/configs/base.yml).
ICI_AXES = (
    "data",
    "fsdp",
    "fsdp_transpose",
    "sequence",
    "context",
    "context_autoregressive",
    "tensor",
    "tensor_transpose",
    "tensor_sequence",
    "autoregressive",
    "pipeline",
    "expert",
)
# MaxText settings the stack writes itself, and the raytrain key that sets each; extraArgs may not repeat them.
MANAGED_KEYS = {
    "base_output_directory": "outputDirectory",
    "dataset_type": "datasetType",
    "per_device_batch_size": "perDeviceBatchSize",
    "max_target_length": "maxTargetLength",
    "model_name": "model",
    "steps": "steps",
    "run_name": "runName",
    "checkpoint_period": "checkpointPeriod",
    "dcn_data_parallelism": "slices",
}


def default_tag() -> str:
    """The image tag when none is given: it changes whenever a pinned input does."""
    return f"ray{RAY_VERSION}-maxtext-{MAXTEXT_REVISION[:10]}"


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    # SpecModel (field_rules.py): unknown keys refused, booleans/infinite numbers/secrets/invisible characters too.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SourceSpec(_Spec):
    """Where a Cloud Build trigger finds this project (a connected GitHub repository, ...)."""

    ARGS: ClassVar[str] = "ImageSourceArgs"

    uri: str
    """The repository Cloud Build reads this project from (e.g. https://github.com/you/project)."""
    ref: str = "refs/heads/main"
    """Git ref the trigger builds: a branch (`refs/heads/...`) or a tag (`refs/tags/...`)."""
    repo_type: Literal["GITHUB", "CLOUD_SOURCE_REPOSITORIES", "BITBUCKET_SERVER", "GITLAB"] = Field(
        default="GITHUB", alias="repoType"
    )
    """GITHUB, CLOUD_SOURCE_REPOSITORIES, BITBUCKET_SERVER or GITLAB."""
    dir: str = TRAINER_IMAGE_DIR
    """The image's folder inside that repository."""


class ImageSpec(_Spec):
    """The training image: built into this stack's Artifact Registry repository, or given."""

    build: Literal["submit", "trigger", "prebuilt"] = "submit"
    """submit: you run the printed `gcloud builds submit` once; trigger: a Cloud Build trigger is
    declared (run it with the printed command); prebuilt: use `reference` as it is."""
    repository: str | None = None
    """Artifact Registry repository id (created unless prebuilt); default `ray-maxtext-<cluster name>`,
    one per stack, so two stacks in a project never share one."""
    name: ImageName = "ray-maxtext"
    """Image name inside the repository (not used with `prebuilt`)."""
    tag: str | None = None
    """Image tag (default: the Ray version and MaxText revision, plus the build inputs' hash)."""
    reference: str | None = None
    """prebuilt only: a pinned image reference (a version tag or a digest)."""
    source: SourceSpec | None = None
    """The Git repository a Cloud Build trigger builds from (build trigger only)."""


class HeadSpec(_Spec):
    cpu: Quantity = "8"
    """CPU request of the Ray head pod (no TPU; it runs the trainer's driver)."""
    memory: Quantity = "16Gi"
    """Memory request and limit of the Ray head pod."""


class WorkerSpec(_Spec):
    cpu: Quantity = "8"
    """CPU request of each Ray worker pod (one per TPU VM, taking all its chips)."""
    memory: Quantity | None = None
    """Host memory per TPU VM (default: derived from the checkpoint shard each host stages)."""


class RayTrainSpec(_Spec):
    ARGS: ClassVar[str] = "RayTrainStackArgs"
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        workload_cluster("Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."),
    )

    model: str
    """MaxText model_name (e.g. llama3-8b); it must be in the model catalogue to be sized."""
    tpu_generation: str = Field(
        default="v6e",
        alias="tpuGeneration",
        description=f"TPU generation of the slices: {names_text(RAY.served_generations or ())} (Ray names no "
        f"{names_text([g for g in generation_names() if not RAY.serves_generation(g)])} accelerator type).",
    )
    topology: str | None = None
    """One slice's shape; sized from the model when omitted (and always checked to hold it)."""
    slices: int = Field(default=1, ge=1, le=64)
    """Identical slices, one node pool each; MaxText spreads data parallelism over them (DCN)."""
    machine_type: str | None = Field(default=None, alias="machineType")
    """TPU VM machine type; needs `topology` (default: derived from the catalogue)."""
    threads_per_core: int | None = Field(default=1, ge=1, le=2, alias="threadsPerCore")
    """SMT threads per core of the TPU VMs (1, the tutorial's, turns simultaneous multithreading off)."""
    spot: bool = False
    """Spot TPU VMs for the slices: cheaper, preemptible at any time."""
    reservation: str | None = None
    """Name of a specific reservation the slices consume."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    per_device_batch_size: float = Field(default=1, gt=0, alias="perDeviceBatchSize")
    """MaxText `per_device_batch_size` (may be fractional); the slice is sized for its activations."""
    max_target_length: int = Field(default=4096, gt=0, alias="maxTargetLength")
    """MaxText `max_target_length`, the sequence length; the slice is sized for its activations."""
    steps: int = Field(default=100, gt=0)
    """MaxText `steps`: training steps of the run."""
    # MaxText's input pipelines (docs/guides/data_input_pipeline and configs/base.yml `dataset_type`): synthetic,
    # tfds, hf, grain, and c4_mlperf for the MLPerf C4 pipeline; any other value fails only inside the trainer.
    dataset_type: Literal["synthetic", "tfds", "hf", "grain", "c4_mlperf"] = Field(
        default="synthetic", alias="datasetType"
    )
    """MaxText `dataset_type`; `synthetic` needs no data, other types take their settings in `extraArgs`."""
    parallelism: dict[str, int] | None = None
    """ICI mesh axes, e.g. {fsdp: 4, tensor: 4}; their product is the slice's chips (one may be -1)."""
    run_name: str | None = Field(default=None, alias="runName")
    """MaxText run name, the RayJob's name and the checkpoint folder; a rerun resumes from it."""
    output_directory: str = Field(default="/data/", alias="outputDirectory")
    """MaxText `base_output_directory`: under `/data` (the checkpoint bucket's mount) or a `gs://` path."""
    checkpoint_period: int | None = Field(default=None, gt=0, alias="checkpointPeriod")
    """MaxText `checkpoint_period`, in steps (default: MaxText's own)."""
    extra_args: EngineArgs = Field(default_factory=list, alias="extraArgs")
    """More MaxText key=value settings."""
    max_failures: int = Field(default=1, ge=-1, le=100, alias="maxFailures")
    """Ray Train restarts of the worker group after a failure (-1: without limit)."""
    deadline_minutes: int = Field(default=240, gt=0, alias="deadlineMinutes")
    """The RayJob's `activeDeadlineSeconds`, in minutes: how long the run may go before KubeRay terminates it."""
    submit_job: bool = Field(default=True, alias="submitJob")
    """Submit the training run as a RayJob; false keeps only the interactive path."""
    image: ImageSpec = Field(default_factory=ImageSpec)
    """The training image: built by Cloud Build into this stack's Artifact Registry repository, or prebuilt."""
    head: HeadSpec = Field(default_factory=HeadSpec)
    """CPU and memory of the Ray head pod."""
    worker: WorkerSpec = Field(default_factory=WorkerSpec)
    """CPU and host memory of each Ray worker pod (one per TPU VM)."""
    namespace: K8sName = "raytrain"
    """Kubernetes namespace of the RayCluster, the RayJob and the ServiceAccount (created unless `default`)."""
    ksa_name: K8sName = Field(default="raytrain", alias="ksaName")
    """Kubernetes ServiceAccount the Ray pods run as; Workload Identity gives it the checkpoint bucket."""
    ray_cluster_name: str = Field(default="maxtext-tpu-cluster", alias="rayClusterName")
    """Name of the RayCluster (its head Service is `<name>-head-svc`); at most 53 characters."""
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    """Let `pulumi destroy` delete the checkpoint bucket and its checkpoints; otherwise destroy keeps it (retained)."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md)."""
