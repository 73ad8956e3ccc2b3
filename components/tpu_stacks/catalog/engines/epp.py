"""The GKE Inference Gateway's endpoint picker at the pinned release: image, user and metrics."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    counters,
    gauges,
    histograms,
)
from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
from tpu_stacks.catalog.upstream import number

EPP_REPOSITORY = "https://github.com/kubernetes-sigs/gateway-api-inference-extension"
EPP = EngineVersion(
    engine="epp",
    # The last release that builds the endpoint picker in this repository (v1.6.0 keeps only the API and a
    # lightweight picker; llm-d's GKE guide pins GAIE_VERSION=v1.5.0, https://llm-d.ai/docs/resources/gateway/gke).
    version="v1.5.0",
    images=("registry.k8s.io/gateway-api-inference-extension/epp",),
    metric_prefix="inference_",
    # pkg/epp/metrics/metrics.go @ v1.5.0: subsystems inference_objective, inference_pool, inference_extension,
    # no namespace; the pool gauges are labelled `name` (the pool), the objective series `model_name`.
    metrics=(
        *gauges(
            "inference_pool_average_kv_cache_utilization",
            "inference_pool_average_queue_size",
            "inference_pool_average_running_requests",
            "inference_pool_ready_pods",
            "inference_objective_running_requests",
            # Flow Control (only with the flowControl gate: ledger: epp.metric.flow-control-queue-size,
            # epp.metric.flow-control-queue-duration).
            "inference_extension_flow_control_queue_size",
        ),
        *counters(
            "inference_objective_request_total",
            "inference_objective_request_error_total",
            "inference_extension_scheduler_attempts_total",
        ),
        *histograms(
            "inference_objective_request_duration_seconds",
            "inference_extension_scheduler_e2e_duration_seconds",
            "inference_extension_flow_control_request_queue_duration_seconds",
        ),
    ),
    metrics_source=f"{EPP_REPOSITORY}/blob/v1.5.0/pkg/epp/metrics/metrics.go",
    metrics_port=number("epp.port.metrics"),  # `--metrics-port` default (pkg/epp/server/options.go @ v1.5.0)
    user=ImageUser(
        NONROOT_UID,
        "the epp Dockerfile @ v1.5.0 builds FROM gcr.io/distroless/static:nonroot (USER nonroot, 65532); "
        "the picker writes nothing but a self-signed certificate it keeps in memory",
        login="nonroot",
    ),
    source=f"{EPP_REPOSITORY} @ v1.5.0: pkg/epp/server/options.go (flags, ports 9002/9003/9090), "
    "config/charts/epplib (Deployment, RBAC), pkg/epp/metrics/metrics.go (metric names)",
)
"""GKE Inference Gateway's endpoint picker: not a model server, but a pod whose image the plan pins and
whose Prometheus metrics the vLLM dashboard draws (catalog/inference_gateway.py holds its other facts)."""
