"""The typed inputs and outputs of `RayTrainStack`, as Pulumi's schema inference reads them.

`raytrain.spec.RayTrainSpec` validates the same fields (a test keeps them in step); `cluster` takes
the TpuCluster inputs without `slices`, which are derived from the model and `slices`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import NotRequired, TypedDict

from tpu_stacks.cluster.args import TpuClusterArgs


class ImageSourceArgs(TypedDict):
    uri: str
    """The repository Cloud Build reads this project from (e.g. https://github.com/you/project)."""
    ref: NotRequired[str]
    """Default: refs/heads/main."""
    repo_type: NotRequired[str]
    """GITHUB (default), CLOUD_SOURCE_REPOSITORIES, BITBUCKET_SERVER or GITLAB. Default: GITHUB."""
    dir: NotRequired[str]
    """The image's folder inside that repository. Default: components/tpu_stacks/raytrain/trainer_image."""


class ImageArgs(TypedDict):
    build: NotRequired[str]
    """submit: you run the printed `gcloud builds submit` once; trigger: a Cloud Build trigger is declared (run it
    with the printed command); prebuilt: use `reference` as it is. Default: submit."""
    repository: NotRequired[str]
    """Artifact Registry repository id (created unless prebuilt). Default: ray-maxtext."""
    name: NotRequired[str]
    """Default: ray-maxtext."""
    tag: NotRequired[str]
    """Image tag (default: the Ray version and MaxText revision, plus the build inputs' hash)."""
    reference: NotRequired[str]
    """prebuilt only: a pinned image reference (a version tag or a digest)."""
    source: NotRequired[ImageSourceArgs]
    """The Git repository a Cloud Build trigger builds from (build trigger only)."""


class HeadArgs(TypedDict):
    cpu: NotRequired[str]
    """Default: 8."""
    memory: NotRequired[str]
    """Default: 16Gi."""


class WorkerArgs(TypedDict):
    cpu: NotRequired[str]
    """Default: 8."""
    memory: NotRequired[str]
    """Host memory per TPU VM (default: derived from the checkpoint shard each host stages)."""


class RayTrainStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """MaxText model_name (e.g. llama3-8b); it must be in the model catalogue to be sized."""
    tpu_generation: NotRequired[str]
    """Default: v6e."""
    topology: NotRequired[str]
    """One slice's shape; sized from the model when omitted (and always checked to hold it)."""
    slices: NotRequired[int]
    """Identical slices, one node pool each; MaxText spreads data parallelism over them (DCN). Default: 1."""
    machine_type: NotRequired[str]
    threads_per_core: NotRequired[int]
    """Default: 1."""
    spot: NotRequired[bool]
    """Default: false."""
    reservation: NotRequired[str]
    per_device_batch_size: NotRequired[float]
    """Default: 1."""
    max_target_length: NotRequired[int]
    """Default: 4096."""
    steps: NotRequired[int]
    """Default: 100."""
    dataset_type: NotRequired[str]
    """Default: synthetic."""
    parallelism: NotRequired[dict[str, int]]
    """ICI mesh axes, e.g. {fsdp: 4, tensor: 4}; their product is the slice's chips (one may be -1)."""
    run_name: NotRequired[str]
    """MaxText run name, the RayJob's name and the checkpoint folder; a rerun resumes from it."""
    output_directory: NotRequired[str]
    """Default: /data/."""
    checkpoint_period: NotRequired[int]
    extra_args: NotRequired[list[str]]
    """More MaxText key=value settings."""
    max_failures: NotRequired[int]
    """Ray Train restarts of the worker group after a failure (-1: without limit). Default: 1."""
    deadline_minutes: NotRequired[int]
    """Default: 240."""
    submit_job: NotRequired[bool]
    """Submit the training run as a RayJob; false keeps only the interactive path. Default: true."""
    image: NotRequired[ImageArgs]
    """Default: build submit, repository ray-maxtext, name ray-maxtext."""
    head: NotRequired[HeadArgs]
    """Default: cpu 8, memory 16Gi."""
    worker: NotRequired[WorkerArgs]
    """Default: cpu 8."""
    namespace: NotRequired[str]
    """Default: raytrain."""
    ksa_name: NotRequired[str]
    """Default: raytrain."""
    ray_cluster_name: NotRequired[str]
    """Default: maxtext-tpu-cluster."""
    force_destroy_bucket: NotRequired[bool]
    """Default: false."""


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
