"""vLLM's monitoring target in multi-host mode: a RayService whose Serve replicas each span one slice.

The single-host target (vllm/monitoring.py) watches a Deployment, its HPA and the API server's `/metrics`. Here
the metrics come from Ray (catalog/engines/ray.py RAY_SERVE: Serve's and vLLM's, on every Ray node's metrics port),
the replicas are Serve replicas scaled by Serve's autoscaler in whole slices, and a slice is `hosts` Ray TPU
worker pods. The replica bounds and the startup budget are read from the plan the RayService is built from, the
hosts from the sized slice (`sizing.serving_parallelism`), so the charts and alerts use the same numbers.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines.ray import RAY_SERVE
from tpu_stacks.gcp.monitoring.targets import Serve, Target, stack_fields
from tpu_stacks.sizing import serving_parallelism
from tpu_stacks.vllm.plan import VllmPlan

SERVE_APPLICATION = "llm"
"""The Serve application's name in serveConfigV2 when the caller names none (the shared RayService layout)."""


def multihost_target(
    plan: VllmPlan,
    worker_container: str,
    *,
    application: str = SERVE_APPLICATION,
    target_ongoing_requests: float | None = None,
) -> Target:
    """The dashboard's and alerts' target for a multi-host vLLM stack.

    `worker_container`: the Ray container of the TPU worker group (its accelerator metrics are charted, its pods
    counted as slice hosts); `application`: serveConfigV2 `applications[].name`; `target_ongoing_requests`: the
    Serve autoscaling_config's target per replica, drawn on the in-flight chart and alerted on at max replicas.
    None: the config sets none, so Ray Serve LLM's default applies, 1e9 per replica (Ray 2.60.0
    python/ray/llm/_internal/serve/constants.py DEFAULT_MAX_TARGET_ONGOING_REQUESTS), which never scales on
    load: no line is drawn and no queue alert declared.
    Refuses a plan whose slice is one host (ValueError): that stack is watched by `vllm_target`.
    """
    parallelism = serving_parallelism(plan.shape)
    if not parallelism.multi_host:
        raise ValueError(f"{plan.shape.generation} {plan.shape.topology} is one host: use vllm_target")
    spec = plan.spec
    return Target(
        kind="vllm",  # one workload; `serve` says which charts and alerts apply
        title=f"vLLM {plan.model.id} on {plan.shape.generation} {plan.shape.topology} "
        f"({parallelism.hosts} hosts per replica)",
        engine=RAY_SERVE,
        tpu_containers=(worker_container,),
        startup_minutes=spec.startup_minutes,
        metrics_port=RAY_SERVE.scrape_port(),  # every Ray node, head and workers: Serve proxies and replicas
        slices=spec.replicas.max,
        hosts_per_slice=parallelism.hosts,
        serve=Serve(
            application=application,
            min_replicas=spec.replicas.min,
            max_replicas=spec.replicas.max,
            target_ongoing_requests=target_ongoing_requests,
        ),
        **stack_fields(plan),
    )
