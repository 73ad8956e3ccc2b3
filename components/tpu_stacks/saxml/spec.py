"""What a Saxml deployment asks for (`tpu-stacks:saxml`), with its upstream facts.

The user names the model the model servers must hold and how many copies (slices) to run; the
slice, node count, `google.com/tpu`, node selectors, JobSet parallelism and the model server's
`--platform_chip`/`--platform_topology` all follow in `saxml.plan`. Upstream facts are from
[K-SAX] (the multi-host sample at commit c6f85f55) unless a comment names another source.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from tpu_stacks.catalog.inference_gateway import SAX_HTTP_REPOSITORY
from tpu_stacks.catalog.models import SAXML_175B_TEST
from tpu_stacks.catalog.tpu import names_text
from tpu_stacks.cluster.spec import workload_cluster
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.inputs.field_rules import BucketName, ComponentInput, K8sName, Quantity, ServiceAccountId, SpecModel
from tpu_stacks.saxml.engine import SAXML

# Pinned as the multi-host sample pins them ([K-SAX]). Saxml publishes no digests.
ADMIN_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/sax-admin-server:v1.1.0"
MODEL_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0"
HTTP_IMAGE = f"{SAX_HTTP_REPOSITORY}:v1.0.0"
# The publisher runs a stdlib-only Python script (saxml_reconcile.py): any small pinned Python 3.
PUBLISHER_IMAGE = PYTHON_IMAGE

SAX_CELL = "/sax/test"  # Dockerfile.admin's SAX_CELL default and the model servers' --sax_cell ([SAX-IMAGES], [K-SAX])
ADMIN_PORT = 10000  # Dockerfile.admin PORT ([SAX-IMAGES])
MODEL_PORT = 10001  # --port of the model servers ([K-SAX])
MULTI_HOST_PORT = 8471  # declared by upstream; the libtpu multi-host worker port ([K-SAX])
HTTP_PORT = 8888  # sax-http ([K-SAX])
# Parent settings of LmCloudSpmd175B32Test ([SAX], [PAX]): the tokens Saxml holds per request.
INPUT_SEQ_LEN = 128
MAX_DECODE_STEPS = 128
BATCH_SIZE = 1
TUTORIAL_MODEL_NAME = "/sax/test/spmd"  # the tutorial's /publish body ([D-GKE-SAX])
SAMPLE_QUERY = "How many days are in a week?"  # the tutorial's /generate body ([D-GKE-SAX])


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    # SpecModel (field_rules.py): unknown keys refused, booleans/infinite numbers/secrets/invisible characters too.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PublishedModelSpec(_Spec):
    """One `/publish` body: the keys of Saxml's HTTP API (`model_path` is also accepted)."""

    model: str = TUTORIAL_MODEL_NAME
    """The Saxml model name, `/sax/test/<name>`."""
    model_path: str | None = Field(default=None, alias="modelPath")
    """Saxml registry path; default: the model the slices are sized for."""
    checkpoint: str = "None"
    """`None` (test models: random weights) or a gs:// checkpoint path."""
    replicas: int | None = Field(default=None, ge=1, le=64)
    """Model servers (slices) that load it; default: all of them."""


class ImagesSpec(_Spec):
    ARGS: ClassVar[str] = "SaxmlImagesArgs"

    admin_server: str = Field(default=ADMIN_IMAGE, alias="adminServer")
    """Saxml admin server image, pinned (moving tags and untagged images are refused)."""
    model_server: str = Field(default=MODEL_IMAGE, alias="modelServer")
    """Saxml model server image, run on every TPU VM of the slices (pinned)."""
    http_server: str = Field(default=HTTP_IMAGE, alias="httpServer")
    """Sax HTTP server image (pinned)."""
    publisher: str = PUBLISHER_IMAGE
    """Python 3 image the publisher Job runs its stdlib-only reconcile script in (pinned)."""


class AdminResources(_Spec):
    ARGS: ClassVar[str] = "ContainerResourcesArgs"  # one SDK type for the three containers
    cpu: Quantity = "500m"
    memory: Quantity = "1Gi"


class HttpResources(_Spec):
    ARGS: ClassVar[str] = "ContainerResourcesArgs"
    cpu: Quantity = "500m"
    memory: Quantity = "1Gi"


class ModelServerResources(_Spec):
    """Host CPU and memory of each model server pod (one per TPU VM; ct5lp-hightpu-4t has far more)."""

    ARGS: ClassVar[str] = "ContainerResourcesArgs"

    cpu: Quantity = "16"
    memory: Quantity = "128Gi"


class ResourcesSpec(_Spec):
    ARGS: ClassVar[str] = "SaxmlResourcesArgs"

    admin_server: AdminResources = Field(default_factory=AdminResources, alias="adminServer")
    """CPU request and memory (request and limit) of the admin server."""
    model_server: ModelServerResources = Field(default_factory=ModelServerResources, alias="modelServer")
    """CPU request and host memory (request and limit) of each model server pod, one per TPU VM."""
    http_server: HttpResources = Field(default_factory=HttpResources, alias="httpServer")
    """CPU request and memory (request and limit) of each HTTP server replica."""


class JobSetSpec(_Spec):
    install: bool = True
    """Install the JobSet controller (false when the cluster already runs one)."""
    version: str = "v0.12.0"
    """Release of kubernetes-sigs/jobset; v0.12.0 is the CRD the offline plan validates against."""


class SaxmlSpec(_Spec):
    ARGS: ClassVar[str] = "SaxmlStackArgs"
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        workload_cluster("Where to run: a new cluster or `existing` (slices are derived)."),
    )

    model: str = SAXML_175B_TEST
    """The Saxml model the slices are sized for (a registry path the catalogue knows)."""
    tpu_generation: str = Field(
        default="v5e",
        alias="tpuGeneration",
        description="TPU generation the slices are sized on; only "
        f"{names_text(SAXML.served_generations or ())} has a known model server `--platform_chip`.",
    )
    topology: str | None = None
    """Override the sized slice (still checked to hold the model)."""
    replicas: int = Field(default=2, ge=1, le=64)
    """Model servers, one TPU slice (one node pool when multi-host) each."""
    input_seq_len: int = Field(default=INPUT_SEQ_LEN, gt=0, alias="inputSeqLen")
    """Prompt tokens per request the slices are sized for (the model class's `INPUT_SEQ_LEN`; sizing only)."""
    max_decode_steps: int = Field(default=MAX_DECODE_STEPS, gt=0, alias="maxDecodeSteps")
    """Generated tokens per request the slices are sized for (the model class's `MAX_DECODE_STEPS`; sizing only)."""
    batch_size: int = Field(default=BATCH_SIZE, gt=0, alias="batchSize")
    """Requests whose KV cache the slices are sized to hold at once (the model class's `BATCH_SIZE`; sizing only)."""
    pool_name: str = Field(default="tpu{n}", alias="poolName")
    """Node pool names; `{n}` is the slice number (the tutorial's tpu1, tpu2)."""
    namespace: K8sName = "saxml"
    """Kubernetes namespace of all Saxml objects (created unless `default`; one Saxml deployment per namespace)."""
    ksa_name: K8sName = Field(default="sax-sa", alias="ksaName")
    """Kubernetes ServiceAccount the Saxml pods run as, bound to `gsaName` through Workload Identity."""
    gsa_name: ServiceAccountId = Field(default="sax-iam-sa", alias="gsaName")
    """Google service account id the pods act as: object access on the admin bucket, read on `checkpointBuckets`."""
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    """Let `pulumi destroy` delete the admin bucket (sax-root, sax-fs-root) and its objects; otherwise destroy
    keeps it (retained)."""
    checkpoint_buckets: list[BucketName] = Field(default_factory=list, alias="checkpointBuckets")
    """Buckets holding published checkpoints: the service account may read them (objectViewer)."""
    node_service_account: str | None = Field(default=None, alias="nodeServiceAccount")
    """The TPU nodes' service account: host-network model servers read the admin bucket as it."""
    images: ImagesSpec = Field(default_factory=ImagesSpec)
    """Container images of the admin, model and HTTP servers and of the publisher Job."""
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    """CPU and memory of the admin, model and HTTP servers."""
    host_network: bool | None = Field(default=None, alias="hostNetwork")
    """Model servers on the node's network; default: as upstream, for multi-host slices."""
    restart_limit: int | None = Field(default=None, ge=1, alias="restartLimit")
    """Crash restarts of slices before the JobSet gives up; default: never give up."""
    http_replicas: int = Field(default=1, ge=1, le=16, alias="httpReplicas")
    """Replicas of the Sax HTTP server Deployment behind the Service."""
    exposure: Literal["internal", "public", "cluster"] = "internal"
    """internal (a GKE internal load balancer), public (needs `sourceRanges`) or cluster (ClusterIP only)."""
    source_ranges: list[str] = Field(default_factory=list, alias="sourceRanges")
    """Your clients' CIDRs, required with `exposure` internal or public: an internal load balancer without them answers
    the whole VPC, and Sax HTTP has no authentication (`0.0.0.0/0` is refused)."""
    models: list[PublishedModelSpec] | None = None
    """Models to publish; default: the tutorial's body. `[]` publishes nothing."""
    publish_wait_minutes: int = Field(default=20, ge=0, le=120, alias="publishWaitMinutes")
    """How long the publisher waits for published models to load (0: do not wait)."""
    smoke_test: bool = Field(default=True, alias="smokeTest")
    """End `pulumi up` with a Job that sends one /generate for the first published model through the Service; `up`
    fails with its one-line reason (docs/saxml.md)."""
    jobset: JobSetSpec = Field(default_factory=JobSetSpec)
    """The JobSet controller the model servers run under."""
    spot: bool = False
    """Spot TPU VMs for the slices: cheaper, preemptible at any time."""
    reservation: str | None = None
    """Name of a specific reservation the slices consume."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md)."""
