"""JetStream's monitoring target: what its dashboard and alerts watch, handed to the shared monitoring layer.

The engine version is the one the server image pins (a user's own image: the newest catalogued entry);
the metrics port is charted only when that version exports metrics.
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import JETSTREAM, engine_of_image
from tpu_stacks.gcp.monitoring.targets import Target, stack_fields
from tpu_stacks.jetstream.plan import JetStreamPlan


def jetstream_target(plan: JetStreamPlan, deployment: str, container: str, metrics_port: int | None) -> Target:
    spec = plan.spec
    version = engine_of_image(plan.server_image) or JETSTREAM[-1]  # a user's image: the newest entry
    return Target(
        kind="jetstream",
        title=f"JetStream {plan.model.id} on {plan.shape.generation} {plan.shape.topology}",
        engine=version,
        tpu_containers=(container,),
        deployment=deployment,
        replicas=spec.replicas,
        startup_minutes=60,
        metrics_port=metrics_port if version.metrics else None,
        **stack_fields(plan),
    )
