"""What a dashboard and its alerts watch: one `Target` per stack, handed over by its workload.

Each workload builds its own target from its plan (`vllm/monitoring.py`, `saxml/monitoring.py`, ...):
the HPA target and bounds, the startup budget, the replica count, the JobSet's name, the metrics
port. This shared layer only draws what it is handed and never imports a workload, so every number
drawn or alerted on comes from the plan the resources are built from and none is typed twice.

What differs between workloads is a capability, never a name: the target says whether it is a server
(`serving`) and which log line carries training progress (`step_log`); its workload's descriptor names
its own dashboard sections, status cards and alerts (capabilities.py). Shared code never compares `kind`
to a workload's name (tests/test_workload_name_branches.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.gcp.monitoring.queries import Scope
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec


@dataclass(frozen=True)
class Hpa:
    name: str
    metric: str
    """The catalogued vLLM metric the HPA averages per pod (`vllm:num_requests_waiting`)."""
    target: float
    min_replicas: int
    max_replicas: int


@dataclass(frozen=True)
class Serve:
    """A Ray Serve LLM application: one replica is one slice, scaled by Serve's autoscaler in whole slices."""

    application: str
    """The Serve application's name (serveConfigV2 `applications[].name`): its requests carry it as `application`."""
    min_replicas: int
    max_replicas: int
    target_ongoing_requests: float | None = None
    """`autoscaling_config.target_ongoing_requests` per replica (None: no autoscaling, or Serve's default)."""

    @property
    def autoscales(self) -> bool:
        return self.max_replicas > self.min_replicas


@dataclass(frozen=True)
class StepLog:
    """A training job's progress, read from its log: one line per step that carries the step's seconds. A log-based
    metric (per stack) extracts them and the workload's dashboard charts it."""

    metric: str
    """The metric's own name; the stack's cluster and namespace prefix it (`Target.step_log_metric`)."""
    contains: str
    """Text every step line holds: the metric's filter keeps only log entries that contain it."""
    line: str
    """A regular expression over the step line whose one group is the step's seconds."""
    description: str


@dataclass(frozen=True)
class Target:
    kind: str
    """The workload's name (registry.py): the descriptor the shared layer asks for the workload's own sections,
    cards and alerts (capabilities.py), and the dashboard's and alerts' label."""
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
    serve: Serve | None = None
    """The Ray Serve application: set for vLLM across a multi-host slice (a RayService), which is watched through
    Ray's metrics instead of the vLLM pod's (gcp/monitoring/rayserve.py)."""
    picker: EngineVersion | None = None
    """GKE Inference Gateway's endpoint picker in front of the servers (catalog/engines/epp.py EPP), whose pool and
    scheduling metrics the dashboard adds; None without a gateway."""
    picker_flow_control: bool = False
    """The picker runs its Flow Control layer (the `flowControl` gate), whose queue the dashboard then draws."""
    picker_precise: bool = False
    """The picker's prefix cache reads the servers' KV events (`vllm.gateway.prefixCache: precise`): the dashboard
    draws its KV-block index and its event subscribers."""
    serving: bool = True
    """A server (True) or a training job (False): TPU nodes with no Ready pod are idle only for a server, and a
    server's HBM reads near full by design (its KV cache), so its HBM alert is off by default."""
    step_log: StepLog | None = None
    """The log line that carries a training step's time, whose log-based metric is declared for the stack."""

    @property
    def cluster(self) -> str:
        return self.scope.cluster

    @property
    def namespace(self) -> str:
        return self.scope.namespace

    @property
    def exports_metrics(self) -> bool:
        return bool(self.engine.metrics) and self.metrics_port is not None

    @property
    def step_log_metric(self) -> str | None:
        """The stack's log-based step metric (log-based metric names are project-wide: one per stack), if any."""
        if self.step_log is None:
            return None
        return f"tpu-stacks/{self.cluster}/{self.namespace}/{self.step_log.metric}"


def stack_fields(plan: Any) -> dict[str, Any]:
    """The fields every target reads the same way from a workload's plan: its cluster's project,
    universe and location, the workload's namespace and its monitoring settings.

    `plan` is any workload plan with `.cluster` (a cluster plan) and `.spec` (with `namespace` and
    `monitoring`); the workload's own builder (`<workload>/monitoring.py`) adds what only it knows.
    """
    cluster, spec = plan.cluster, plan.spec
    return {
        "project": cluster.spec.project,
        "universe": cluster.universe.name,
        "location": cluster.spec.location,
        "scope": Scope(cluster=cluster.spec.name, namespace=spec.namespace),
        "monitoring": spec.monitoring,
    }
