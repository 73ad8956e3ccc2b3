"""vLLM's monitoring target: what its dashboard and alerts watch, handed to the shared monitoring layer.

The HPA's metric, target and bounds, the startup budget and the metrics port come from the plan the
Deployment and the HPA are built from (`vllm.spec`), so the charts and the alerts read the same numbers.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import EPP, VLLM
from tpu_stacks.gcp.monitoring.targets import Hpa, Target, stack_fields
from tpu_stacks.vllm.plan import VllmPlan
from tpu_stacks.vllm.spec import PORT


def vllm_target(plan: VllmPlan, hpa_name: str, deployment: str, container: str) -> Target:
    spec = plan.spec
    hpa = None
    if plan.autoscales:
        hpa = Hpa(
            name=hpa_name,
            metric=f"vllm:{spec.autoscaling.metric}",
            target=spec.autoscaling.target,
            min_replicas=spec.replicas.min,
            max_replicas=spec.replicas.max,
        )
    return Target(
        kind="vllm",
        title=f"vLLM {plan.model.id} on {plan.shape.generation} {plan.shape.topology}",
        engine=VLLM,
        tpu_containers=(container,),
        deployment=deployment,
        replicas=None if hpa else spec.replicas.min,
        hpa=hpa,
        startup_minutes=spec.startup_minutes,
        metrics_port=PORT,  # the API server serves /metrics on its own port
        picker=EPP if plan.gateway is not None else None,
        picker_flow_control=plan.gateway is not None and plan.gateway.flow_control,
        **stack_fields(plan),
    )
