"""What an SGLang-JAX deployment asks for (`SglangSpec`, the `tpu-stacks:sglang` section), and SGLang-JAX's facts.

`sglang.plan.plan_sglang` derives everything else. Every flag, route and default is read in the pinned wheel
(sglang-jax 0.0.1.post1 on PyPI, sglang/engine.py says why this one) and is a row of the upstream ledger.
Pure: no provider SDK.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from tpu_stacks.catalog.tpu import names_text
from tpu_stacks.catalog.upstream import fact, number, text
from tpu_stacks.cluster.spec import workload_cluster
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.inputs.field_rules import LARGEST_REPLICAS, ComponentInput, EngineArgs, K8sName, Quantity, SpecModel
from tpu_stacks.sglang.engine import SGLANG

PORT = number("sglang.flag.port")
"""The server's default `--port` (the stack passes it explicitly): the OpenAI API and /health."""
HEALTH_PATH = text("sglang.route.health")
"""The HTTP server's liveness route: 200 once uvicorn serves, which launch_server starts after the model loaded."""
MEM_FRACTION_STATIC = float(fact("sglang.default.mem-fraction-static").value)
"""SGLang-JAX's own `--mem-fraction-static` on a TPU when none is given; the stack passes it explicitly."""
IMAGE_DIR = "components/tpu_stacks/sglang/image"
"""The server image's folder (Dockerfile, cloudbuild.yaml) from the repository root."""
IMAGE_NAME = f"sglang-jax:{SGLANG.version}"
"""The image's name and tag in the stack's Artifact Registry repository: the pinned wheel is its only content."""


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ResourcesSpec(_Spec):
    ARGS: ClassVar[str] = "SglangResourcesArgs"

    cpu: Quantity = "8"
    """CPU request of the SGLang-JAX server container (a Kubernetes quantity)."""
    memory: Quantity = "64Gi"
    """Memory request and limit of the server container (a Kubernetes quantity)."""


class SglangSpec(_Spec):
    ARGS: ClassVar[str] = "SglangStackArgs"
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        workload_cluster("Where to run: a new Standard or Autopilot cluster, or `existing` (the TPU pool is derived)."),
        ComponentInput("hf_token", str, "Hugging Face token (a secret); required for gated models.", secret=True),
    )

    model: str
    """Hugging Face id of a model SGLang-JAX implements (its sgl_jax/srt/models: Qwen, Qwen3, Qwen3-MoE)."""
    tpu_generation: str = Field(
        default="v6e",
        alias="tpuGeneration",
        description="TPU generation of the slice; the pinned SGLang-JAX serves "
        f"{names_text(SGLANG.served_generations or ())} only.",
    )
    topology: str | None = None
    """Override the sized single-host slice (it is still checked to hold the model)."""
    context_length: int = Field(default=4096, gt=0, alias="contextLength")
    """SGLang `--context-length`: tokens per sequence (prompt plus output); the slice is sized to hold one."""
    mem_fraction_static: float = Field(default=MEM_FRACTION_STATIC, gt=0, lt=1, alias="memFractionStatic")
    """SGLang `--mem-fraction-static`: the share of HBM for weights and the KV cache pool (default: SGLang's own on
    TPU)."""
    max_running_requests: int | None = Field(default=None, gt=0, alias="maxRunningRequests")
    """SGLang `--max-running-requests`: most requests decoded at once (default: what the KV pool holds)."""
    radix_cache: bool = Field(default=True, alias="radixCache")
    """Reuse the KV cache of shared prompt prefixes (SGLang's RadixAttention, on by default); false passes
    `--disable-radix-cache`."""
    download_dir: str = Field(default="/data", alias="downloadDir")
    """SGLang `--download-dir`: the Hugging Face cache the server downloads into, the weights bucket's `weights/`
    folder mounted through GCS FUSE (a restart reads it back instead of downloading again)."""
    extra_args: EngineArgs = Field(default_factory=list, alias="extraArgs")
    """More `sgl_jax.launch_server` flags, appended after the ones the stack sets."""
    image: str | None = None
    """A pinned SGLang-JAX image to run instead of the one the stack's registry holds (built from `image/`)."""
    replicas: int = Field(default=1, ge=1, le=LARGEST_REPLICAS)
    """Server replicas, one TPU node each (a fixed count: SGLang-JAX exports no metrics an HPA could scale on)."""
    exposure: Literal["internal", "public", "cluster"] = "internal"
    """internal (a GKE internal load balancer), public (needs `sourceRanges`) or cluster (ClusterIP only)."""
    source_ranges: list[str] = Field(default_factory=list, alias="sourceRanges")
    """Your clients' CIDRs, required with `exposure` internal or public (`0.0.0.0/0` is refused)."""
    namespace: K8sName = "sglang"
    """Kubernetes namespace of the servers and their objects (created unless `default`)."""
    ksa_name: K8sName = Field(default="sglang", alias="ksaName")
    """Kubernetes ServiceAccount the servers run as; Workload Identity gives it object access to the weights bucket."""
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    """Let `pulumi destroy` delete the weights bucket and its objects; otherwise destroy keeps it (retained)."""
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    """CPU and memory of the server container (it also takes every TPU chip of its VM)."""
    startup_minutes: int = Field(default=40, ge=5, le=240, alias="startupMinutes")
    """How long the startup probe waits for the download, the model load and the JAX precompile."""
    smoke_test: bool = Field(default=True, alias="smokeTest")
    """End `pulumi up` with a Job that sends one completion through the Service; `up` fails with its one-line
    reason (docs/sglang.md)."""
    spot: bool = False
    """Serve from Spot TPU VMs (cheaper, may be preempted with 30 s warning)."""
    reservation: str | None = None
    """Consume this specific reservation."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md)."""
