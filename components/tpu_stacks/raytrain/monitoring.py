"""Ray Train's monitoring target: what its dashboard and alerts watch, handed to the shared monitoring layer.

The RayCluster's name, its slices and hosts per slice come from the plan the RayCluster is built from;
the metrics port is the one the Ray pods export on (`raytrain.pods`).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import RAY
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.raytrain.plan import RayTrainPlan
from tpu_stacks.raytrain.pods import RAY_METRICS_PORT


def raytrain_target(plan: RayTrainPlan, container: str) -> Target:
    spec = plan.spec
    return Target(
        kind="raytrain",
        title=f"Ray Train + MaxText {spec.model} on {plan.shape.generation} {plan.shape.topology} x{spec.slices}",
        engine=RAY,
        tpu_containers=(container,),
        ray_cluster=spec.ray_cluster_name,
        metrics_port=RAY_METRICS_PORT,
        slices=spec.slices,
        hosts_per_slice=plan.hosts,
        **stack_fields(plan),
    )
