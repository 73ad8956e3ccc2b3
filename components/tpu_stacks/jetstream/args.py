"""The typed inputs and outputs of `JetStreamStack`, as Pulumi's schema inference reads them.

`jetstream.spec.JetStreamSpec` validates the same fields (a test keeps them in step); `cluster` takes
the TpuCluster inputs without `slices`, which are derived from the model and `replicas`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import Any, NotRequired, TypedDict

import pulumi

from tpu_stacks.cluster.args import TpuClusterArgs
from tpu_stacks.gcp.monitoring.args import MonitoringArgs


class JetStreamConverterArgs(TypedDict):
    image: NotRequired[str]
    """Checkpoint converter image, pinned (moving tags and untagged images are refused). Default:
    us-docker.pkg.dev/cloud-tpu-images/inference/inference-checkpoint:v0.2.3."""
    cpu: NotRequired[str]
    """CPU request of the converter Job's pod. Default: 8."""
    memory: NotRequired[str]
    """The 7B/8B conversions hold the whole state dict in memory (Gemma's PyTorch checkpoint is fp32). Default: 64Gi."""
    disk_gib: NotRequired[int]
    """Scratch disk for the download, the converted copy and /tmp staging (~70 GB for 7B/8B). Default: 150."""
    storage_class: NotRequired[str]
    """StorageClass of the scratch volume on Autopilot or a `nodeSelector`'s nodes (on the TPU pool's VMs the class
    follows the generation's disk types, catalog/disks.py). Default: standard-rwo."""
    timeout_minutes: NotRequired[int]
    """How long Pulumi waits for the conversion (and the Job's active deadline). Default: 120."""
    backoff_limit: NotRequired[int]
    """Retries of the converter Job, each attempt in a new pod whose logs remain. Default: 2."""
    ttl_hours: NotRequired[int]
    """Keep the finished Job, its pods and their logs this long; 0 keeps them until destroy. Default: 24."""
    node_selector: NotRequired[dict[str, str]]
    """Run on these nodes instead (Standard default: the CPUs of the idle TPU pool's VMs)."""


class JetStreamResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    """CPU request of the JetStream server container. Default: 8."""
    memory: NotRequired[str]
    """Memory request and limit of the JetStream server container. Default: 64Gi."""


class JetStreamStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (the TPU pool is derived)."""
    model: str
    """Hugging Face id: google/gemma-7b-it or meta-llama/Meta-Llama-3-8B (the tutorial's models)."""
    flow: NotRequired[str]
    """converter (the tutorial: a Job converts into GCS, v0.2.3) or download (--model_id, v0.2.4). Default:
    converter."""
    tpu_generation: NotRequired[str]
    """TPU generation of the slice; the pinned JetStream-PyTorch images serve v5e only. Default: v5e."""
    topology: NotRequired[str]
    """The tutorial's single-host slice; `auto` picks the smallest single-host slice that fits. Default: 2x4."""
    zone: NotRequired[str]
    """Zone of the TPU pool (required for a regional Standard cluster)."""
    replicas: NotRequired[int]
    """Server replicas; the TPU pool gets one node per replica. Default: 2."""
    batch_size: NotRequired[int]
    """Decode batch (`--batch_size`/`--override_batch_size`); sizes the KV cache (default: 32; download flow: 30)."""
    max_cache_length: NotRequired[int]
    """Converter flow only: `--max_cache_length`, KV cache tokens per sequence. Default: 2048."""
    max_input_length: NotRequired[int]
    """Download flow only: `--max_input_length`; the KV cache holds input plus output tokens. Default: 1024."""
    max_output_length: NotRequired[int]
    """Download flow only: `--max_output_length`; the KV cache holds input plus output tokens. Default: 1024."""
    quantize_weights: NotRequired[bool]
    """int8 weights: converted into `final/int8/` (converter flow) or quantized by `jpt serve` (download). Default:
    false."""
    quantize_kv_cache: NotRequired[bool]
    """int8 KV cache (`--quantize_kv_cache`): half the size of a bf16 cache. Default: false."""
    server_image: NotRequired[str]
    """JetStream-PyTorch server image, pinned (default: the chosen flow's pinned image)."""
    http_image: NotRequired[str]
    """JetStream HTTP gateway image, pinned (default: the chosen flow's pinned image)."""
    converter: NotRequired[JetStreamConverterArgs]
    """The checkpoint-converter Job (converter flow only; refused with `flow: download`). Default: image
    us-docker.pkg.dev/cloud-tpu-images/inference/inference-checkpoint:v0.2.3, cpu 8, memory 64Gi, diskGib 150,
    storageClass standard-rwo, timeoutMinutes 120, backoffLimit 2, ttlHours 24."""
    namespace: NotRequired[str]
    """Kubernetes namespace of the servers, the converter Job and the ServiceAccount (created unless `default`).
    Default: jetstream."""
    ksa_name: NotRequired[str]
    """Kubernetes ServiceAccount the server and converter pods run as, bound to `gsaName` (Workload Identity).
    Default: jetstream."""
    gsa_name: NotRequired[str]
    """Google service account id the pods act as, with object access on the checkpoint bucket only. Default:
    wi-jetstream."""
    force_destroy_bucket: NotRequired[bool]
    """Let `pulumi destroy` delete the checkpoint bucket and its objects; otherwise destroy keeps it (retained).
    Default: false."""
    compile_cache: NotRequired[bool]
    """Keep each pod's JAX compile cache in the bucket, keyed by model, slice and server build. Default: true."""
    resources: NotRequired[JetStreamResourcesArgs]
    """CPU and memory of the JetStream server container (it also takes every TPU chip of its VM). Default: cpu 8,
    memory 64Gi."""
    startup_minutes: NotRequired[int]
    """How long the startup probe waits for the first load and XLA compile before restarting the server. Default: 30."""
    smoke_test: NotRequired[bool]
    """End `pulumi up` with a Job that sends one /generate through the Service and checks the metrics the dashboard
    reads (converter flow); `up` fails with its one-line reason (docs/jetstream.md). Default: true."""
    spot: NotRequired[bool]
    """Serve from Spot TPU VMs (cheaper, preemptible at any time). Default: false."""
    reservation: NotRequired[str]
    """Consume this specific reservation."""
    capacity: NotRequired[list[Any]]
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    hf_token: NotRequired[pulumi.Input[str]]
    """Hugging Face token (a secret): Secret huggingface-secret, key HUGGINGFACE_TOKEN."""
    monitoring: NotRequired[MonitoringArgs]
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md). Default: enabled true,
    queueMinutes 10, hbmFraction 0.95."""


class JetStreamSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    nodes: int
