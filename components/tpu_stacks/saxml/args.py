"""The typed inputs and outputs of `SaxmlStack`, as Pulumi's schema inference reads them.

`saxml.spec.SaxmlSpec` validates the same fields (a test keeps them in step); `cluster` takes the
TpuCluster inputs without `slices`, which are derived from the model and `replicas`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import NotRequired, TypedDict

from tpu_stacks.cluster.args import TpuClusterArgs


class PublishedModelArgs(TypedDict):
    model: NotRequired[str]
    """Saxml model name, /sax/test/<name> (default /sax/test/spmd)."""
    model_path: NotRequired[str]
    """Saxml registry path (default: the model the slices are sized for)."""
    checkpoint: NotRequired[str]
    """None (random weights of test models) or a gs:// checkpoint."""
    replicas: NotRequired[int]
    """Model servers that load it (default: all)."""


class SaxmlImagesArgs(TypedDict):
    admin_server: NotRequired[str]
    model_server: NotRequired[str]
    http_server: NotRequired[str]
    publisher: NotRequired[str]


class ContainerResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]


class SaxmlResourcesArgs(TypedDict):
    admin_server: NotRequired[ContainerResourcesArgs]
    model_server: NotRequired[ContainerResourcesArgs]
    http_server: NotRequired[ContainerResourcesArgs]


class JobSetArgs(TypedDict):
    install: NotRequired[bool]
    """Install the JobSet controller (default true)."""
    version: NotRequired[str]
    """kubernetes-sigs/jobset release (default v0.12.0)."""


class SaxmlStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new cluster or `existing` (slices are derived)."""
    model: NotRequired[str]
    """Saxml registry path the slices are sized for (default LmCloudSpmd175B32Test)."""
    tpu_generation: NotRequired[str]
    topology: NotRequired[str]
    replicas: NotRequired[int]
    """Model servers, one slice each (default 2)."""
    input_seq_len: NotRequired[int]
    max_decode_steps: NotRequired[int]
    batch_size: NotRequired[int]
    pool_name: NotRequired[str]
    namespace: NotRequired[str]
    ksa_name: NotRequired[str]
    gsa_name: NotRequired[str]
    force_destroy_bucket: NotRequired[bool]
    checkpoint_buckets: NotRequired[list[str]]
    node_service_account: NotRequired[str]
    images: NotRequired[SaxmlImagesArgs]
    resources: NotRequired[SaxmlResourcesArgs]
    host_network: NotRequired[bool]
    restart_limit: NotRequired[int]
    http_replicas: NotRequired[int]
    exposure: NotRequired[str]
    """internal (default: GKE internal load balancer), public (needs source_ranges) or cluster."""
    source_ranges: NotRequired[list[str]]
    models: NotRequired[list[PublishedModelArgs]]
    """Models to publish (default: the tutorial's /publish body)."""
    publish_wait_minutes: NotRequired[int]
    jobset: NotRequired[JobSetArgs]
    spot: NotRequired[bool]
    reservation: NotRequired[str]


class SaxmlSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    hosts: int
    chips_per_vm: int
    slices: int


class SaxmlCurl(TypedDict):
    """The tutorial's requests, ready to paste."""

    publish: str
    listcell: str
    generate: str
    unpublish: str
