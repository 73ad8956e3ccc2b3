"""llm-d's router at the pinned release (the endpoint picker's successor): image, user and metrics."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    counters,
    gauges,
    histograms,
)
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.upstream import number

ROUTER_REPOSITORY = "https://github.com/llm-d/llm-d-router"
ROUTER = EngineVersion(
    engine="epp",
    # llm-d's router, where the endpoint picker continued after gateway-api-inference-extension v1.5.0 (its
    # Makefile @ v0.10.0: EPP_IMAGE_NAME llm-d-router-endpoint-picker, IMAGE_REGISTRY ghcr.io/llm-d).
    version="v0.10.0",
    images=("ghcr.io/llm-d/llm-d-router-endpoint-picker",),
    metric_prefix="llm_d_epp_",
    # pkg/epp/metrics/llm_d_router_metrics.go @ v0.10.0: subsystem llm_d_epp (the inference_* names remain, marked
    # "[Deprecated: Use llm_d_epp_...]"); the prefix indexer's hit ratio is the approximate prefix producer's
    # (pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix/metrics.go). The precise prefix
    # producer's KV-block index and KV-events subscribers export under `llm_d_router_epp`, the index's counters
    # only with `enableMetrics` (pkg/kvcache/metrics/collector.go; ledger: router.metric.kv-subsystem,
    # router.metric.kv-index-lookups, router.metric.kv-index-hits, router.metric.kv-index-admissions,
    # router.metric.kv-index-evictions, router.metric.kv-events-subscribers, router.metric.kv-events-messages,
    # router.metric.kv-events-zmq-errors, router.kvblock.enable-metrics).
    metrics=(
        *gauges(
            "llm_d_router_epp_kv_cache_events_active_subscribers",
            "llm_d_epp_average_kv_cache_utilization",
            "llm_d_epp_average_queue_size",
            "llm_d_epp_average_running_requests",
            "llm_d_epp_ready_endpoints",
            "llm_d_epp_request_running",
            "llm_d_epp_flow_control_queue_size",
        ),
        *counters(
            "llm_d_epp_request_total",
            "llm_d_epp_request_error_total",
            "llm_d_epp_scheduler_attempts_total",
            "llm_d_router_epp_kv_cache_index_lookup_requests_total",
            "llm_d_router_epp_kv_cache_index_lookup_hits_total",
            "llm_d_router_epp_kv_cache_index_admissions_total",
            "llm_d_router_epp_kv_cache_index_evictions_total",
            "llm_d_router_epp_kv_cache_events_messages_received_total",
            "llm_d_router_epp_kv_cache_events_zmq_errors_total",
        ),
        *histograms(
            "llm_d_epp_request_duration_seconds",
            "llm_d_epp_scheduler_e2e_duration_seconds",
            "llm_d_epp_flow_control_request_queue_duration_seconds",
            "llm_d_epp_prefix_indexer_hit_ratio",
        ),
    ),
    metrics_source=f"{ROUTER_REPOSITORY}/blob/v0.10.0/pkg/epp/metrics/llm_d_router_metrics.go",
    metrics_port=number("router.port.metrics"),  # `--metrics-port` default (pkg/epp/server/options.go @ v0.10.0)
    user=ImageUser(
        NONROOT_UID,
        "Dockerfile.epp @ v0.10.0 ends `USER 65532:65532`; the picker writes nothing but a self-signed certificate "
        "it keeps in memory",
        login="nonroot",
    ),
    source=f"{ROUTER_REPOSITORY} @ v0.10.0: pkg/epp/server/options.go (flags, ports 9002/9003/9090), "
    "config/charts/routerlib (Deployment, RBAC), pkg/epp/metrics/llm_d_router_metrics.go (metric names)",
)
"""llm-d's router (the endpoint picker's successor): the default picker of `vllm.gateway` (catalog/pickers.py)."""
