"""The typed inputs and outputs of `JetStreamStack`, as Pulumi's schema inference reads them.

`jetstream.spec.JetStreamSpec` validates the same fields (a test keeps them in step); `cluster` takes
the TpuCluster inputs without `slices`, which are derived from the model and `replicas`.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import NotRequired, TypedDict

import pulumi

from tpu_stacks.cluster.args import TpuClusterArgs


class JetStreamConverterArgs(TypedDict):
    image: NotRequired[str]
    """Default: us-docker.pkg.dev/cloud-tpu-images/inference/inference-checkpoint:v0.2.3."""
    cpu: NotRequired[str]
    """Default: 8."""
    memory: NotRequired[str]
    """The 7B/8B conversions hold the whole state dict in memory (Gemma's PyTorch checkpoint is fp32). Default: 64Gi."""
    disk_gib: NotRequired[int]
    """Scratch disk for the download, the converted copy and /tmp staging (~70 GB for 7B/8B). Default: 150."""
    storage_class: NotRequired[str]
    """Default: standard-rwo."""
    timeout_minutes: NotRequired[int]
    """How long Pulumi waits for the conversion (and the Job's active deadline). Default: 120."""
    backoff_limit: NotRequired[int]
    """Default: 2."""
    ttl_hours: NotRequired[int]
    """Keep the finished Job, its pods and their logs this long; 0 keeps them until destroy. Default: 24."""
    node_selector: NotRequired[dict[str, str]]
    """Run on these nodes instead (Standard default: the CPUs of the idle TPU pool's VMs)."""


class JetStreamResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    """Default: 8."""
    memory: NotRequired[str]
    """Default: 64Gi."""


class JetStreamStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (the TPU pool is derived)."""
    model: str
    """Hugging Face id: google/gemma-7b-it or meta-llama/Meta-Llama-3-8B (the tutorial's models)."""
    flow: NotRequired[str]
    """converter (the tutorial: a Job converts into GCS, v0.2.3) or download (--model_id, v0.2.4). Default:
    converter."""
    tpu_generation: NotRequired[str]
    """Default: v5e."""
    topology: NotRequired[str]
    """The tutorial's single-host slice; `auto` picks the smallest single-host slice that fits. Default: 2x4."""
    zone: NotRequired[str]
    """Zone of the TPU pool (required for a regional Standard cluster)."""
    replicas: NotRequired[int]
    """Server replicas; the TPU pool gets one node per replica. Default: 2."""
    batch_size: NotRequired[int]
    max_cache_length: NotRequired[int]
    """Default: 2048."""
    max_input_length: NotRequired[int]
    """Default: 1024."""
    max_output_length: NotRequired[int]
    """Default: 1024."""
    quantize_weights: NotRequired[bool]
    """Default: false."""
    quantize_kv_cache: NotRequired[bool]
    """Default: false."""
    server_image: NotRequired[str]
    http_image: NotRequired[str]
    converter: NotRequired[JetStreamConverterArgs]
    """Default: image us-docker.pkg.dev/cloud-tpu-images/inference/inference-checkpoint:v0.2.3, cpu 8, memory 64Gi,
    diskGib 150, storageClass standard-rwo, timeoutMinutes 120, backoffLimit 2, ttlHours 24."""
    namespace: NotRequired[str]
    """Default: jetstream."""
    ksa_name: NotRequired[str]
    """Default: jetstream."""
    gsa_name: NotRequired[str]
    """Default: wi-jetstream."""
    force_destroy_bucket: NotRequired[bool]
    """Default: false."""
    compile_cache: NotRequired[bool]
    """Default: true."""
    resources: NotRequired[JetStreamResourcesArgs]
    """Default: cpu 8, memory 64Gi."""
    startup_minutes: NotRequired[int]
    """Default: 30."""
    spot: NotRequired[bool]
    """Default: false."""
    reservation: NotRequired[str]
    hf_token: NotRequired[pulumi.Input[str]]
    """Hugging Face token (a secret): Secret huggingface-secret, key HUGGINGFACE_TOKEN."""


class JetStreamSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    nodes: int
