"""The typed inputs and outputs of `SaxmlStack`, as Pulumi's schema inference reads them.

`saxml.spec.SaxmlSpec` validates the same fields (a test keeps them in step); `cluster` takes the
TpuCluster inputs without `slices`, which are derived from the model and `replicas`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import Any, NotRequired, TypedDict

from tpu_stacks.cluster.args import TpuClusterArgs
from tpu_stacks.gcp.monitoring.args import MonitoringArgs


class PublishedModelArgs(TypedDict):
    model: NotRequired[str]
    """The Saxml model name, `/sax/test/<name>`. Default: /sax/test/spmd."""
    model_path: NotRequired[str]
    """Saxml registry path; default: the model the slices are sized for."""
    checkpoint: NotRequired[str]
    """`None` (test models: random weights) or a gs:// checkpoint path. Default: None."""
    replicas: NotRequired[int]
    """Model servers (slices) that load it; default: all of them."""


class SaxmlImagesArgs(TypedDict):
    admin_server: NotRequired[str]
    """Saxml admin server image, pinned (moving tags and untagged images are refused). Default:
    us-docker.pkg.dev/cloud-tpu-images/inference/sax-admin-server:v1.1.0."""
    model_server: NotRequired[str]
    """Saxml model server image, run on every TPU VM of the slices (pinned). Default:
    us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0."""
    http_server: NotRequired[str]
    """Sax HTTP server image (pinned). Default: us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0."""
    publisher: NotRequired[str]
    """Python 3 image the publisher Job runs its stdlib-only reconcile script in (pinned). Default:
    docker.io/library/python:3.12.8-slim-bookworm."""


class ContainerResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]


class SaxmlResourcesArgs(TypedDict):
    admin_server: NotRequired[ContainerResourcesArgs]
    """CPU request and memory (request and limit) of the admin server. Default: cpu 500m, memory 1Gi."""
    model_server: NotRequired[ContainerResourcesArgs]
    """CPU request and host memory (request and limit) of each model server pod, one per TPU VM. Default: cpu 16,
    memory 128Gi."""
    http_server: NotRequired[ContainerResourcesArgs]
    """CPU request and memory (request and limit) of each HTTP server replica. Default: cpu 500m, memory 1Gi."""


class JobSetArgs(TypedDict):
    install: NotRequired[bool]
    """Install the JobSet controller (false when the cluster already runs one). Default: true."""
    version: NotRequired[str]
    """Release of kubernetes-sigs/jobset; v0.12.0 is the CRD the offline plan validates against. Default: v0.12.0."""


class SaxmlStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new cluster or `existing` (slices are derived)."""
    model: NotRequired[str]
    """The Saxml model the slices are sized for (a registry path the catalogue knows). Default:
    saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test."""
    tpu_generation: NotRequired[str]
    """TPU generation the slices are sized on; only v5e has a known model server `--platform_chip`. Default: v5e."""
    topology: NotRequired[str]
    """Override the sized slice (still checked to hold the model)."""
    replicas: NotRequired[int]
    """Model servers, one TPU slice (one node pool when multi-host) each. Default: 2."""
    input_seq_len: NotRequired[int]
    """Prompt tokens per request the slices are sized for (the model class's `INPUT_SEQ_LEN`; sizing only). Default:
    128."""
    max_decode_steps: NotRequired[int]
    """Generated tokens per request the slices are sized for (the model class's `MAX_DECODE_STEPS`; sizing only).
    Default: 128."""
    batch_size: NotRequired[int]
    """Requests whose KV cache the slices are sized to hold at once (the model class's `BATCH_SIZE`; sizing only).
    Default: 1."""
    pool_name: NotRequired[str]
    """Node pool names; `{n}` is the slice number (the tutorial's tpu1, tpu2). Default: tpu{n}."""
    namespace: NotRequired[str]
    """Kubernetes namespace of all Saxml objects (created unless `default`; one Saxml deployment per namespace).
    Default: saxml."""
    ksa_name: NotRequired[str]
    """Kubernetes ServiceAccount the Saxml pods run as, bound to `gsaName` through Workload Identity. Default:
    sax-sa."""
    gsa_name: NotRequired[str]
    """Google service account id the pods act as: object access on the admin bucket, read on `checkpointBuckets`.
    Default: sax-iam-sa."""
    force_destroy_bucket: NotRequired[bool]
    """Let `pulumi destroy` delete the admin bucket (sax-root, sax-fs-root) and its objects; otherwise destroy keeps
    it (retained). Default: false."""
    checkpoint_buckets: NotRequired[list[str]]
    """Buckets holding published checkpoints: the service account may read them (objectViewer)."""
    node_service_account: NotRequired[str]
    """The TPU nodes' service account: host-network model servers read the admin bucket as it."""
    images: NotRequired[SaxmlImagesArgs]
    """Container images of the admin, model and HTTP servers and of the publisher Job. Default: adminServer
    us-docker.pkg.dev/cloud-tpu-images/inference/sax-admin-server:v1.1.0, modelServer
    us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0, httpServer
    us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0, publisher
    docker.io/library/python:3.12.8-slim-bookworm."""
    resources: NotRequired[SaxmlResourcesArgs]
    """CPU and memory of the admin, model and HTTP servers."""
    host_network: NotRequired[bool]
    """Model servers on the node's network; default: as upstream, for multi-host slices."""
    restart_limit: NotRequired[int]
    """Crash restarts of slices before the JobSet gives up; default: never give up."""
    http_replicas: NotRequired[int]
    """Replicas of the Sax HTTP server Deployment behind the Service. Default: 1."""
    exposure: NotRequired[str]
    """internal (a GKE internal load balancer), public (needs `sourceRanges`) or cluster (ClusterIP only). Default:
    internal."""
    source_ranges: NotRequired[list[str]]
    """CIDRs allowed to reach a public HTTP endpoint (required with `exposure: public`; `0.0.0.0/0` is refused)."""
    models: NotRequired[list[PublishedModelArgs]]
    """Models to publish; default: the tutorial's body. `[]` publishes nothing."""
    publish_wait_minutes: NotRequired[int]
    """How long the publisher waits for published models to load (0: do not wait). Default: 20."""
    smoke_test: NotRequired[bool]
    """End `pulumi up` with a Job that sends one /generate for the first published model through the Service; `up`
    fails with its one-line reason (docs/saxml.md). Default: true."""
    jobset: NotRequired[JobSetArgs]
    """The JobSet controller the model servers run under. Default: install true, version v0.12.0."""
    spot: NotRequired[bool]
    """Spot TPU VMs for the slices: cheaper, preemptible at any time. Default: false."""
    reservation: NotRequired[str]
    """Name of a specific reservation the slices consume."""
    capacity: NotRequired[list[Any]]
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    monitoring: NotRequired[MonitoringArgs]
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md). Default: enabled true,
    queueMinutes 10, hbmFraction 0.95."""


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
