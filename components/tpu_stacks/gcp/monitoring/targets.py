"""What a dashboard and its alerts watch, read from a workload's plan: one `Target` per stack.

Every number drawn or alerted on comes from the plan the resources are built from: the HPA target
and bounds (vllm.spec), the startup budget (probes), the replica count, the JobSet's name. No
number is typed twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tpu_stacks.catalog.engines import JETSTREAM, RAY, SAXML, VLLM, EngineVersion, engine_of_image
from tpu_stacks.gcp.monitoring.queries import Scope
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.raytrain.pods import RAY_METRICS_PORT
from tpu_stacks.vllm.spec import PORT as VLLM_PORT

Kind = Literal["vllm", "jetstream", "saxml", "raytrain"]


@dataclass(frozen=True)
class Hpa:
    name: str
    metric: str
    """The catalogued vLLM metric the HPA averages per pod (`vllm:num_requests_waiting`)."""
    target: float
    min_replicas: int
    max_replicas: int


@dataclass(frozen=True)
class Target:
    kind: Kind
    title: str
    """What the stack runs, for the dashboard's name (`vLLM meta-llama/Llama-3.1-70B on v6e 2x4`)."""
    project: str
    universe: str
    location: str
    scope: Scope
    engine: EngineVersion
    monitoring: MonitoringSpec
    tpu_containers: tuple[str, ...]
    """Containers that hold TPU chips (their accelerator metrics are charted)."""
    deployment: str | None = None
    replicas: int | None = None
    """Fixed replica count (None when an HPA owns it)."""
    hpa: Hpa | None = None
    jobset: str | None = None
    ray_cluster: str | None = None
    startup_minutes: int = 30
    """How long a new server may take to become ready (its startup probe's budget)."""
    metrics_port: int | None = None
    """Where Managed Prometheus scrapes the engine (None: the engine exports nothing at its pinned version)."""
    slices: int = 1
    hosts_per_slice: int = 1

    @property
    def cluster(self) -> str:
        return self.scope.cluster

    @property
    def namespace(self) -> str:
        return self.scope.namespace

    @property
    def exports_metrics(self) -> bool:
        return bool(self.engine.metrics) and self.metrics_port is not None


def _common(plan: Any, spec: Any) -> dict[str, Any]:
    cluster = plan.cluster
    return {
        "project": cluster.spec.project,
        "universe": cluster.universe.name,
        "location": cluster.spec.location,
        "scope": Scope(cluster=cluster.spec.name, namespace=spec.namespace),
        "monitoring": spec.monitoring,
    }


def vllm_target(plan: Any, hpa_name: str, deployment: str, container: str) -> Target:
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
        metrics_port=VLLM_PORT,  # the API server serves /metrics on its own port
        **_common(plan, spec),
    )


def jetstream_target(plan: Any, deployment: str, container: str, metrics_port: int | None) -> Target:
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
        **_common(plan, spec),
    )


def saxml_target(plan: Any, jobset: str, container: str) -> Target:
    spec = plan.spec
    return Target(
        kind="saxml",
        title=f"Saxml {', '.join(m.model for m in plan.models)} on {plan.shape.generation} {plan.shape.topology}",
        engine=SAXML,
        tpu_containers=(container,),
        jobset=jobset,
        startup_minutes=60,  # a multi-host slice loads its share of a 175B model before it serves
        slices=plan.slices,
        hosts_per_slice=plan.hosts,
        **_common(plan, spec),
    )


def raytrain_target(plan: Any, container: str) -> Target:
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
        **_common(plan, spec),
    )
