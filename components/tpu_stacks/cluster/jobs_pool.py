"""The CPU pool for large Jobs (`cluster.jobsPool`), decided before any resource: a workload whose Job the system pool
cannot hold asks for it with what the Job requests (`require_jobs_pool`), and the cluster's plan checks it
(`plan_jobs_pool`).

Why a pool of its own: a Job that must finish before the server starts (JetStream's checkpoint converter, 8 CPUs and
64Gi) ran on the idle TPU VMs, billed at TPU prices while it downloaded and converted. This pool autoscales from 0 to
`maxNodes` (GKE's cluster autoscaler adds a node for the pending pod and removes it once the Job is done, ledger:
gke.autoscaler.scale-from-zero), and its nodes are tainted so that nothing else lands there: a kube-system pod without
a PodDisruptionBudget would keep the node from being removed (ledger: gke.autoscaler.scale-down-blockers). Its
machine is sized from the Job's requests with GKE's reservations (catalog/cpu_machines.py, ledger:
gke.node-allocatable). Pure: no provider SDK.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.cpu_machines import JOBS_SERIES, GiB, disk_types, holds, machine_shape, pod_room
from tpu_stacks.catalog.cpu_machines import smallest_holding as smallest
from tpu_stacks.catalog.locations import check_cpu_machine_type
from tpu_stacks.catalog.tpu import generation_of_machine_type
from tpu_stacks.cluster.decided import JobsPoolPlan
from tpu_stacks.cluster.spec import ClusterSpec, JobsPoolSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.inputs.k8s_quantity import quantity_value
from tpu_stacks.names import JOBS_POOL_NAME

KEY = "cluster.jobsPool"
UNCATALOGUED_SERIES_DISK = "hyperdisk-balanced"
"""The disk of a series newer than the catalogue (accepted with `cluster.allowUncatalogued`): the series after it
(C4, C4A, C4D, N4A, N4D) attach Hyperdisk Balanced, several of them no Persistent Disk (catalog/cpu_machines.py)."""


class JobRequest(BaseModel):
    """What one pod of a workload's Job requests, and where the user wrote it."""

    model_config = ConfigDict(frozen=True)

    job: str
    """What the Job is, for messages (`the converter Job`)."""
    cpu: str
    memory: str
    cpu_key: str
    memory_key: str

    @property
    def cpu_millis(self) -> int:
        return int(quantity_value(self.cpu, self.cpu_key) * 1000)

    @property
    def memory_bytes(self) -> int:
        return int(quantity_value(self.memory, self.memory_key))


def creates_pools(spec: ClusterSpec) -> bool:
    """A Standard cluster whose node pools this stack declares (a new one, or an existing one with createPools)."""
    return spec.mode == "standard" and (spec.existing is None or spec.existing.create_pools)


def require_jobs_pool(spec: ClusterSpec, request: JobRequest) -> ClusterSpec:
    """The cluster with a jobs pool that holds one pod of the Job: `cluster.jobsPool.machineType` checked, or the
    smallest catalogued type chosen. A cluster whose pools this stack does not declare is returned as it is (Autopilot
    provisions a node for the pod itself; an existing cluster's pools are its owner's)."""
    if not creates_pools(spec):
        return spec
    pool = spec.jobs_pool or JobsPoolSpec()
    cpu, memory = request.cpu_millis, request.memory_bytes
    fitting = smallest(cpu, memory)
    if pool.machine_type is None:
        if fitting is None:
            raise UserError(
                request.memory_key,
                request.memory,
                f"with {request.cpu} CPU is more than one node of any catalogued {'/'.join(JOBS_SERIES).upper()} "
                f"machine type holds for {request.job}",
                f"lower {request.cpu_key} or {request.memory_key}, or name a larger machine in {KEY}.machineType",
            )
        return spec.model_copy(update={"jobs_pool": pool.model_copy(update={"machine_type": fitting.name})})
    shape = machine_shape(pool.machine_type)
    if shape is not None and not holds(shape, cpu, memory):  # an unknown type: plan_jobs_pool's catalogue check
        room_cpu, room_memory = pod_room(shape)
        instead = f"use {fitting.name} (the smallest that holds it), or remove machineType" if fitting else "remove it"
        raise UserError(
            f"{KEY}.machineType",
            pool.machine_type,
            f"leaves a pod {max(room_cpu, 0) / 1000:g} CPU and {room_memory / GiB:.1f} GiB (GKE's reservations and "
            f"the node's own pods taken), less than {request.job} requests: {request.cpu} CPU "
            f"({request.cpu_key}), {request.memory} ({request.memory_key})",
            instead,
        )
    return spec.model_copy(update={"jobs_pool": pool})


def plan_jobs_pool(spec: ClusterSpec, zones: tuple[str, ...], lines: list[str | None]) -> JobsPoolPlan | None:
    """The jobs pool `cluster.jobsPool` asks for, checked; `lines` gets what `cluster.allowUncatalogued` let through."""
    pool = spec.jobs_pool
    if pool is None:
        return None
    if spec.mode == "autopilot":
        raise UserError(KEY, "<set>", "is for Standard clusters", "remove it: Autopilot provisions a node for each pod")
    if not creates_pools(spec):
        raise UserError(
            KEY,
            "<set>",
            "would be a new node pool of the existing cluster, whose pools this stack does not create",
            "set cluster.existing.createPools: true, or remove it",
        )
    if pool.machine_type is None:
        raise UserError(
            f"{KEY}.machineType",
            MISSING,
            "is required: no workload of this stack sizes the pool from its Job",
            "name a CPU machine type, e.g. e2-highmem-16",
        )
    if generation_of_machine_type(pool.machine_type) is not None:
        raise UserError(
            f"{KEY}.machineType",
            pool.machine_type,
            "is a TPU machine type",
            "the jobs pool is CPU nodes: use e.g. e2-highmem-16",
        )
    lines.append(check_cpu_machine_type(pool.machine_type, f"{KEY}.machineType", spec.allow_uncatalogued))
    disks = disk_types(pool.machine_type)
    return JobsPoolPlan(
        name=JOBS_POOL_NAME,
        machine_type=pool.machine_type,
        max_nodes=pool.max_nodes,
        disk_type=disks[0] if disks else UNCATALOGUED_SERIES_DISK,
        zones=zones,
    )
