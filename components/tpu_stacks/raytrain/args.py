"""The typed inputs and outputs of `RayTrainStack`, as Pulumi's schema inference reads them.

`raytrain.spec.RayTrainSpec` validates the same fields (a test keeps them in step); `cluster` takes
the TpuCluster inputs without `slices`, which are derived from the model and `slices`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import Any, NotRequired, TypedDict

from tpu_stacks.cluster.args import TpuClusterArgs
from tpu_stacks.gcp.monitoring.args import MonitoringArgs


class ImageSourceArgs(TypedDict):
    uri: str
    """The repository Cloud Build reads this project from (e.g. https://github.com/you/project)."""
    ref: NotRequired[str]
    """Git ref the trigger builds: a branch (`refs/heads/...`) or a tag (`refs/tags/...`). Default: refs/heads/main."""
    repo_type: NotRequired[str]
    """GITHUB, CLOUD_SOURCE_REPOSITORIES, BITBUCKET_SERVER or GITLAB. Default: GITHUB."""
    dir: NotRequired[str]
    """The image's folder inside that repository. Default: components/tpu_stacks/raytrain/trainer_image."""


class ImageArgs(TypedDict):
    build: NotRequired[str]
    """submit: you run the printed `gcloud builds submit` once; trigger: a Cloud Build trigger is declared (run it
    with the printed command); prebuilt: use `reference` as it is. Default: submit."""
    repository: NotRequired[str]
    """Artifact Registry repository id (created unless prebuilt); default `ray-maxtext-<cluster name>`, one per
    stack, so two stacks in a project never share one."""
    name: NotRequired[str]
    """Image name inside the repository (not used with `prebuilt`). Default: ray-maxtext."""
    tag: NotRequired[str]
    """Image tag (default: the Ray version and MaxText revision, plus the build inputs' hash)."""
    reference: NotRequired[str]
    """prebuilt only: a pinned image reference (a version tag or a digest)."""
    source: NotRequired[ImageSourceArgs]
    """The Git repository a Cloud Build trigger builds from (build trigger only)."""


class HeadArgs(TypedDict):
    cpu: NotRequired[str]
    """CPU request of the Ray head pod (no TPU; it runs the trainer's driver). Default: 8."""
    memory: NotRequired[str]
    """Memory request and limit of the Ray head pod. Default: 16Gi."""


class WorkerArgs(TypedDict):
    cpu: NotRequired[str]
    """CPU request of each Ray worker pod (one per TPU VM, taking all its chips). Default: 8."""
    memory: NotRequired[str]
    """Host memory per TPU VM (default: derived from the checkpoint shard each host stages)."""


class RayTrainStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """MaxText model_name (e.g. llama3-8b); it must be in the model catalogue to be sized."""
    tpu_generation: NotRequired[str]
    """TPU generation of the slices: v4, v5e, v5p or v6e (Ray names no tpu7x accelerator type). Default: v6e."""
    topology: NotRequired[str]
    """One slice's shape; sized from the model when omitted (and always checked to hold it)."""
    slices: NotRequired[int]
    """Identical slices, one node pool each; MaxText spreads data parallelism over them (DCN). Default: 1."""
    machine_type: NotRequired[str]
    """TPU VM machine type; needs `topology` (default: derived from the catalogue)."""
    threads_per_core: NotRequired[int]
    """SMT threads per core of the TPU VMs (1, the tutorial's, turns simultaneous multithreading off). Default: 1."""
    spot: NotRequired[bool]
    """Spot TPU VMs for the slices: cheaper, preemptible at any time. Default: false."""
    reservation: NotRequired[str]
    """Name of a specific reservation the slices consume."""
    capacity: NotRequired[list[Any]]
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    per_device_batch_size: NotRequired[float]
    """MaxText `per_device_batch_size` (may be fractional); the slice is sized for its activations. Default: 1."""
    max_target_length: NotRequired[int]
    """MaxText `max_target_length`, the sequence length; the slice is sized for its activations. Default: 4096."""
    steps: NotRequired[int]
    """MaxText `steps`: training steps of the run. Default: 100."""
    dataset_type: NotRequired[str]
    """MaxText `dataset_type`; `synthetic` needs no data, other types take their settings in `extraArgs`. Default:
    synthetic."""
    parallelism: NotRequired[dict[str, int]]
    """ICI mesh axes, e.g. {fsdp: 4, tensor: 4}; their product is the slice's chips (one may be -1)."""
    run_name: NotRequired[str]
    """MaxText run name, the RayJob's name and the checkpoint folder; a rerun resumes from it."""
    output_directory: NotRequired[str]
    """MaxText `base_output_directory`: under `/data` (the checkpoint bucket's mount) or a `gs://` path. Default:
    /data/."""
    checkpoint_period: NotRequired[int]
    """MaxText `checkpoint_period`, in steps (default: MaxText's own)."""
    extra_args: NotRequired[list[str]]
    """More MaxText key=value settings."""
    max_failures: NotRequired[int]
    """Ray Train restarts of the worker group after a failure (-1: without limit). Default: 1."""
    deadline_minutes: NotRequired[int]
    """The RayJob's `activeDeadlineSeconds`, in minutes: how long the run may go before KubeRay terminates it.
    Default: 240."""
    submit_job: NotRequired[bool]
    """Submit the training run as a RayJob; false keeps only the interactive path. Default: true."""
    image: NotRequired[ImageArgs]
    """The training image: built by Cloud Build into this stack's Artifact Registry repository, or prebuilt. Default:
    build submit, name ray-maxtext."""
    head: NotRequired[HeadArgs]
    """CPU and memory of the Ray head pod. Default: cpu 8, memory 16Gi."""
    worker: NotRequired[WorkerArgs]
    """CPU and host memory of each Ray worker pod (one per TPU VM). Default: cpu 8."""
    namespace: NotRequired[str]
    """Kubernetes namespace of the RayCluster, the RayJob and the ServiceAccount (created unless `default`). Default:
    raytrain."""
    ksa_name: NotRequired[str]
    """Kubernetes ServiceAccount the Ray pods run as; Workload Identity gives it the checkpoint bucket. Default:
    raytrain."""
    ray_cluster_name: NotRequired[str]
    """Name of the RayCluster (its head Service is `<name>-head-svc`); at most 53 characters. Default:
    maxtext-tpu-cluster."""
    force_destroy_bucket: NotRequired[bool]
    """Let `pulumi destroy` delete the checkpoint bucket and its checkpoints; otherwise destroy keeps it (retained).
    Default: false."""
    monitoring: NotRequired[MonitoringArgs]
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md). Default: enabled true,
    queueMinutes 10, hbmFraction 0.95."""


class TrainingSlice(TypedDict):
    """The TPU capacity a run gets, as the RayCluster and the trainer's ScalingConfig use it."""

    generation: str
    topology: str
    machine_type: str
    chips: int
    hosts: int
    chips_per_host: int
    slices: int
    ray_accelerator_type: str
    parallelism: str
    memory_needed_gib: float
    memory_usable_gib: float
