"""A cluster, decided: node pools whose machine type, node count, placement and autoscaling come
from the TPU catalogue, before any resource exists.

`plan_cluster` checks a `ClusterSpec` (users' own slices, or the slices a workload derived from its
model) and returns the `ClusterPlan` that `TpuCluster` declares as is. Every invalid combination is
refused with a one-line `UserError` ("decide early, build late"). Pure: no provider SDK.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.capacity import COMPUTE_CLASS_LABEL
from tpu_stacks.catalog.locations import check_cpu_machine_type, check_location, check_tpu_zone
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.catalog.tpu import (
    DWS_AUTO_REPAIR,
    DWS_LOCATION_POLICY,
    DWS_RESERVATION_AFFINITY,
    FLEX_START_LABEL,
    MULTI_HOST_MAX_PODS_PER_NODE,
    QUEUED_LABEL,
    QUEUED_NEEDS_FLEX_START,
    QUEUED_NODE_LABEL_VALUE,
    RESERVATION_LABEL,
    SPOT_LABEL,
    SliceShape,
    generation,
    generation_of_machine_type,
    gke_version,
    slice_shape,
)
from tpu_stacks.cluster.capacity import (
    Capacity,
    autoscaling_limits,
    check_capacity,
    check_fallback,
    check_flex_start_pool,
    check_queued_generation,
    min_version_of,
    parse_capacity,
    single_kind,
)
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.gcp.universe import Universe, universe
from tpu_stacks.names import (
    GKE_NAME,
    SYSTEM_POOL_NAME,
    check_node_service_account,
    check_zone_of,
    is_region,
    is_zone,
    region_of,
)
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


def _check_location(spec: ClusterSpec) -> tuple[bool, tuple[str, ...]]:
    if is_zone(spec.location):
        regional = False
    elif is_region(spec.location):
        regional = True
    else:
        raise UserError(
            "cluster.location",
            spec.location,
            "is neither a zone nor a region",
            "use e.g. us-central1-a (zonal) or us-central1 (regional)",
        )
    region = spec.location if regional else region_of(spec.location)
    if spec.mode == "autopilot" and not regional:
        raise UserError(
            "cluster.location", spec.location, "is a zone, and Autopilot clusters are regional", f"use {region}"
        )
    for index, zone in enumerate(spec.node_locations):
        check_zone_of(f"cluster.nodeLocations[{index}]", zone, region, f"use zones like {region}-a")
    if spec.node_locations:
        return regional, tuple(spec.node_locations)
    return regional, () if regional else (spec.location,)


# Release channels offered about 1.33 when the catalogue was written (GKE's release schedule,
# https://cloud.google.com/kubernetes-engine/docs/release-schedule):
# a generation that needs a newer GKE cannot rely on the channel's default version.
CHANNEL_FLOOR = "1.33"


def _check_versions(spec: ClusterSpec, shapes: list[SliceShape]) -> None:
    if spec.min_version is None:
        for shape in shapes:
            gen = generation(shape.generation)
            minimum = gen.min_gke_autopilot if spec.mode == "autopilot" else gen.min_gke_standard
            if gke_version(CHANNEL_FLOOR) < minimum.parsed and spec.existing is None:
                raise UserError(
                    "cluster.minVersion",
                    MISSING,
                    f"is required for TPU {gen.name}, which needs GKE {minimum.version}",
                    f"set cluster.minVersion to {minimum.version} or later (source: {minimum.source})",
                )
        return
    chosen = min_version_of(spec.min_version)
    for shape in shapes:
        gen = generation(shape.generation)
        minimum = gen.min_gke_autopilot if spec.mode == "autopilot" else gen.min_gke_standard
        if chosen < minimum.parsed:
            raise UserError(
                "cluster.minVersion",
                spec.min_version,
                f"is older than TPU {gen.name} supports in {spec.mode} mode",
                f"use {minimum.version} or later (source: {minimum.source})",
            )


def _pool_zone(key: str, spec: SliceSpec, cluster: ClusterSpec, regional: bool, node_locations: tuple[str, ...]) -> str:
    if spec.zone:
        region = cluster.location if regional else region_of(cluster.location)
        return check_zone_of(f"{key}.zone", spec.zone, region)
    if not regional:
        return cluster.location
    if len(node_locations) == 1:
        return node_locations[0]
    raise UserError(
        f"{key}.zone",
        None,
        "is missing for a regional cluster",
        "TPU pools live in one zone: give cluster.nodeLocations exactly one zone (or set the slice's zone)",
    )


def _zone_key(key: str, spec: SliceSpec, location_key: str, regional: bool, autopilot: bool) -> str:
    """The key the user wrote for a pool's zone: the slice's zone, the cluster's location, or its one
    node location (as `_pool_zone` chose it)."""
    if spec.zone:
        return f"{key}.zone"
    return location_key if autopilot or not regional else "cluster.nodeLocations[0]"


def _check_places(spec: ClusterSpec, chosen: Universe, location_key: str) -> list[str | None]:
    """The cluster's location and node locations exist in the location catalogue (catalog/locations.py):
    refused in one line naming the key, or recorded under the override (first, before the slices)."""
    allow = spec.allow_uncatalogued
    lines = [check_location(chosen, spec.location, location_key, allow)]
    return lines + [
        check_location(chosen, zone, f"cluster.nodeLocations[{index}]", allow)
        for index, zone in enumerate(spec.node_locations)
    ]


def _check_catalogue(
    spec: ClusterSpec, chosen: Universe, pool_zones: list[tuple[str, str, str]], lines: list[str | None]
) -> tuple[str, ...]:
    """Each pool's zone offers its TPU generation, and the system pool's machine type exists (the
    location catalogue); returns every line the override let through, `lines` included."""
    allow = spec.allow_uncatalogued
    for key, zone, gen in pool_zones:
        if key.endswith(".zone"):
            lines.append(check_location(chosen, zone, key, allow))
        lines.append(check_tpu_zone(chosen, zone, gen, key, allow))
    if spec.mode == "standard" and spec.existing is None:
        lines.append(check_cpu_machine_type(spec.system_pool.machine_type, "cluster.systemPool.machineType", allow))
    return tuple(dict.fromkeys(line for line in lines if line))


def _pool_name(spec: SliceSpec, shape: SliceShape, replica: int) -> str:
    """The slice's name, numbered per slice when there are several: `{n}` in the name places the
    number (`tpu{n}` gives the Saxml tutorial's tpu1, tpu2), otherwise `-1`, `-2` is appended."""
    generation_name = shape.generation if shape.generation.startswith("tpu") else f"tpu-{shape.generation}"
    base = spec.name or f"{generation_name}-{shape.topology}"
    if "{n}" in base:
        return base.replace("{n}", str(replica + 1))
    return base if spec.count == 1 or not shape.multi_host else f"{base}-{replica + 1}"


def _class_name(spec: SliceSpec, shape: SliceShape) -> str:
    """The ComputeClass of a slice spec: its pool name without the slice number (one class serves all)."""
    generation_name = shape.generation if shape.generation.startswith("tpu") else f"tpu-{shape.generation}"
    base = spec.name or f"{generation_name}-{shape.topology}"
    return base.replace("{n}", "").strip("-") or generation_name


def _refuse_shared_classes(pools: list[PoolPlan]) -> None:
    """One ComputeClass per slice spec: two specs deriving the same class name would share one class
    whose TPU shape fits only the first (`ClusterPlan.compute_classes` keeps one per name)."""
    first: dict[str, int] = {}
    for pool in pools:
        if pool.compute_class is None:
            continue
        owner = first.setdefault(pool.compute_class, pool.slice_index)
        if owner != pool.slice_index:
            raise UserError(
                f"cluster.slices[{pool.slice_index}].name",
                pool.compute_class,
                f"names the ComputeClass of cluster.slices[{owner}] too",
                "give each slice with a capacity list a distinct name",
            )


def plan_cluster(spec: ClusterSpec) -> ClusterPlan:
    """Check the spec and derive every pool; raises UserError on the first problem."""
    if spec.existing is None:
        return _plan_cluster(spec)
    # Pools added to an existing cluster live where that cluster is, in its project; its mistakes are
    # named as the user wrote them (`cluster.existing.location`), not as the copy's keys.
    existing = spec.existing
    keys = {"cluster.name": "cluster.existing.name", "cluster.location": "cluster.existing.location"}
    if existing.project:
        keys["cluster.project"] = "cluster.existing.project"
    try:
        return _plan_cluster(
            spec.model_copy(
                update={
                    "name": existing.name,
                    "location": existing.location,
                    "project": existing.project or spec.project,
                }
            )
        )
    except UserError as error:
        raise error.rekeyed(keys) from None


def _plan_cluster(spec: ClusterSpec) -> ClusterPlan:
    location_key = "cluster.location"  # `cluster.existing.location` for an existing cluster (plan_cluster rekeys)
    chosen_universe = universe(spec.universe, key="cluster.universe")
    chosen_universe.bare_project(spec.project, key="cluster.project")  # `s3ns:` only in S3NS
    chosen_universe.check_location(spec.location, key="cluster.location")  # S3NS: u-france-east1 only
    if spec.node_service_account is not None:
        check_node_service_account(spec.node_service_account, "cluster.nodeServiceAccount", spec.existing is not None)
    if not GKE_NAME.matches(spec.name):
        raise UserError(
            "cluster.name",
            spec.name,
            "is not a valid GKE cluster name",
            "use lowercase letters, digits and '-', at most 40 characters",
        )
    regional, node_locations = _check_location(spec)
    beyond = _check_places(spec, chosen_universe, location_key)
    if generation_of_machine_type(spec.system_pool.machine_type) is not None:
        raise UserError(
            "cluster.systemPool.machineType",
            spec.system_pool.machine_type,
            "is a TPU machine type",
            "the system pool runs kube-system and add-ons on CPU nodes: use e.g. e2-standard-4",
        )
    shapes: list[SliceShape] = []
    pools: list[PoolPlan] = []
    pool_zones: list[tuple[str, str, str]] = []  # (key as written, zone or region, generation)
    for index, slice_spec in enumerate(spec.slices):
        key = f"cluster.slices[{index}]"
        try:
            shape = slice_shape(slice_spec.generation, slice_spec.topology, slice_spec.machine_type)
        except UserError as error:
            raise error.under(key) from None
        shapes.append(shape)
        kinds = parse_capacity(f"{key}.capacity", slice_spec.capacity) if slice_spec.capacity is not None else ()
        if len(kinds) == 1:
            slice_spec = single_kind(key, slice_spec, kinds)
        elif kinds:
            check_fallback(key, slice_spec, shape, kinds, spec.mode, spec.min_version)
        check_capacity(key, slice_spec)
        check_flex_start_pool(key, slice_spec, shape, spec.min_version)
        check_queued_generation(key, slice_spec, shape)
        if (
            spec.mode == "standard"
            and shape.multi_host
            and slice_spec.zone is None
            and regional
            and len(node_locations) > 1
        ):
            raise UserError(
                f"{key}.zone",
                None,
                f"is missing: COMPACT placement of the multi-host {shape.topology} slice needs exactly one zone",
                "set the slice's zone",
            )
        autopilot = spec.mode == "autopilot"
        # Autopilot creates TPU nodes from the workloads' node selectors: its pools are virtual.
        zone = (slice_spec.zone or "") if autopilot else _pool_zone(key, slice_spec, spec, regional, node_locations)
        zone_key = _zone_key(key, slice_spec, location_key, regional, autopilot)
        pool_zones.append((zone_key, zone or spec.location, shape.generation))
        fixed, low, high = autoscaling_limits(key, slice_spec, shape) if len(kinds) < 2 else (None, None, None)
        compute_class = _class_name(slice_spec, shape) if len(kinds) > 1 else None
        replicas = slice_spec.count if shape.multi_host else 1
        if not shape.multi_host and slice_spec.count > 1:
            if slice_spec.nodes not in (None, slice_spec.count):
                raise UserError(
                    f"{key}.nodes",
                    slice_spec.nodes,
                    f"contradicts count {slice_spec.count}",
                    "identical single-host slices share one pool with one node each: set count or nodes, not both",
                )
            if fixed is not None:
                fixed = slice_spec.count
            elif high is not None and high < slice_spec.count:
                raise UserError(
                    f"{key}.autoscaling.maxNodes",
                    high,
                    f"is below count {slice_spec.count}",
                    "identical single-host slices share one pool with one node each: raise maxNodes or lower count",
                )
        for replica in range(replicas):
            pools.append(
                PoolPlan(
                    name=_pool_name(slice_spec, shape, replica),
                    slice_index=index,
                    shape=shape,
                    zone=zone,
                    node_count=fixed,
                    autoscaling_min=low,
                    autoscaling_max=high,
                    spot=slice_spec.spot,
                    reservation=slice_spec.reservation,
                    # GKE's queued provisioning is flex-start with queued provisioning (both flags).
                    flex_start=slice_spec.flex_start or (slice_spec.queued_provisioning and QUEUED_NEEDS_FLEX_START),
                    queued_provisioning=slice_spec.queued_provisioning,
                    threads_per_core=slice_spec.threads_per_core,
                    max_run_duration=slice_spec.max_run_duration,
                    autopilot=autopilot,
                    capacity=kinds if compute_class else (),
                    compute_class=compute_class,
                )
            )
    if spec.mode == "standard" and spec.existing is None:
        for pool in pools:
            if pool.name == SYSTEM_POOL_NAME:
                raise UserError(
                    f"cluster.slices[{pool.slice_index}].name",
                    pool.name,
                    "is the name of the cluster's CPU system pool",
                    "give the slice another name",
                )
    names = [pool.name for pool in pools]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UserError(
            "cluster.slices[].name", duplicates[0], "names two node pools", "give each slice a distinct name"
        )
    _refuse_shared_classes(pools)
    for pool in pools:
        if not GKE_NAME.matches(pool.name):
            raise UserError(
                f"cluster.slices[{pool.slice_index}].name",
                pool.name,
                "is not a valid node pool name",
                "use lowercase letters, digits and '-'",
            )
    _check_versions(spec, shapes)
    beyond_catalogue = _check_catalogue(spec, chosen_universe, pool_zones, beyond)
    return ClusterPlan(
        spec=spec,
        universe=chosen_universe,
        regional=regional,
        node_locations=node_locations,
        pools=tuple(pools),
        slices=tuple(shapes),
        beyond_catalogue=beyond_catalogue,
    )


# -- clusters that a workload derives from its model -------------------------------------------------


def refuse_given_slices(spec: ClusterSpec, derived_from: str) -> None:
    """Every workload sizes its own slices: a user's `cluster.slices` would be silently replaced."""
    if spec.slices:
        raise UserError(
            "cluster.slices",
            f"{len(spec.slices)} slice(s)",
            f"are derived from {derived_from}",
            "remove cluster.slices (to add other pools, use a TpuCluster of your own)",
        )


def require_addons(spec: ClusterSpec, workload: str, *addons: str) -> ClusterSpec:
    """Turn on the add-ons a workload's pods need; one the user turned off is refused, not ignored."""
    chosen = spec.addons
    for name in addons:
        if name in chosen.model_fields_set and getattr(chosen, name) is False:
            alias = type(chosen).model_fields[name].alias or name
            raise UserError(
                f"cluster.addons.{alias}", False, f"is required by {workload}", "remove it or set it to true"
            )
    update = {name: True for name in addons}
    return spec.model_copy(update={"addons": chosen.model_copy(update=update)})


def plan_workload_cluster(
    spec: ClusterSpec, workload_slice: SliceSpec, keys: dict[str, str], derived_from: str
) -> ClusterPlan:
    """The cluster of a workload: the user's cluster settings plus the one slice the workload sized.

    `keys` maps the derived slice's fields to the workload's own config keys (`spot` -> `vllm.spot`),
    so a refusal names what the user wrote, never a `cluster.slices[0]` the user did not write.
    """
    refuse_given_slices(spec, derived_from)
    try:
        return plan_cluster(spec.model_copy(update={"slices": [workload_slice]}))
    except UserError as error:
        raise error.rekeyed({f"cluster.slices[0].{field}": key for field, key in keys.items()}) from None


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
