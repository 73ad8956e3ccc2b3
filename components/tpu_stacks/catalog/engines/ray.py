"""Ray: Ray Train's metrics (RAY) and Ray Serve's with the engine's metrics exported through Ray (RAY_SERVE),
the names a Ray pod serves on its metrics port.
"""

from __future__ import annotations

import re

from tpu_stacks.catalog.engines.record import (
    EngineVersion,
    Metric,
    Served,
    counters,
    gauges,
    histograms,
)
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.image_users import ImageUser
from tpu_stacks.catalog.ray_serve import RAY_SERVE_VERSION
from tpu_stacks.catalog.upstream import number, text

RAY = EngineVersion(
    engine="ray",
    version="2.49.1",  # the tutorial's Ray ([K-RAY]); raytrain/spec.py RAY_VERSION reads it here
    images=(),  # the trainer image is built by the user (raytrain/trainer_image) FROM rayproject/ray:2.49.1-py312
    metric_prefix="ray_",
    # Ray Train v2 (the JaxTrainer the tutorial runs) exports its controller state and worker-group timings
    # (doc/source/train/user-guides/monitor-your-application.rst, python/ray/train/v2/_internal/metrics/);
    # Ray Core's node gauges come from python/ray/dashboard/modules/reporter/reporter_agent.py. Every Ray
    # pod serves them on KubeRay's default metrics port 8080 (container port `metrics`; ledger: kuberay.port.metrics,
    # kuberay.port-name.metrics). MaxText's step time
    # is not a Prometheus metric: it is the `completed step: N, seconds: S, ...` log line (gcp/monitoring).
    metrics=(
        *gauges(
            "ray_train_controller_state",
            "ray_train_worker_group_start_total_time_s",
            "ray_train_worker_group_shutdown_total_time_s",
            "ray_train_report_total_blocked_time_s",
            "ray_node_cpu_utilization",
            "ray_node_mem_used",
            "ray_node_mem_total",
        ),
    ),
    metrics_source="https://docs.ray.io/en/releases-2.49.1/train/user-guides/monitor-your-application.html",
    # KubeRay's `--metrics-export-port` on every Ray node (Ray's own default is a random port); the names carry Ray's
    # namespace (ledger: ray-train.metrics.namespace).
    metrics_port=number("kuberay.port.metrics"),
    user=ImageUser(
        1000,  # upstream's multi-slice mount options use uid=1000,gid=1000
        "rayproject/ray images run as USER ray (uid 1000, [K-RAY] Dockerfile); below 10000, but the "
        "image's conda lives in /home/ray, owned by that uid",
        home="/home/ray",
        login="ray",
    ),
    # Ray's accelerator type per generation (ray.util.accelerators, Ray 2.49); Ray names no tpu7x type. ledger:
    # ray-train.accelerator-type.v4, ray-train.accelerator-type.v5e, ray-train.accelerator-type.v5p,
    # ray-train.accelerator-type.v6e.
    serves=tuple(
        Served(
            generation=generation,
            platform=text(f"ray-train.accelerator-type.{generation}"),
            source="ray.util.accelerators (Ray 2.49)",
        )
        for generation in ("v4", "v5e", "v5p", "v6e")
    ),
    source="github.com/ray-project/ray doc/source/train/user-guides/monitor-your-application.rst (Ray Train "
    "metrics) and python/ray/dashboard/modules/reporter/reporter_agent.py (node gauges), Ray 2.49 docs; "
    "[K-RAY] (rayproject/ray:2.49.1-py312)",
)

RAY_METRIC_NAMESPACE = text("ray.metrics.namespace")
"""Ray's Prometheus namespace: its metrics agent exports every metric as `ray_<name>` (Ray 2.60.0
python/ray/_private/telemetry/open_telemetry_metric_recorder.py `NAMESPACE`, metrics_agent.py), and a counter
with `_total` appended (the OpenMetrics rule prometheus_client applies)."""


def through_ray(metric: Metric) -> Metric:
    """The name a vLLM metric is exported under when Ray Serve LLM runs the engine (`log_engine_metrics`, on by
    default from Ray 2.51): vLLM's RayPrometheusStatLogger registers each metric with Ray after replacing every
    character outside [a-zA-Z0-9_] by `_` (vllm/v1/metrics/ray_wrappers.py `_get_sanitized_opentelemetry_name`),
    and Ray prefixes its namespace, so `vllm:kv_cache_usage_perc` is `ray_vllm_kv_cache_usage_perc` and the counter
    `vllm:prompt_tokens_total` is `ray_vllm_prompt_tokens_total` (the names Ray's own Serve LLM Grafana dashboard
    queries: python/ray/dashboard/modules/metrics/dashboards/serve_llm_dashboard_panels.py, Ray 2.60.0). ledger:
    vllm.metrics.ray-name, ray.serve-llm.log-engine-metrics."""
    return Metric(name=f"{RAY_METRIC_NAMESPACE}_{re.sub(r'[^a-zA-Z0-9_]', '_', metric.name)}", kind=metric.kind)


RAY_SERVE = EngineVersion(
    engine="ray",
    # The Ray that serves multi-host vLLM TPU (Ray Serve LLM on KubeRay). The GKE sample installs a Ray master wheel
    # ([K-RAY-SERVE-TPU] Dockerfile); Ray's TPU guide asks for "a released Ray version ... that contains TPU topology
    # support". Every name below was read in the ray-2.60.0 wheel from PyPI (python/ray/serve/_private/).
    version=RAY_SERVE_VERSION,  # catalog/ray_serve.py: one pin for the image, the serve config schema and these names
    images=(),  # ray[serve] is installed into the vLLM TPU image (vllm/ray_serve_image; the engine image user applies)
    metric_prefix="ray_",
    metrics=(
        # Serve's HTTP proxy (request_ingress_metrics.py: `serve_num_{http}_requests` ...; tags route, method,
        # application, status_code / error_code) and its replicas, routers and controller (replica.py, router.py,
        # deployment_state.py, autoscaling_state.py).
        *counters(
            "ray_serve_num_http_requests_total",
            "ray_serve_num_http_error_requests_total",
            "ray_serve_num_deployment_http_error_requests_total",
            "ray_serve_deployment_request_counter_total",
            "ray_serve_deployment_error_counter_total",
            "ray_serve_deployment_replica_starts_total",
        ),
        *gauges(
            "ray_serve_num_ongoing_http_requests",
            "ray_serve_deployment_replica_healthy",
            "ray_serve_replica_processing_queries",
            "ray_serve_deployment_queued_queries",
            "ray_serve_num_ongoing_requests_at_replicas",
            "ray_serve_autoscaling_target_replicas",
            "ray_serve_autoscaling_desired_replicas",
            # the deployment's state, a number per state (ledger: ray.serve.metric.deployment-status)
            "ray_serve_deployment_status",
        ),
        *histograms(
            "ray_serve_http_request_latency_ms",
            "ray_serve_deployment_processing_latency_ms",
            "ray_serve_replica_startup_latency_ms",
        ),
        # The pinned vLLM's own metrics, as Ray exports them (one list: VLLM's, renamed by `through_ray`).
        *(through_ray(m) for m in VLLM.metrics),
    ),
    metrics_source="https://docs.ray.io/en/releases-2.60.0/serve/monitoring.html",
    metrics_port=number("kuberay.port.metrics"),  # KubeRay's DefaultMetricsPort (container port `metrics`)
    # Ray Serve LLM's `accelerator_type` per generation: ray/util/accelerators/accelerators.py in the ray-2.60.0
    # wheel names TPU-V4, TPU-V5LITEPOD, TPU-V5P, TPU-V6E and TPU-V7X. tpu7x is not offered: Ray Serve LLM
    # counts tensor x pipeline parallelism in chips, our sizing in JAX devices (two per tpu7x chip), and nothing
    # here checks which the engine reads on a multi-host tpu7x slice.
    # ledger: ray.accelerator-type.v4, ray.accelerator-type.v5e, ray.accelerator-type.v5p, ray.accelerator-type.v6e.
    serves=tuple(
        Served(
            generation=generation,
            platform=text(f"ray.accelerator-type.{generation}"),
            source="ray/util/accelerators/accelerators.py (Ray 2.60.0)",
        )
        for generation in ("v4", "v5e", "v5p", "v6e")
    ),
    source="github.com/ray-project/ray @ ray-2.60.0: python/ray/serve/_private/request_ingress_metrics.py, replica.py, "
    "router.py, deployment_state.py, autoscaling_state.py (Serve metric names, kinds and tags), "
    "python/ray/llm/_internal/serve/core/configs/llm_config.py (`log_engine_metrics`, default True) and "
    "engines/vllm/vllm_engine.py (RayPrometheusStatLogger); doc/source/serve/monitoring.md and "
    "doc/source/serve/llm/user-guides/observability.md; vllm-project/vllm vllm/v1/metrics/ray_wrappers.py",
)
"""Ray Serve's metrics and the engine's metrics exported through Ray: what a multi-host vLLM stack (a RayService)
is watched by. Its pods serve them on every Ray node's metrics port, not on the vLLM API port."""
