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
    """Default: 1."""
    max: NotRequired[int]
    """Default: 2."""


class HpaArgs(TypedDict):
    metric: NotRequired[str]
    """num_requests_waiting (default) or gpu_cache_usage_perc. Default: num_requests_waiting."""
    target: NotRequired[float]
    """Average value per pod (waiting requests; or the cache fraction 0..1 for gpu_cache_usage_perc). Default: 10."""


class RegistryArgs(TypedDict):
    mode: NotRequired[str]
    """none, remote (pull-through from Docker Hub) or standard (you push the image you build). Default: none."""
    repository: NotRequired[str]
    """Default: vllm-tpu."""
    image: NotRequired[str]
    """For `standard`: image name and tag inside the repository, e.g. `vllm-tpu:v0.9.2`."""


class ServerResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    """Default: 8."""
    memory: NotRequired[str]
    """Default: 64Gi."""


class VllmStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """Hugging Face id, e.g. meta-llama/Llama-3.1-70B."""
    tpu_generation: NotRequired[str]
    """Default: v6e."""
    topology: NotRequired[str]
    """Override the sized slice (it is still checked to hold the model)."""
    max_model_len: NotRequired[int]
    """Default: 4096."""
    max_num_batched_tokens: NotRequired[int]
    """Default: 512."""
    max_num_seqs: NotRequired[int]
    """Default: 128."""
    download_dir: NotRequired[str]
    """Default: /data."""
    extra_args: NotRequired[list[str]]
    image: NotRequired[str]
    """Default: docker.io/vllm/vllm-tpu:73aa7041bfee43581314e6f34e9a657137ecc092."""
    registry: NotRequired[RegistryArgs]
    """Default: mode none, repository vllm-tpu."""
    replicas: NotRequired[ReplicaArgs]
    """Default: min 1, max 2."""
    autoscaling: NotRequired[HpaArgs]
    """Default: metric num_requests_waiting, target 10."""
    exposure: NotRequired[str]
    """internal (default: GKE internal load balancer), public (needs source_ranges) or cluster. Default: internal."""
    source_ranges: NotRequired[list[str]]
    api_key: NotRequired[bool]
    """Require vLLM's API key (from the secret `apiKey` input). Default: false."""
    namespace: NotRequired[str]
    """Default: vllm."""
    ksa_name: NotRequired[str]
    """Default: vllm."""
    force_destroy_bucket: NotRequired[bool]
    """Default: false."""
    compile_cache: NotRequired[bool]
    """Default: true."""
    resources: NotRequired[ServerResourcesArgs]
    """Default: cpu 8, memory 64Gi."""
    startup_minutes: NotRequired[int]
    """Default: 40."""
    install_metrics_adapter: NotRequired[bool]
    """Default: true."""
    spot: NotRequired[bool]
    """Serve from Spot TPU VMs (cheaper, may be preempted with 30 s warning). Default: false."""
    reservation: NotRequired[str]
    """Consume this specific reservation."""
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
