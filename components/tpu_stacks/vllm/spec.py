"""What a vLLM deployment asks for (`VllmSpec`, the `tpu-stacks:vllm` section), and vLLM's facts.

`vllm.plan.plan_vllm` derives everything else. Upstream facts are from
shared/reference/upstream-manifests.md section 3. Pure: no provider SDK.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The last immutable upstream tag that matches today's args (upstream-manifests.md §3.7, commit 5a8378ff).
VLLM_IMAGE = "docker.io/vllm/vllm-tpu:73aa7041bfee43581314e6f34e9a657137ecc092"
PORT = 8000
HPA_METRICS = {
    # Managed Prometheus names: prometheus.googleapis.com|<metric>|<kind> (upstream-manifests.md §3.4)
    "num_requests_waiting": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge",
    "gpu_cache_usage_perc": "prometheus.googleapis.com|vllm:gpu_cache_usage_perc|gauge",
}


class _Spec(BaseModel):
    # Field docstrings are the fields' descriptions: scripts/args_docs.py generates the Args docs from them.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)


class ReplicaSpec(_Spec):
    min: int = Field(default=1, ge=1)
    max: int = Field(default=2, ge=1, le=64)


class AutoscalingSpec(_Spec):
    metric: Literal["num_requests_waiting", "gpu_cache_usage_perc"] = "num_requests_waiting"
    """num_requests_waiting (default) or gpu_cache_usage_perc."""
    target: float = Field(default=10, gt=0)
    """Average value per pod (waiting requests; or the cache fraction 0..1 for gpu_cache_usage_perc)."""


class RegistrySpec(_Spec):
    """Artifact Registry for the image: `remote` pulls through from Docker Hub, `standard` receives
    an image the user builds (the tutorial builds Dockerfile.tpu and pushes it)."""

    mode: Literal["none", "remote", "standard"] = "none"
    """none, remote (pull-through from Docker Hub) or standard (you push the image you build)."""
    repository: str = "vllm-tpu"
    image: str | None = None
    """For `standard`: image name and tag inside the repository, e.g. `vllm-tpu:v0.9.2`."""


class ResourcesSpec(_Spec):
    cpu: str = "8"
    memory: str = "64Gi"


class VllmSpec(_Spec):
    model: str
    """Hugging Face id, e.g. meta-llama/Llama-3.1-70B."""
    tpu_generation: str = Field(default="v6e", alias="tpuGeneration")
    topology: str | None = None
    """Override the sized slice (it is still checked to hold the model)."""
    max_model_len: int = Field(default=4096, gt=0, alias="maxModelLen")
    max_num_batched_tokens: int = Field(default=512, gt=0, alias="maxNumBatchedTokens")
    max_num_seqs: int = Field(default=128, gt=0, alias="maxNumSeqs")
    download_dir: str = Field(default="/data", alias="downloadDir")
    extra_args: list[str] = Field(default_factory=list, alias="extraArgs")
    image: str = VLLM_IMAGE
    registry: RegistrySpec = Field(default_factory=RegistrySpec)
    replicas: ReplicaSpec = Field(default_factory=ReplicaSpec)
    autoscaling: AutoscalingSpec = Field(default_factory=AutoscalingSpec)
    exposure: Literal["internal", "public", "cluster"] = "internal"
    """internal (default: GKE internal load balancer), public (needs source_ranges) or cluster."""
    source_ranges: list[str] = Field(default_factory=list, alias="sourceRanges")
    api_key: bool = Field(default=False, alias="apiKey")
    """Require vLLM's API key (from the secret `apiKey` input)."""
    namespace: str = "vllm"
    ksa_name: str = Field(default="vllm", alias="ksaName")
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    compile_cache: bool = Field(default=True, alias="compileCache")
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    startup_minutes: int = Field(default=40, ge=5, le=240, alias="startupMinutes")
    install_metrics_adapter: bool = Field(default=True, alias="installMetricsAdapter")
    spot: bool = False
    """Serve from Spot TPU VMs (cheaper, may be preempted with 30 s warning)."""
    reservation: str | None = None
    """Consume this specific reservation."""
