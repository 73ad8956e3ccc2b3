"""The typed inputs and outputs of `VllmStack`, as Pulumi's schema inference reads them.

`vllm.spec.VllmSpec` validates the same fields (a test keeps them in step); `cluster` takes the
TpuCluster inputs without `slices`, which are derived from the model.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import NotRequired, TypedDict

import pulumi

from tpu_stacks.cluster.args import TpuClusterArgs


class ReplicaArgs(TypedDict):
    min: NotRequired[int]
    max: NotRequired[int]


class HpaArgs(TypedDict):
    metric: NotRequired[str]
    """num_requests_waiting (default) or gpu_cache_usage_perc."""
    target: NotRequired[float]


class RegistryArgs(TypedDict):
    mode: NotRequired[str]
    """none, remote (pull-through from Docker Hub) or standard (you push the image you build)."""
    repository: NotRequired[str]
    image: NotRequired[str]


class ServerResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    memory: NotRequired[str]


class VllmStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """Hugging Face id, e.g. meta-llama/Llama-3.1-70B."""
    tpu_generation: NotRequired[str]
    topology: NotRequired[str]
    max_model_len: NotRequired[int]
    max_num_batched_tokens: NotRequired[int]
    max_num_seqs: NotRequired[int]
    download_dir: NotRequired[str]
    extra_args: NotRequired[list[str]]
    image: NotRequired[str]
    registry: NotRequired[RegistryArgs]
    replicas: NotRequired[ReplicaArgs]
    autoscaling: NotRequired[HpaArgs]
    exposure: NotRequired[str]
    """internal (default: GKE internal load balancer), public (needs source_ranges) or cluster."""
    source_ranges: NotRequired[list[str]]
    api_key: NotRequired[bool]
    namespace: NotRequired[str]
    ksa_name: NotRequired[str]
    force_destroy_bucket: NotRequired[bool]
    compile_cache: NotRequired[bool]
    resources: NotRequired[ServerResourcesArgs]
    startup_minutes: NotRequired[int]
    install_metrics_adapter: NotRequired[bool]
    spot: NotRequired[bool]
    reservation: NotRequired[str]
    hf_token: NotRequired[pulumi.Input[str]]
    """Hugging Face token (a secret); required for gated models."""
    api_key_secret: NotRequired[pulumi.Input[str]]
    """vLLM's API key (a secret) when api_key is true."""


class ServedSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    tensor_parallel_size: int
