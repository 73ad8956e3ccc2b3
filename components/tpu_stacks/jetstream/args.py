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
    cpu: NotRequired[str]
    memory: NotRequired[str]
    disk_gib: NotRequired[int]
    """Scratch disk (a per-pod volume) for the download, the converted copy and /tmp staging."""
    storage_class: NotRequired[str]
    timeout_minutes: NotRequired[int]
    """How long Pulumi waits for the conversion (and the Job's active deadline)."""
    backoff_limit: NotRequired[int]
    ttl_hours: NotRequired[int]
    """Keep the finished Job and its logs this long (0: until destroy)."""
    node_selector: NotRequired[dict[str, str]]
    """Nodes for the conversion (default on Standard: the CPUs of the TPU pool's idle VMs)."""


class JetStreamResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]


class JetStreamStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (the TPU pool is derived)."""
    model: str
    """Hugging Face id: google/gemma-7b-it or meta-llama/Meta-Llama-3-8B (the tutorial's models)."""
    flow: NotRequired[str]
    """converter (the tutorial: a Job converts into GCS, v0.2.3) or download (--model_id, v0.2.4)."""
    tpu_generation: NotRequired[str]
    topology: NotRequired[str]
    """Single-host slice, default 2x4 (ct5lp-hightpu-8t); auto picks the smallest that fits."""
    zone: NotRequired[str]
    """The TPU pool's zone (required for a regional Standard cluster)."""
    replicas: NotRequired[int]
    """Server replicas; the pool gets one TPU node per replica."""
    batch_size: NotRequired[int]
    max_cache_length: NotRequired[int]
    max_input_length: NotRequired[int]
    max_output_length: NotRequired[int]
    quantize_weights: NotRequired[bool]
    quantize_kv_cache: NotRequired[bool]
    server_image: NotRequired[str]
    http_image: NotRequired[str]
    converter: NotRequired[JetStreamConverterArgs]
    namespace: NotRequired[str]
    ksa_name: NotRequired[str]
    gsa_name: NotRequired[str]
    force_destroy_bucket: NotRequired[bool]
    compile_cache: NotRequired[bool]
    resources: NotRequired[JetStreamResourcesArgs]
    startup_minutes: NotRequired[int]
    spot: NotRequired[bool]
    reservation: NotRequired[str]
    hf_token: NotRequired[pulumi.Input[str]]
    """Hugging Face token (a secret): Secret huggingface-secret, key HUGGINGFACE_TOKEN."""


class JetStreamSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    nodes: int
