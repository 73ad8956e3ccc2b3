"""The endpoint pickers `vllm.gateway.picker` chooses between, and the scorer weights `vllm.gateway.workload` picks.

Why a table: the gateway's resources (vllm/gateway.py), its plan (vllm/gateway_plan.py), the dashboard
(gcp/monitoring/dashboards.py) and the smoke test's check of a pick all depend on which picker runs: its image,
the API group of its InferenceObjective and of its config file, the header that names an objective, the RBAC it
needs and its metric names. Each release is one row here, read from that release's source (the ledger rows named
below), so no module spells a picker's fact twice. Pure data: no provider SDK.

- `llm-d-router` (the default): llm-d/llm-d-router v0.10.0 (71f4f099, 2026-08-17), where the endpoint picker
  continued after gateway-api-inference-extension v1.5.0 (catalog/inference_gateway.py says why v1.5.0 was the
  last). Its InferenceObjective lives in `llm-d.ai/v1alpha2`; "with both CRDs present it prefers the new group and
  ignores legacy resources" (ledger: router.objective-prefers-new-group), so the objectives move, not copy.
- `epp-v1.5.0`: the picker this stack pinned before, kept selectable for one release (`PICKER_ADVISORY`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.engines.epp import EPP
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.upstream import text

ROUTER_VERSION = ROUTER.version
"""llm-d/llm-d-router's release tag: the image tag and the ledger's `router` pin."""
PickerName = Literal["llm-d-router", "epp-v1.5.0"]
DEFAULT_PICKER: PickerName = "llm-d-router"
LEGACY_PICKER: PickerName = "epp-v1.5.0"
PICKER_ADVISORY = (
    "vllm.gateway.picker: epp-v1.5.0 is kept for this release only (gateway-api-inference-extension publishes no "
    "newer picker); remove the key to run llm-d's router, which reads InferenceObjectives in llm-d.ai/v1alpha2"
)
"""The one line `plan` and `up` print while the legacy picker is chosen."""

Workload = Literal["chat", "rag", "batch"]
DEFAULT_WORKLOAD: Workload = "chat"


class KvIndexMetrics(BaseModel):
    """The precise prefix producer's metrics (llm-d's router: pkg/kvcache/metrics/collector.go)."""

    model_config = ConfigDict(frozen=True)

    lookups: str
    """Counter of index lookups, one per scored request."""
    hits: str
    """Counter of block keys a lookup found."""
    admissions: str
    evictions: str
    """Counters of blocks the servers' events stored and removed."""
    subscribers: str
    """Gauge of KV-events subscribers (one per server)."""
    messages: str
    """Counter of event batches received, labelled `pod_identifier`."""
    errors: str
    """Counter of subscriber errors, labelled `pod_identifier` and `operation`."""


class PickerMetrics(BaseModel):
    """The picker's metric names the dashboard and the smoke test read, by what they mean."""

    model_config = ConfigDict(frozen=True)

    pool_queue: str
    pool_running: str
    pool_kv_cache: str
    ready: str
    requests: str
    """Counter of requests, labelled `model_name`."""
    pick_latency: str
    picks: str
    """Counter of picks, labelled `status` and the chosen endpoint (`endpoint_label`)."""
    endpoint_label: str
    flow_control_queue: str
    flow_control_wait: str
    prefix_hit_ratio: str | None = None
    """Histogram of the prefix cache index's matched fraction per lookup (None: the release exports none by a name
    this table reads)."""
    kv_index: KvIndexMetrics | None = None
    """The precise prefix producer's KV-block index and KV-events metrics (None: the release has no such producer)."""


class Picker(BaseModel):
    """One endpoint picker release."""

    model_config = ConfigDict(frozen=True)

    name: PickerName
    record: EngineVersion
    ledger: str
    """The upstream ledger's pin whose rows hold this release's flags and defaults (`<ledger>.flag.<name>`)."""
    config_api: str
    """apiVersion of its EndpointPickerConfig (`--config-file`)."""
    objective_api_version: str
    objective_crd: str
    """The InferenceObjective CRD file vendored in tpu_stacks/k8s/crds."""
    objective_header: str
    rules: tuple[tuple[str, tuple[str, ...]], ...]
    """(API group, resources) it gets, watches and lists in its namespace."""
    metrics: PickerMetrics
    chart_source: str

    @property
    def image(self) -> str:
        return f"{self.record.images[0]}:{self.record.version}"


ROUTER_PICKER = Picker(
    name="llm-d-router",
    record=ROUTER,
    ledger="router",
    # routerlib/templates/_config.yaml @ v0.10.0 renders `apiVersion: llm-d.ai/v1alpha1` (ledger: router.config-api).
    config_api=f"{text('router.config-api')}/v1alpha1",
    objective_api_version=f"{text('router.objective-group')}/v1alpha2",
    objective_crd="llm-d.ai_inferenceobjectives.yaml",
    objective_header=text("router.header.objective"),
    # config/charts/llm-d-router-gateway/templates/rbac.yaml and routerlib/templates/_rbac.yaml @ v0.10.0 (ledger:
    # router.rbac.pods, router.rbac.pools, router.rbac.objectives, router.rbac.legacy-objectives). The legacy group
    # too, as the chart grants it: the router asks discovery which group holds InferenceObjective and falls back to
    # the legacy one when llm-d.ai is absent (ledger: router.objective-discovery), as on a cluster where only the
    # v1.5.0 picker's CRD is installed; without the grant its informer could never list them and never sync.
    rules=(
        ("", ("pods",)),
        ("inference.networking.k8s.io", ("inferencepools",)),
        ("inference.networking.x-k8s.io", ("inferenceobjectives", "inferencemodelrewrites")),
        ("llm-d.ai", ("inferenceobjectives", "inferencemodelrewrites")),
    ),
    metrics=PickerMetrics(
        pool_queue="llm_d_epp_average_queue_size",
        pool_running="llm_d_epp_average_running_requests",
        pool_kv_cache="llm_d_epp_average_kv_cache_utilization",
        ready="llm_d_epp_ready_endpoints",
        requests="llm_d_epp_request_total",
        pick_latency="llm_d_epp_scheduler_e2e_duration_seconds",
        picks="llm_d_epp_scheduler_attempts_total",
        endpoint_label="endpoint_name",
        flow_control_queue="llm_d_epp_flow_control_queue_size",
        flow_control_wait="llm_d_epp_flow_control_request_queue_duration_seconds",
        prefix_hit_ratio="llm_d_epp_prefix_indexer_hit_ratio",
        kv_index=KvIndexMetrics(
            lookups="llm_d_router_epp_kv_cache_index_lookup_requests_total",
            hits="llm_d_router_epp_kv_cache_index_lookup_hits_total",
            admissions="llm_d_router_epp_kv_cache_index_admissions_total",
            evictions="llm_d_router_epp_kv_cache_index_evictions_total",
            subscribers="llm_d_router_epp_kv_cache_events_active_subscribers",
            messages="llm_d_router_epp_kv_cache_events_messages_received_total",
            errors="llm_d_router_epp_kv_cache_events_zmq_errors_total",
        ),
    ),
    chart_source="https://github.com/llm-d/llm-d-router/tree/v0.10.0/config/charts",
)
"""ledger: router.metric.subsystem, router.metric.scheduler-attempts, router.metric.scheduler-status-success,
router.metric.prefix-hit-ratio, router.metric.kv-subsystem and the KV index's (catalog/engines/router.py)."""

LEGACY_PICKER_RELEASE = Picker(
    name="epp-v1.5.0",
    record=EPP,
    ledger="epp",
    config_api="inference.networking.x-k8s.io/v1alpha1",
    objective_api_version="inference.networking.x-k8s.io/v1alpha2",
    objective_crd="inference.networking.x-k8s.io_inferenceobjectives.yaml",
    objective_header=text("epp.header.objective"),
    # ledger: epp.rbac.pods, epp.rbac.pools, epp.rbac.objectives, epp.rbac.verbs
    rules=(
        ("", ("pods",)),
        ("inference.networking.k8s.io", ("inferencepools",)),
        ("inference.networking.x-k8s.io", ("inferenceobjectives", "inferencemodelrewrites")),
    ),
    metrics=PickerMetrics(
        pool_queue="inference_pool_average_queue_size",
        pool_running="inference_pool_average_running_requests",
        pool_kv_cache="inference_pool_average_kv_cache_utilization",
        ready="inference_pool_ready_pods",
        requests="inference_objective_request_total",
        pick_latency="inference_extension_scheduler_e2e_duration_seconds",
        picks="inference_extension_scheduler_attempts_total",
        endpoint_label="pod_name",
        flow_control_queue="inference_extension_flow_control_queue_size",
        flow_control_wait="inference_extension_flow_control_request_queue_duration_seconds",
    ),
    chart_source="https://github.com/kubernetes-sigs/gateway-api-inference-extension/tree/v1.5.0/config/charts",
)

SAME_PORTS = (("router.port.ext-proc", "epp.port.ext-proc"), ("router.port.grpc-health", "epp.port.grpc-health"))
"""The router keeps the v1.5.0 picker's ports (9002 ext-proc, 9003 health, 9090 metrics: ledger: router.port.ext-proc,
router.port.grpc-health, router.port.metrics), so the Service, the pool's endpointPickerRef, the HealthCheckPolicy and
the NetworkPolicies name the same numbers whichever picker runs (tests/catalog/test_pickers.py checks the pairs)."""

PICKERS: dict[str, Picker] = {p.name: p for p in (ROUTER_PICKER, LEGACY_PICKER_RELEASE)}


def picker(name: str) -> Picker:
    return PICKERS[name]


class ScorerWeights(BaseModel):
    """Weights of the three scorers both pickers run, and where llm-d uses them."""

    model_config = ConfigDict(frozen=True)

    queue: int
    kv_cache: int
    prefix_cache: int
    flow_control: bool = False
    """The workload asks for the Flow Control layer even without objectives."""
    source: str


WORKLOAD_WEIGHTS: dict[str, ScorerWeights] = {
    # Interactive chat: the router chart's default profile (queue 2, KV cache 2, prefix cache 3), which keeps a
    # conversation on the replica holding its earlier turns without piling onto it. llm-d/llm-d-router @ v0.10.0
    # config/charts/routerlib/templates/_config.yaml lines 74-80 (ledger: router.chart.default-weights). llm-d's
    # optimized-baseline guide now replaces it with a prefix-affinity filter calibrated on H100s
    # (guides/optimized-baseline/router/optimized-baseline.values.yaml @ llm-d/llm-d 0a3b0c93: "peakPrefillThroughput
    # default (15928) is calibrated for this guide's reference setup (Qwen3-32B on H100 80 GB"); no TPU calibration
    # exists, so it is not taken.
    "chat": ScorerWeights(
        queue=2,
        kv_cache=2,
        prefix_cache=3,
        source="llm-d/llm-d-router v0.10.0 config/charts/routerlib/templates/_config.yaml:74-80",
    ),
    # Retrieval-augmented prompts share long documents: the prefix cache weighs twice the load scorers, as llm-d's
    # prefix-cache guide weighs them (prefix 2.0, KV cache 1.0, queue 1.0):
    # guides/precise-prefix-cache-aware/scheduler/precise-prefix-cache-aware.values.yaml @ llm-d/llm-d 019a3f3f.
    "rag": ScorerWeights(
        queue=1,
        kv_cache=1,
        prefix_cache=2,
        source="llm-d/llm-d 019a3f3f guides/precise-prefix-cache-aware/scheduler/"
        "precise-prefix-cache-aware.values.yaml",
    ),
    # Batch and offline work: llm-d's batch-serving guide keeps the default weights (queue 2, KV cache 2, prefix 3)
    # and turns the `flowControl` gate on, so queued work waits in the picker instead of on a saturated server:
    # guides/batch-serving/asynchronous-processing/multitenant/values/router/flow-control.yaml @ llm-d/llm-d 1a44ba0c.
    "batch": ScorerWeights(
        queue=2,
        kv_cache=2,
        prefix_cache=3,
        flow_control=True,
        source="llm-d/llm-d 1a44ba0c guides/batch-serving/asynchronous-processing/multitenant/values/router/"
        "flow-control.yaml",
    ),
}
