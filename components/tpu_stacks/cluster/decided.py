"""A cluster, decided: the records `plan_cluster` returns and `TpuCluster` declares as they are.

`PoolPlan` is one node pool (or, under Autopilot, the capacity pods select), `ClusterPlan` the whole
cluster, `WorkloadPlan` what every workload's plan carries besides its own fields. They only hold
decisions and read them back (selectors, labels, the DWS companions); the checks that make them live in
`cluster.plan`. Pure: no provider SDK.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.capacity import COMPUTE_CLASS_LABEL
from tpu_stacks.catalog.flex_start import (
    DWS_AUTO_REPAIR,
    DWS_LOCATION_POLICY,
    DWS_RESERVATION_AFFINITY,
    QUEUED_NODE_LABEL_VALUE,
)
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.tpu import (
    FLEX_START_LABEL,
    MULTI_HOST_MAX_PODS_PER_NODE,
    NODEPOOL_LABEL,
    QUEUED_LABEL,
    RESERVATION_LABEL,
    SPOT_LABEL,
    SliceShape,
)
from tpu_stacks.cluster.capacity import Capacity
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.universe import Universe
from tpu_stacks.names import region_of
from tpu_stacks.sizing import Candidate, tensor_parallel_size


class PoolPlan(BaseModel):
    """One GKE node pool, fully decided."""

    model_config = ConfigDict(frozen=True)

    name: str
    slice_index: int
    shape: SliceShape
    zone: str
    node_count: int | None
    """Fixed size; None when the pool autoscales."""
    autoscaling_min: int | None
    autoscaling_max: int | None
    spot: bool
    reservation: str | None
    flex_start: bool
    queued_provisioning: bool
    threads_per_core: int | None
    max_run_duration: str | None
    autopilot: bool = False
    """Autopilot provisions this capacity from pod selectors; no node pool is declared."""
    capacity: tuple[Capacity, ...] = ()
    """Several kinds: the fallback order of the ComputeClass that provides this slice."""
    compute_class: str | None = None
    """The ComputeClass GKE creates this slice's pools from (no node pool is declared), if any."""

    @property
    def multi_host(self) -> bool:
        return self.shape.multi_host

    @property
    def uses_workload_policy(self) -> bool:
        return self.multi_host and self.shape.multi_host_placement == "workload-policy"

    @property
    def max_pods_per_node(self) -> int | None:
        return MULTI_HOST_MAX_PODS_PER_NODE if self.multi_host else None

    @property
    def dynamic_workload_scheduler(self) -> bool:
        """Flex-start capacity (queued provisioning is flex-start too): GKE's companions apply."""
        return self.flex_start or self.queued_provisioning

    @property
    def auto_repair(self) -> bool:
        """Off for flex-start and queued pools (`--no-enable-autorepair`), on otherwise."""
        return DWS_AUTO_REPAIR if self.dynamic_workload_scheduler else True

    @property
    def location_policy(self) -> str | None:
        """ANY for flex-start and queued pools (`--location-policy=ANY`); GKE's default otherwise."""
        return DWS_LOCATION_POLICY if self.dynamic_workload_scheduler else None

    @property
    def reservation_affinity(self) -> str | None:
        """SPECIFIC_RESERVATION for a named reservation, NO_RESERVATION for spot, flex-start and queued
        pools (`--reservation-affinity=none`), otherwise GKE's default."""
        if self.reservation:
            return "SPECIFIC_RESERVATION"
        if self.spot or self.dynamic_workload_scheduler:
            return DWS_RESERVATION_AFFINITY
        return None

    def node_labels(self) -> dict[str, str]:
        """Kubernetes labels the pool puts on its nodes (queued pools: the label their pods select)."""
        labels = {"tpu-stacks/slice": self.name}
        if self.queued_provisioning:
            labels[QUEUED_LABEL] = QUEUED_NODE_LABEL_VALUE
        return labels

    def capacity_selector(self) -> dict[str, str]:
        """Node labels GKE sets for the capacity type, which Autopilot pods must select ([XPK]); the
        ComputeClass label instead when GKE falls back across kinds (a capacity label would pin one)."""
        if self.compute_class:
            return {COMPUTE_CLASS_LABEL: self.compute_class}
        if self.spot:
            return {SPOT_LABEL: "true"}
        if self.queued_provisioning:
            return {QUEUED_LABEL: "true"}
        if self.flex_start:
            return {FLEX_START_LABEL: "true"}
        if self.reservation:
            return {RESERVATION_LABEL: self.reservation}
        return {}

    def node_selector(self) -> dict[str, str]:
        return {**self.shape.node_selector(), **self.capacity_selector()}


JOBS_TAINT = ("tpu-stacks.dev/jobs", "true")
"""(key, value) of the jobs pool's NoSchedule taint: only pods that tolerate it (the Jobs it is for) land there."""


class JobsPoolPlan(BaseModel):
    """The CPU pool for large Jobs, decided: its machine, the disk its VMs attach, how far it scales (from 0)."""

    model_config = ConfigDict(frozen=True)

    name: str
    machine_type: str
    max_nodes: int
    disk_type: str
    """The boot disk's type, and the first a scratch volume on these VMs can be (catalog/cpu_machines.py)."""
    zones: tuple[str, ...] = ()
    """Where its nodes may come up (empty: the cluster's own node locations)."""

    def node_selector(self) -> dict[str, str]:
        """GKE labels every node with its pool's name: a Job's pod selects the pool by it."""
        return {NODEPOOL_LABEL: self.name}

    @property
    def taint(self) -> tuple[str, str]:
        return JOBS_TAINT


class ClusterPlan(BaseModel):
    """The whole cluster, decided: what `TpuCluster` declares."""

    model_config = ConfigDict(frozen=True)

    spec: ClusterSpec
    universe: Universe
    regional: bool
    node_locations: tuple[str, ...]
    pools: tuple[PoolPlan, ...]
    slices: tuple[SliceShape, ...]
    """One entry per slice spec (the shape workloads are sized against)."""
    beyond_catalogue: tuple[str, ...] = ()
    """What `cluster.allowUncatalogued` let through, one line each (empty without the override)."""
    jobs_pool: JobsPoolPlan | None = None
    """The CPU pool for large Jobs (`cluster.jobsPool`), if the cluster has one of ours."""

    @property
    def workload_pool(self) -> str:
        return self.universe.workload_pool(self.spec.project)

    @property
    def autopilot(self) -> bool:
        return self.spec.mode == "autopilot"

    @property
    def version_floor(self) -> str | None:
        """`cluster.minVersion` for a cluster this stack creates, else None (send no version, as GKE's channel
        default then is the floor: `_check_versions`). The exact floor is checked here and in capacity's
        checks; `up` turns it into a concrete version the location offers (`cluster.versions.create_version`,
        called by the component with what GKE answers), never the floor itself or its minor alias."""
        return self.spec.min_version if self.spec.existing is None else None

    @property
    def generations(self) -> list[str]:
        return sorted({shape.generation for shape in self.slices})

    @property
    def region(self) -> str:
        """Where regional resources of the stack (buckets, registries) live."""
        return region_of(self.spec.location)

    def pools_of(self, slice_index: int) -> tuple[PoolPlan, ...]:
        """The node pools of one slice spec (one per multi-host slice, one for identical single-host slices)."""
        return tuple(pool for pool in self.pools if pool.slice_index == slice_index)

    @property
    def compute_classes(self) -> tuple[PoolPlan, ...]:
        """One pool per ComputeClass (its slices are identical): what each class's priorities describe."""
        seen: dict[str, PoolPlan] = {}
        for pool in self.pools:
            if pool.compute_class and pool.compute_class not in seen:
                seen[pool.compute_class] = pool
        return tuple(seen.values())


class WorkloadPlan(BaseModel):
    """What every workload's plan carries: the model's verdict on the sized slice and the cluster that
    holds it. Shape, pools and tensor parallelism are read from these two, never derived again."""

    model_config = ConfigDict(frozen=True)

    model: ResolvedModel
    verdict: Candidate
    """The sized slice and the memory the model needs on it."""
    cluster: ClusterPlan
    """The cluster with the workload's own slice (slice spec 0)."""

    @property
    def shape(self) -> SliceShape:
        return self.verdict.shape

    @property
    def pools(self) -> tuple[PoolPlan, ...]:
        """The workload's node pools (one per multi-host slice), all of the same shape and capacity."""
        return self.cluster.pools_of(0)

    @property
    def pool(self) -> PoolPlan:
        """The pool the workload's pods select (the first; the others are identical)."""
        return self.pools[0]

    @property
    def tensor_parallel_size(self) -> int:
        """Serving engines shard the model over every JAX device of the slice (the project's one rule)."""
        return tensor_parallel_size(self.shape)
