"""A cluster, decided: node pools whose machine type, node count, placement and autoscaling come
from the TPU catalogue, before any resource exists.

`plan_cluster` checks a `ClusterSpec` (users' own slices, or the slices a workload derived from its
model) and returns the `ClusterPlan` (cluster.decided) that `TpuCluster` declares as is; the pools'
names are derived and checked in cluster.pool_names. Every invalid combination is refused with a
one-line `UserError` ("decide early, build late"). Pure: no provider SDK.
"""

from __future__ import annotations

from tpu_stacks.catalog.flex_start import QUEUED_NEEDS_FLEX_START
from tpu_stacks.catalog.locations import check_cpu_machine_type, check_location, check_tpu_zone
from tpu_stacks.catalog.tpu import SliceShape, generation, generation_of_machine_type, gke_version, slice_shape
from tpu_stacks.cluster.capacity import (
    autoscaling_limits,
    check_capacity,
    check_fallback,
    check_flex_start_pool,
    check_queued_generation,
    min_version_of,
    parse_capacity,
    single_kind,
)
from tpu_stacks.cluster.decided import ClusterPlan, PoolPlan, WorkloadPlan
from tpu_stacks.cluster.jobs_pool import plan_jobs_pool
from tpu_stacks.cluster.pool_names import check_pool_names, class_name, pool_name
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.gcp.universe import Universe, universe
from tpu_stacks.names import (
    GKE_NAME,
    check_node_service_account,
    check_zone_of,
    is_region,
    is_zone,
    region_of,
)

# The records live in cluster.decided; callers import them from here too, as they always have.
__all__ = [
    "ClusterPlan",
    "PoolPlan",
    "WorkloadPlan",
    "plan_cluster",
    "plan_workload_cluster",
    "refuse_given_slices",
    "require_addons",
]


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
    _check_kuberay(spec)
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
        compute_class = class_name(slice_spec, shape) if len(kinds) > 1 else None
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
                    name=pool_name(slice_spec, shape, replica),
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
    check_pool_names(spec, pools)
    _check_versions(spec, shapes)
    jobs_pool = plan_jobs_pool(spec, node_locations, beyond)
    beyond_catalogue = _check_catalogue(spec, chosen_universe, pool_zones, beyond)
    return ClusterPlan(
        spec=spec,
        universe=chosen_universe,
        regional=regional,
        node_locations=node_locations,
        pools=tuple(pools),
        slices=tuple(shapes),
        beyond_catalogue=beyond_catalogue,
        jobs_pool=jobs_pool,
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


def require_ray_operator(spec: ClusterSpec, workload: str) -> ClusterSpec:
    """A Ray workload's KubeRay: GKE's Ray add-on, turned on here, unless `cluster.kuberay` names the namespace of one
    the user installed (then the add-on stays off: `_plan_cluster` refuses both at once)."""
    if spec.kuberay is not None:
        return spec
    addons = spec.addons
    if "ray_operator" in addons.model_fields_set and addons.ray_operator is False:
        raise UserError(
            "cluster.addons.rayOperator",
            False,
            f"leaves {workload} without a KubeRay operator",
            "remove it (GKE's Ray add-on is turned on), or name the namespace of the KubeRay you installed in "
            "cluster.kuberay.namespace",
        )
    return require_addons(spec, workload, "ray_operator")


def _check_kuberay(spec: ClusterSpec) -> None:
    """Two KubeRay operators would reconcile the same Ray objects, and the heads admit only one of them."""
    if spec.kuberay is not None and spec.addons.ray_operator:
        raise UserError(
            "cluster.addons.rayOperator",
            True,
            f"turns on GKE's Ray add-on beside the KubeRay you named in cluster.kuberay (namespace "
            f"{spec.kuberay.namespace}): two operators would reconcile the same Ray objects",
            "remove rayOperator to keep your KubeRay, or remove cluster.kuberay to use GKE's",
        )


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
