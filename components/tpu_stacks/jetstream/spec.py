"""What a JetStream-PyTorch deployment asks for (`JetStreamSpec`), and the upstream facts it is
checked against: the pinned images, batch sizes, ports and paths.

Two flows, as upstream shipped them ([K-JETSTREAM-CONV], [K-JETSTREAM]):
- `converter` (the tutorial, v0.2.3): a Job converts the Hugging Face checkpoint into
  `gs://BUCKET/pytorch/<model>/final/bf16/`; the server reads it through a read-only GCS FUSE mount.
- `download` (upstream since Dec 2024, v0.2.4): `jpt serve --model_id` downloads at start; no Job.
`jetstream.plan` decides from these (`plan_jetstream` -> `JetStreamPlan`); nothing here decides.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from tpu_stacks.catalog.tpu import names_text
from tpu_stacks.cluster.spec import workload_cluster
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.inputs.field_rules import (
    LARGEST_REPLICAS,
    ComponentInput,
    K8sName,
    Quantity,
    ServiceAccountId,
    SpecModel,
)
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.slo.spec import SloSpec

# Pinned upstream images ([K-JETSTREAM-CONV], [K-JETSTREAM]). Tags only: upstream publishes no digests.
REGISTRY = "us-docker.pkg.dev/cloud-tpu-images/inference"
CONVERTER_IMAGE = f"{REGISTRY}/inference-checkpoint:v0.2.3"
FLOW_IMAGES = {
    "converter": (f"{REGISTRY}/jetstream-pytorch-server:v0.2.3", f"{REGISTRY}/jetstream-http:v0.2.2"),
    "download": (f"{REGISTRY}/jetstream-pytorch-server:v0.2.4", f"{REGISTRY}/jetstream-http:v0.2.3"),
}
FLOW_BATCH = {"converter": 32, "download": 30}  # upstream's ([K-JETSTREAM-CONV]; [K-JETSTREAM] after ad1460eb)
HTTP_PORT = 8000
GRPC_PORT = 9000
METRICS_PORT = JETSTREAM[0].scrape_port()  # --prometheus_port (converter flow; engine.py)
MODELS_DIR = "/models"  # the FUSE mount, as in the tutorial's --checkpoint_path
WEIGHTS_DIR = "/weights"  # download flow: --working_dir, a local emptyDir per pod
COMPILE_CACHE_DIR = "/jax-cache"
HEALTHCHECK_SINCE = (0, 2, 3)  # jetstream-http serves /healthcheck from v0.2.3 (Oct 2024, [K-JETSTREAM])


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    # SpecModel (field_rules.py): unknown keys refused, booleans/infinite numbers/secrets/invisible characters too.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ResourcesSpec(_Spec):
    ARGS: ClassVar[str] = "JetStreamResourcesArgs"

    cpu: Quantity = "8"
    """CPU request of the JetStream server container."""
    memory: Quantity = "64Gi"
    """Memory request and limit of the JetStream server container."""


class ConverterSpec(_Spec):
    """The checkpoint-converter Job (converter flow). It runs on CPU: conversion needs no TPU."""

    ARGS: ClassVar[str] = "JetStreamConverterArgs"

    image: str = CONVERTER_IMAGE
    """Checkpoint converter image, pinned (moving tags and untagged images are refused)."""
    cpu: Quantity = "8"
    """CPU request of the converter Job's pod."""
    memory: Quantity = "64Gi"
    """The 7B/8B conversions hold the whole state dict in memory (Gemma's PyTorch checkpoint is fp32)."""
    disk_gib: int = Field(default=150, ge=40, le=4000, alias="diskGib")
    """Scratch disk for the download, the converted copy and /tmp staging (~70 GB for 7B/8B)."""
    storage_class: K8sName = Field(default="standard-rwo", alias="storageClass")
    """StorageClass of the scratch volume on Autopilot or a `nodeSelector`'s nodes (on the jobs pool the class follows
    its machine's disk types, catalog/disks.py)."""
    timeout_minutes: int = Field(default=120, ge=10, le=1440, alias="timeoutMinutes")
    """How long Pulumi waits for the conversion (and the Job's active deadline)."""
    backoff_limit: int = Field(default=2, ge=0, le=10, alias="backoffLimit")
    """Retries of the converter Job, each attempt in a new pod whose logs remain."""
    ttl_hours: int = Field(default=24, ge=0, le=24 * 90, alias="ttlHours")
    """Keep the finished Job, its pods and their logs this long; 0 keeps them until destroy."""
    node_selector: dict[str, str] | None = Field(default=None, alias="nodeSelector")
    """Run on these nodes instead (Standard default: the cluster's jobs pool, a CPU node from 0 sized for `cpu` and
    `memory`, `cluster.jobsPool`)."""


class JetStreamSpec(_Spec):
    ARGS: ClassVar[str] = "JetStreamStackArgs"
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        workload_cluster("Where to run: a new Standard or Autopilot cluster, or `existing` (the TPU pool is derived)."),
        ComponentInput(
            "hf_token",
            str,
            "Hugging Face token (a secret): Secret huggingface-secret, key HUGGINGFACE_TOKEN.",
            secret=True,
        ),
    )

    model: str
    """Hugging Face id: google/gemma-7b-it or meta-llama/Meta-Llama-3-8B (the tutorial's models)."""
    flow: Literal["converter", "download"] = "converter"
    """converter (the tutorial: a Job converts into GCS, v0.2.3) or download (--model_id, v0.2.4)."""
    tpu_generation: str = Field(
        default="v5e",
        alias="tpuGeneration",
        description="TPU generation of the slice; the pinned JetStream-PyTorch images serve "
        f"{names_text(JETSTREAM[-1].served_generations or (), 'and')} only.",
    )
    topology: str = "2x4"
    """The tutorial's single-host slice; `auto` picks the smallest single-host slice that fits."""
    zone: str | None = None
    """Zone of the TPU pool (required for a regional Standard cluster)."""
    replicas: int = Field(default=2, ge=1, le=LARGEST_REPLICAS)
    """Server replicas; the TPU pool scales from 0 to one node per replica as the servers ask. With `slo` the default
    is the replicas the target needs, and a smaller count is refused."""
    slo: SloSpec | None = None
    """A traffic target the replicas are sized for (docs/jetstream.md): `replicas` defaults to the count it needs on
    the stack's slice, a smaller `replicas` is refused, and so is a slice that cannot keep a latency limit at
    any load."""
    batch_size: int | None = Field(default=None, gt=0, le=4096, alias="batchSize")
    """Decode batch (`--batch_size`/`--override_batch_size`); sizes the KV cache (default: 32; download flow: 30)."""
    max_cache_length: int = Field(default=2048, gt=0, alias="maxCacheLength")
    """Converter flow only: `--max_cache_length`, KV cache tokens per sequence."""
    max_input_length: int = Field(default=1024, gt=0, alias="maxInputLength")
    """Download flow only: `--max_input_length`; the KV cache holds input plus output tokens."""
    max_output_length: int = Field(default=1024, gt=0, alias="maxOutputLength")
    """Download flow only: `--max_output_length`; the KV cache holds input plus output tokens."""
    quantize_weights: bool = Field(default=False, alias="quantizeWeights")
    """int8 weights: converted into `final/int8/` (converter flow) or quantized by `jpt serve` (download)."""
    quantize_kv_cache: bool = Field(default=False, alias="quantizeKvCache")
    """int8 KV cache (`--quantize_kv_cache`): half the size of a bf16 cache."""
    server_image: str | None = Field(default=None, alias="serverImage")
    """JetStream-PyTorch server image, pinned (default: the chosen flow's pinned image)."""
    http_image: str | None = Field(default=None, alias="httpImage")
    """JetStream HTTP gateway image, pinned (default: the chosen flow's pinned image)."""
    converter: ConverterSpec = Field(default_factory=ConverterSpec)
    """The checkpoint-converter Job (converter flow only; refused with `flow: download`)."""
    namespace: K8sName = "jetstream"
    """Kubernetes namespace of the servers, the converter Job and the ServiceAccount (created unless `default`)."""
    ksa_name: K8sName = Field(default="jetstream", alias="ksaName")
    """Kubernetes ServiceAccount the server and converter pods run as, bound to `gsaName` (Workload Identity)."""
    gsa_name: ServiceAccountId = Field(default="wi-jetstream", alias="gsaName")
    """Google service account id the pods act as, with object access on the checkpoint bucket only."""
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    """Let `pulumi destroy` delete the checkpoint bucket and its objects; otherwise destroy keeps it (retained)."""
    compile_cache: bool = Field(default=True, alias="compileCache")
    """Keep each pod's JAX compile cache in the bucket, keyed by model, slice and server build."""
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    """CPU and memory of the JetStream server container (it also takes every TPU chip of its VM)."""
    startup_minutes: int = Field(default=30, ge=5, le=240, alias="startupMinutes")
    """How long the startup probe waits for the first load and XLA compile before restarting the server."""
    smoke_test: bool = Field(default=True, alias="smokeTest")
    """End `pulumi up` with a Job that sends one /generate through the Service and checks the metrics the dashboard
    reads (converter flow); `up` fails with its one-line reason (docs/jetstream.md)."""
    spot: bool = False
    """Serve from Spot TPU VMs (cheaper, preemptible at any time)."""
    reservation: str | None = None
    """Consume this specific reservation."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md)."""
