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
    repo_type: NotRequired[str]
    """GITHUB (default), CLOUD_SOURCE_REPOSITORIES, BITBUCKET_SERVER or GITLAB."""
    dir: NotRequired[str]
    """The image folder in that repository (default components/tpu_stacks/raytrain/trainer_image)."""


class ImageArgs(TypedDict):
    build: NotRequired[str]
    """submit (default: print the gcloud builds submit command), trigger (declare a Cloud Build trigger) or prebuilt."""
    repository: NotRequired[str]
    """Artifact Registry repository id (created unless prebuilt)."""
    name: NotRequired[str]
    tag: NotRequired[str]
    reference: NotRequired[str]
    """prebuilt: a pinned image reference."""
    source: NotRequired[ImageSourceArgs]


class HeadArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]


class WorkerArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]
    """Host memory per TPU VM (derived from the checkpoint shard when omitted)."""


class RayTrainStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """MaxText model_name, e.g. llama3-8b."""
    tpu_generation: NotRequired[str]
    topology: NotRequired[str]
    """One slice's shape, e.g. 4x4 (sized from the model when omitted)."""
    slices: NotRequired[int]
    """Identical slices (one node pool each); MaxText runs data parallel across them."""
    machine_type: NotRequired[str]
    threads_per_core: NotRequired[int]
    spot: NotRequired[bool]
    reservation: NotRequired[str]
    per_device_batch_size: NotRequired[float]
    max_target_length: NotRequired[int]
    steps: NotRequired[int]
    dataset_type: NotRequired[str]
    parallelism: NotRequired[dict[str, int]]
    """MaxText ICI axes, e.g. {fsdp: 4, tensor: 4}; they must multiply to one slice's chips."""
    run_name: NotRequired[str]
    output_directory: NotRequired[str]
    checkpoint_period: NotRequired[int]
    extra_args: NotRequired[list[str]]
    max_failures: NotRequired[int]
    deadline_minutes: NotRequired[int]
    submit_job: NotRequired[bool]
    image: NotRequired[ImageArgs]
    head: NotRequired[HeadArgs]
    worker: NotRequired[WorkerArgs]
    namespace: NotRequired[str]
    ksa_name: NotRequired[str]
    ray_cluster_name: NotRequired[str]
    force_destroy_bucket: NotRequired[bool]


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
