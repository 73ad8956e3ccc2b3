"""What a vLLM deployment asks for (`VllmSpec`, the `tpu-stacks:vllm` section), and vLLM's facts.

`vllm.plan.plan_vllm` derives everything else. Upstream facts are from
[D-GKE-VLLM] and [K-VLLM]. Pure: no provider SDK.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from tpu_stacks.catalog.engines import managed_prometheus_name
from tpu_stacks.catalog.engines.vllm import STACK_BATCHED_TOKENS, VLLM
from tpu_stacks.catalog.tpu import generation_names, names_text
from tpu_stacks.catalog.upstream import text
from tpu_stacks.cluster.spec import workload_cluster
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.inputs.field_rules import (
    LARGEST_REPLICAS,
    ComponentInput,
    EngineArgs,
    FieldProblem,
    ImageName,
    K8sName,
    Quantity,
    SpecModel,
)
from tpu_stacks.slo.spec import SloSpec

# The released vLLM TPU image on tpu-inference the engine catalogue pins (catalog/engines/vllm.py `VLLM`: why this tag).
VLLM_IMAGE = f"docker.io/vllm/vllm-tpu:{VLLM.version}"
PORT = VLLM.scrape_port()  # `vllm serve --port`: the API, and /metrics on the same port (catalog/engines/)
HEALTH_PATH = text("vllm.server.health-route")
"""The server's health route, on PORT: the pod's probes and the gateway's health check call it."""
HPA_METRICS = {
    # The HPA's metric names as Managed Prometheus serves them, from the engine catalogue ([K-VLLM] vllm-hpa.yaml).
    # ledger: vllm.metric.num-requests-waiting, vllm.metric.kv-cache-usage-perc
    short: managed_prometheus_name(VLLM, f"vllm:{short}")
    for short in ("num_requests_waiting", "kv_cache_usage_perc")
}


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    # SpecModel (field_rules.py): unknown keys refused, booleans/infinite numbers/secrets/invisible characters too.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ReplicaSpec(_Spec):
    min: int = Field(default=1, ge=1)
    """Fewest server replicas, one TPU node each; equal to `max`, a fixed count (no HPA, no metrics adapter)."""
    max: int = Field(default=2, ge=1, le=LARGEST_REPLICAS)
    """Most server replicas: the HPA's upper bound and the TPU node pool's largest size."""


class AutoscalingSpec(_Spec):
    ARGS: ClassVar[str] = "HpaArgs"

    metric: Literal["num_requests_waiting", "kv_cache_usage_perc"] = "num_requests_waiting"
    """The vLLM metric the HPA scales on: num_requests_waiting or kv_cache_usage_perc."""
    target: float = Field(default=10, gt=0)
    """Average value per pod (waiting requests; or the cache fraction 0..1 for kv_cache_usage_perc)."""

    @field_validator("metric", mode="before")
    @classmethod
    def _renamed(cls, value: object) -> object:
        """An old name the pinned engine no longer exports (`gpu_cache_usage_perc`), refused with its new one."""
        renamed = VLLM.renamed_to(f"vllm:{value}") if isinstance(value, str) else None
        if renamed is not None:
            new = renamed.new.removeprefix("vllm:")
            raise FieldProblem(
                f"is a metric vLLM renamed {new} in {renamed.since}; the pinned vllm {VLLM.version} exports only {new}",
                f"write {new}",
            )
        return value


class RegistrySpec(_Spec):
    """Artifact Registry for the image: `remote` pulls through from Docker Hub, `standard` receives
    an image the user builds (the tutorial builds Dockerfile.tpu and pushes it)."""

    mode: Literal["none", "remote", "standard"] = "none"
    """none, remote (pull-through from Docker Hub) or standard (you push the image you build)."""
    repository: str | None = None
    """Artifact Registry repository id, created in the cluster's region (modes `remote` and `standard`);
    default `vllm-tpu-<cluster name>`, one per stack, so two stacks in a project never share one."""
    image: ImageName | None = None
    """For `standard`: image name and tag inside the repository, e.g. `vllm-tpu:v0.29.0`."""


class ResourcesSpec(_Spec):
    ARGS: ClassVar[str] = "ServerResourcesArgs"

    cpu: Quantity = "8"
    """CPU request of the vLLM server container (a Kubernetes quantity)."""
    memory: Quantity = "64Gi"
    """Memory request and limit of the vLLM server container (a Kubernetes quantity)."""


class ObjectiveSpec(_Spec):
    ARGS: ClassVar[str] = "InferenceObjectiveArgs"

    name: K8sName
    """The InferenceObjective's name, which a request names in the `x-gateway-inference-objective` header."""
    priority: int = Field(default=0, ge=-1000, le=1000)
    """Higher is served first: with objectives the picker runs its Flow Control layer (its `flowControl` gate, which
    the stack turns on), queueing requests by priority when the pool is saturated. Negative is sheddable (refused
    first under load); requests naming no objective have 0."""


class GatewaySpec(_Spec):
    """GKE Inference Gateway in front of the servers: an InferencePool, its endpoint picker, a Gateway and an
    HTTPRoute to the pool, with GKE's health-check and backend policies (docs/vllm.md, "Inference Gateway")."""

    ARGS: ClassVar[str] = "InferenceGatewayArgs"

    enabled: bool = False
    """Route through the gateway, which picks the replica by its queue, KV cache and prefix cache."""
    class_name: Literal["gke-l7-rilb", "gke-l7-regional-external-managed"] | None = Field(
        default=None, alias="className"
    )
    """The Gateway's class, which `exposure` decides: gke-l7-rilb for internal (the VPC reaches it: set apiKey),
    gke-l7-regional-external-managed for public (sourceRanges enforced by a regional Cloud Armor policy)."""
    objectives: list[ObjectiveSpec] = Field(default_factory=list)
    """InferenceObjectives (name, priority) requests name in the x-llm-d-inference-objective header (the v1.5.0
    picker's: x-gateway-inference-objective); the stack declares their CRD and turns the picker's Flow Control on,
    without which priorities of 0 and up order nothing."""
    picker: Literal["llm-d-router", "epp-v1.5.0"] | None = None
    """The endpoint picker: llm-d-router (llm-d's router v0.10.0, when unset), or epp-v1.5.0 (gateway-api-inference-
    extension's v1.5.0 picker, kept for this release only; catalog/pickers.py)."""
    workload: Literal["chat", "rag", "batch"] | None = None
    """What the traffic is like, which sets the scorers' weights (catalog/pickers.py WORKLOAD_WEIGHTS): chat (when
    unset: queue, KV cache and prefix cache 2/2/3), rag (prefix cache first, 1/1/2), batch (2/2/3 with the picker's
    Flow Control)."""
    prefix_cache: Literal["precise", "approximate"] | None = Field(default=None, alias="prefixCache")
    """How the prefix cache scorer knows what each server holds: precise (when unset with llm-d's router: the
    servers publish their KV-cache events, the router indexes them, and a render sidecar in the picker's pod
    tokenizes each prompt as the server does), or approximate (the router guesses from the prompts it routed: no
    events, no sidecar, no second image; the only choice with epp-v1.5.0). docs/gateway.md."""


class VllmSpec(_Spec):
    ARGS: ClassVar[str] = "VllmStackArgs"
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        workload_cluster("Where to run: a new Standard or Autopilot cluster, or `existing` (slices are derived)."),
        ComponentInput("hf_token", str, "Hugging Face token (a secret); required for gated models.", secret=True),
        ComponentInput("api_key_secret", str, "vLLM's API key (a secret) when api_key is true.", secret=True),
    )

    model: str
    """Hugging Face id, e.g. meta-llama/Llama-3.1-70B."""
    model_config_path: str | None = Field(default=None, alias="modelConfig")
    """Path of the model's Hugging Face config.json, relative to the project directory, for a model outside the
    catalogue (`tpu-stacks models fetch ORG/NAME` saves it under models/, where it is found without this). A stack
    file writes `modelConfig` (pydantic reserves `model_config`, so the SDKs name it modelConfigPath)."""
    tpu_generation: str = Field(
        default="v6e",
        alias="tpuGeneration",
        description=f"TPU generation the slice is sized on: {names_text(generation_names())}.",
    )
    topology: str | None = None
    """Override the sized slice (it is still checked to hold the model)."""
    max_model_len: int = Field(default=4096, gt=0, alias="maxModelLen")
    """vLLM `--max-model-len`: tokens per sequence (prompt plus output); the slice is sized to hold it."""
    max_num_batched_tokens: int = Field(default=STACK_BATCHED_TOKENS, gt=0, alias="maxNumBatchedTokens")
    """vLLM `--max-num-batched-tokens`: tokens per engine step; also sizes the prefill activations."""
    max_num_seqs: int = Field(default=128, gt=0, alias="maxNumSeqs")
    """vLLM `--max-num-seqs`: most sequences batched at once (the slice is sized for one sequence's KV cache)."""
    download_dir: str = Field(default="/data", alias="downloadDir")
    """vLLM `--download-dir`: where the weights bucket's `weights/` folder is mounted through GCS FUSE."""
    extra_args: EngineArgs = Field(default_factory=list, alias="extraArgs")
    """More vLLM server flags, appended after the ones the stack sets."""
    image: str = VLLM_IMAGE
    """Pinned vLLM TPU image; registry mode `remote` pulls it through the registry, `standard` runs `registry.image`."""
    registry: RegistrySpec = Field(default_factory=RegistrySpec)
    """Optional Artifact Registry for the server image: a Docker Hub pull-through or a repository you push to."""
    replicas: ReplicaSpec = Field(default_factory=ReplicaSpec)
    """Server replica range: the HPA's bounds and the TPU node pool's autoscaling range (one node per replica)."""
    autoscaling: AutoscalingSpec = Field(default_factory=AutoscalingSpec)
    """The HPA's metric and per-pod target (used only when `replicas.min` is below `replicas.max`)."""
    slo: SloSpec | None = None
    """A traffic target the replicas are sized for (docs/vllm.md): `replicas.max` defaults to the replicas it needs
    on the stack's slice, a `replicas.max` below that is refused, and so is a slice that cannot keep a latency
    limit at any load; with a latency limit it also sets `maxNumSeqs` and the HPA's waiting target unless you do."""
    exposure: Literal["internal", "public", "cluster"] = "internal"
    """internal (a GKE internal load balancer), public (needs `sourceRanges`) or cluster (ClusterIP only)."""
    source_ranges: list[str] = Field(default_factory=list, alias="sourceRanges")
    """Your clients' CIDRs, required with `exposure` internal or public: an internal load balancer without them answers
    the whole VPC, and the API key does not cover /invocations (`0.0.0.0/0` is refused)."""
    gateway: GatewaySpec = Field(default_factory=GatewaySpec)
    """GKE Inference Gateway in front of the replicas (off: the Service's load balancer spreads requests evenly)."""
    disaggregation: dict[str, dict[str, str | int]] | None = None
    """Prefill and decode on separate pools: refused at the pinned releases (no TPU KV connector that llm-d's P/D
    sidecar speaks; docs/gateway.md)."""
    api_key: bool = Field(default=False, alias="apiKey")
    """Require vLLM's API key, given as the secret `api_key_secret` input (config: `tpu-stacks:vllmApiKey`); it guards
    /v1, /v2, /inference and /cohere only, so it does not replace `sourceRanges` (refused on a multi-host slice)."""
    namespace: K8sName = "vllm"
    """Kubernetes namespace of the servers and their objects (created unless `default`)."""
    ksa_name: K8sName = Field(default="vllm", alias="ksaName")
    """Kubernetes ServiceAccount the servers run as; Workload Identity gives it object access to the weights bucket."""
    force_destroy_bucket: bool = Field(default=False, alias="forceDestroyBucket")
    """Let `pulumi destroy` delete the weights bucket and its objects; otherwise destroy keeps it (retained)."""
    compile_cache: bool = Field(default=True, alias="compileCache")
    """Keep each pod's XLA compile cache in the bucket, keyed by model, slice and vLLM build, so new pods start warm."""
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    """CPU and memory of the vLLM server container (it also takes every TPU chip of its VM)."""
    startup_minutes: int = Field(default=40, ge=5, le=240, alias="startupMinutes")
    """How long the startup probe waits for the first model load and XLA compile before restarting the server."""
    smoke_test: bool = Field(default=True, alias="smokeTest")
    """End `pulumi up` with a Job that sends one completion through the Service and checks /metrics has what the HPA
    and the dashboard read; `up` fails with its one-line reason (docs/vllm.md)."""
    install_metrics_adapter: bool = Field(default=True, alias="installMetricsAdapter")
    """Install the Custom Metrics Stackdriver Adapter the HPA reads; one per cluster, so false if it already has one."""
    spot: bool = False
    """Serve from Spot TPU VMs (cheaper, may be preempted with 30 s warning)."""
    reservation: str | None = None
    """Consume this specific reservation."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    """Cloud Monitoring dashboard and alert policies of the stack (docs/monitoring.md)."""
