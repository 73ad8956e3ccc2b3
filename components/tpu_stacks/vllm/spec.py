"""What a vLLM deployment asks for, and every decision derived from it before any resource.

The user names a model and a TPU generation; the slice, `google.com/tpu`, the node selector,
`--tensor-parallel-size`, the pool's autoscaling, the file-cache size and the compile-cache key
all follow. Upstream facts are from shared/reference/upstream-manifests.md section 3.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.catalog.models import ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation
from tpu_stacks.errors import UserError
from tpu_stacks.exposure import check_source_ranges
from tpu_stacks.images import check_pinned
from tpu_stacks.k8s.gcsfuse import cache_size_gib
from tpu_stacks.sizing import Candidate, ServingRequest, choose_slice, tensor_parallel_size

# The last immutable upstream tag that matches today's args (upstream-manifests.md §3.7, commit 5a8378ff).
VLLM_IMAGE = "docker.io/vllm/vllm-tpu:73aa7041bfee43581314e6f34e9a657137ecc092"
PORT = 8000
HPA_METRICS = {
    # Managed Prometheus names: prometheus.googleapis.com|<metric>|<kind> (upstream-manifests.md §3.4)
    "num_requests_waiting": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge",
    "gpu_cache_usage_perc": "prometheus.googleapis.com|vllm:gpu_cache_usage_perc|gauge",
}


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ReplicaSpec(_Spec):
    min: int = Field(default=1, ge=1)
    max: int = Field(default=2, ge=1, le=64)


class AutoscalingSpec(_Spec):
    metric: Literal["num_requests_waiting", "gpu_cache_usage_perc"] = "num_requests_waiting"
    target: float = Field(default=10, gt=0)
    """Average value per pod (waiting requests; or the cache fraction 0..1 for gpu_cache_usage_perc)."""


class RegistrySpec(_Spec):
    """Artifact Registry for the image: `remote` pulls through from Docker Hub, `standard` receives
    an image the user builds (the tutorial builds Dockerfile.tpu and pushes it)."""

    mode: Literal["none", "remote", "standard"] = "none"
    repository: str = "vllm-tpu"
    image: str | None = None
    """For `standard`: image name and tag inside the repository, e.g. `vllm-tpu:v0.9.2`."""


class ResourcesSpec(_Spec):
    cpu: str = "8"
    memory: str = "64Gi"


class VllmSpec(_Spec):
    model: str
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


class VllmPlan(BaseModel):
    """Everything decided for one vLLM deployment."""

    model_config = ConfigDict(frozen=True)

    spec: VllmSpec
    model: ResolvedModel
    request: ServingRequest
    verdict: Candidate
    cache_gib: int

    @property
    def shape(self) -> SliceShape:
        return self.verdict.shape

    @property
    def autoscales(self) -> bool:
        """An HPA (and the metrics adapter it needs) only when the replica count may change."""
        return self.spec.replicas.min < self.spec.replicas.max

    @property
    def tensor_parallel_size(self) -> int:
        return tensor_parallel_size(self.shape)

    @property
    def compile_cache_prefix(self) -> str:
        """Keyed by model, slice, tensor parallelism and vLLM build: a cache is only valid for all four."""
        model_slug = re.sub(r"[^a-z0-9.-]+", "-", self.model.id.lower()).strip("-")
        image = self.spec.registry.image if self.spec.registry.mode == "standard" else self.spec.image
        build = re.sub(r"[^A-Za-z0-9.-]+", "-", (image or "").rsplit(":", 1)[-1])[:16]
        shape = f"{self.shape.generation}-{self.shape.topology}-tp{self.tensor_parallel_size}"
        return f"xla-cache/{model_slug}/{shape}/{build}"

    def engine_args(self) -> list[str]:
        spec = self.spec
        return [
            "--host=0.0.0.0",
            f"--port={PORT}",
            f"--tensor-parallel-size={self.tensor_parallel_size}",
            f"--max-model-len={spec.max_model_len}",
            f"--model={self.model.id}",
            f"--download-dir={spec.download_dir}",
            f"--max-num-batched-tokens={spec.max_num_batched_tokens}",
            f"--max-num-seqs={spec.max_num_seqs}",
            *spec.extra_args,
        ]


def _check_image(image: str, key: str = "vllm.image") -> None:
    check_pinned(image, key, VLLM_IMAGE)


def _check_registry(spec: VllmSpec) -> None:
    registry = spec.registry
    if registry.mode == "standard":
        if not registry.image:
            raise UserError(
                "vllm.registry.image",
                "<missing>",
                "is required with mode standard",
                "name the image you push, e.g. vllm-tpu:v0.9.2 (build Dockerfile.tpu, push it to the repository)",
            )
        _check_image(registry.image, "vllm.registry.image")
    if registry.mode == "remote" and not spec.image.startswith("docker.io/"):
        raise UserError(
            "vllm.image",
            spec.image,
            "is not on Docker Hub, which the remote repository mirrors",
            "use a docker.io/ image or registry mode none",
        )


def _check_exposure(spec: VllmSpec) -> None:
    check_source_ranges("vllm", spec.exposure, spec.source_ranges, "serving the OpenAI API")


def plan_vllm(spec: VllmSpec, hf_token_given: bool, api_key_given: bool) -> VllmPlan:
    """Size the slice and check every setting; raises UserError before any resource exists."""
    model = lookup_model(spec.model, key="vllm.model")
    gen = generation(spec.tpu_generation, key="vllm.tpuGeneration")
    if model.architecture.gated and not hf_token_given:
        raise UserError(
            "hfToken",
            "<missing>",
            f"is required: {model.id} is gated on Hugging Face",
            "set it as a secret: pulumi config set --secret tpu-stacks:hfToken hf_...",
        )
    if spec.api_key and not api_key_given:
        raise UserError(
            "vllmApiKey",
            "<missing>",
            "is required when vllm.apiKey is true",
            "set it as a secret: pulumi config set --secret tpu-stacks:vllmApiKey ...",
        )
    if spec.replicas.min > spec.replicas.max:
        raise UserError(
            "vllm.replicas", f"{spec.replicas.min}..{spec.replicas.max}", "has min above max", "set min <= max"
        )
    _check_image(spec.image)
    _check_registry(spec)
    _check_exposure(spec)
    request = ServingRequest(
        model=model,
        engine="vllm",
        context=spec.max_model_len,
        batch=1,
        prefill_tokens=spec.max_num_batched_tokens,
    )
    verdict = choose_slice(request, gen, spec.topology, "vllm")
    if verdict.shape.multi_host:
        raise UserError(
            "vllm.topology",
            verdict.shape.topology,
            f"is a multi-host slice ({verdict.shape.nodes} VMs); VllmStack serves from one VM",
            "use a generation with more HBM per chip, or a smaller model",
        )
    heads = model.architecture.attention.query_heads if model.architecture.attention else None
    tp = tensor_parallel_size(verdict.shape)
    if heads and heads % tp:
        raise UserError(
            "vllm.topology",
            verdict.shape.topology,
            f"gives tensor parallelism {tp}, which does not divide {model.id}'s {heads} attention heads",
            "choose a topology whose chip count divides the head count",
        )
    weights = verdict.memory.part("weights")
    return VllmPlan(spec=spec, model=model, request=request, verdict=verdict, cache_gib=cache_size_gib(weights))
