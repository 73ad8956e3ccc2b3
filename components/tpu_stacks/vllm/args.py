"""The typed inputs and outputs of `VllmStack`, as Pulumi's schema inference reads them.

`vllm.spec.VllmSpec` validates the same fields (a test keeps them in step); `cluster` takes the
TpuCluster inputs without `slices`, which are derived from the model.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from typing import Any, NotRequired, TypedDict

import pulumi

from tpu_stacks.cluster.args import TpuClusterArgs
from tpu_stacks.gcp.monitoring.args import MonitoringArgs


class ReplicaArgs(TypedDict):
    min: NotRequired[int]
    """Fewest server replicas, one TPU node each; equal to `max`, a fixed count (no HPA, no metrics adapter).
    Default: 1."""
    max: NotRequired[int]
    """Most server replicas: the HPA's upper bound and the TPU node pool's largest size. Default: 2."""


class HpaArgs(TypedDict):
    metric: NotRequired[str]
    """The vLLM metric the HPA scales on: num_requests_waiting or gpu_cache_usage_perc. Default:
    num_requests_waiting."""
    target: NotRequired[float]
    """Average value per pod (waiting requests; or the cache fraction 0..1 for gpu_cache_usage_perc). Default: 10."""


class RegistryArgs(TypedDict):
    mode: NotRequired[str]
    """none, remote (pull-through from Docker Hub) or standard (you push the image you build). Default: none."""
    repository: NotRequired[str]
    """Artifact Registry repository id, created in the cluster's region (modes `remote` and `standard`); default
    `vllm-tpu-<cluster name>`, one per stack, so two stacks in a project never share one."""
    image: NotRequired[str]
    """For `standard`: image name and tag inside the repository, e.g. `vllm-tpu:v0.9.2`."""


class ServerResourcesArgs(TypedDict):
    cpu: NotRequired[str]
    """CPU request of the vLLM server container (a Kubernetes quantity). Default: 8."""
    memory: NotRequired[str]
    """Memory request and limit of the vLLM server container (a Kubernetes quantity). Default: 64Gi."""


class VllmStackArgs(TypedDict):
    cluster: TpuClusterArgs
    """Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."""
    model: str
    """Hugging Face id, e.g. meta-llama/Llama-3.1-70B."""
    tpu_generation: NotRequired[str]
    """TPU generation the slice is sized on: v4, v5e, v5p, v6e or tpu7x. Default: v6e."""
    topology: NotRequired[str]
    """Override the sized slice (it is still checked to hold the model)."""
    max_model_len: NotRequired[int]
    """vLLM `--max-model-len`: tokens per sequence (prompt plus output); the slice is sized to hold it. Default:
    4096."""
    max_num_batched_tokens: NotRequired[int]
    """vLLM `--max-num-batched-tokens`: tokens per engine step; also sizes the prefill activations. Default: 512."""
    max_num_seqs: NotRequired[int]
    """vLLM `--max-num-seqs`: most sequences batched at once (the slice is sized for one sequence's KV cache).
    Default: 128."""
    download_dir: NotRequired[str]
    """vLLM `--download-dir`: where the weights bucket's `weights/` folder is mounted through GCS FUSE. Default:
    /data."""
    extra_args: NotRequired[list[str]]
    """More vLLM server flags, appended after the ones the stack sets."""
    image: NotRequired[str]
    """Pinned vLLM TPU image; registry mode `remote` pulls it through the registry, `standard` runs `registry.image`.
    Default: docker.io/vllm/vllm-tpu:73aa7041bfee43581314e6f34e9a657137ecc092."""
    registry: NotRequired[RegistryArgs]
    """Optional Artifact Registry for the server image: a Docker Hub pull-through or a repository you push to.
    Default: mode none."""
    replicas: NotRequired[ReplicaArgs]
    """Server replica range: the HPA's bounds and the TPU node pool's autoscaling range (one node per replica).
    Default: min 1, max 2."""
    autoscaling: NotRequired[HpaArgs]
    """The HPA's metric and per-pod target (used only when `replicas.min` is below `replicas.max`). Default: metric
    num_requests_waiting, target 10."""
    exposure: NotRequired[str]
    """internal (a GKE internal load balancer), public (needs `sourceRanges`) or cluster (ClusterIP only). Default:
    internal."""
    source_ranges: NotRequired[list[str]]
    """CIDRs allowed to reach a public load balancer (required with `exposure: public`; `0.0.0.0/0` is refused)."""
    api_key: NotRequired[bool]
    """Require vLLM's API key, given as the secret `api_key_secret` input (config: `tpu-stacks:vllmApiKey`). Default:
    false."""
    namespace: NotRequired[str]
    """Kubernetes namespace of the servers and their objects (created unless `default`). Default: vllm."""
    ksa_name: NotRequired[str]
    """Kubernetes ServiceAccount the servers run as; Workload Identity gives it object access to the weights bucket.
    Default: vllm."""
    force_destroy_bucket: NotRequired[bool]
    """Let `pulumi destroy` delete the weights bucket and its objects; otherwise destroy keeps it (retained).
    Default: false."""
    compile_cache: NotRequired[bool]
    """Keep each pod's XLA compile cache in the bucket, keyed by model, slice and vLLM build, so new pods start warm.
    Default: true."""
    resources: NotRequired[ServerResourcesArgs]
    """CPU and memory of the vLLM server container (it also takes every TPU chip of its VM). Default: cpu 8, memory
    64Gi."""
    startup_minutes: NotRequired[int]
    """How long the startup probe waits for the first model load and XLA compile before restarting the server.
    Default: 40."""
    smoke_test: NotRequired[bool]
    """End `pulumi up` with a Job that sends one completion through the Service and checks /metrics has what the HPA
    and the dashboard read; `up` fails with its one-line reason (docs/vllm.md). Default: true."""
    install_metrics_adapter: NotRequired[bool]
    """Install the Custom Metrics Stackdriver Adapter the HPA reads; one per cluster, so false if it already has one.
    Default: true."""
    spot: NotRequired[bool]
    """Serve from Spot TPU VMs (cheaper, may be preempted with 30 s warning). Default: false."""
    reservation: NotRequired[str]
    """Consume this specific reservation."""
    capacity: NotRequired[list[Any]]
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    hf_token: NotRequired[pulumi.Input[str]]
    """Hugging Face token (a secret); required for gated models."""
    api_key_secret: NotRequired[pulumi.Input[str]]
    """vLLM's API key (a secret) when api_key is true."""
    monitoring: NotRequired[MonitoringArgs]
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md). Default: enabled true,
    queueMinutes 10, hbmFraction 0.95."""


class ServedSlice(TypedDict):
    generation: str
    topology: str
    machine_type: str
    chips: int
    tensor_parallel_size: int
