"""Rule 2: a TPU node pool has the exact shape GKE builds for its slice, and the capacity companions
GKE documents.

Users get node counts, placement and autoscaling limits wrong for multi-host slices, and GKE
only rejects them at create time, minutes in (cluster-toolkit#3817, xpk#825, vllm ci-infra#545):
a multi-host pool is one atomic slice of chips / chips-per-VM nodes, placed COMPACT in one zone
with the topology (tpu7x: a workload policy), scaling only between 0 and the whole slice.
A flex-start or queued-provisioning pool (any pool, TPU or not) needs GKE's companions: flex-start
on (queued provisioning is flex-start with queued provisioning), no reservation, no auto-repair,
autoscaling from 0 with location policy ANY; queued TPU pools only where GKE builds them (facts and
sources in `tpu_stacks.catalog.tpu`, DWS_*).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from tpu_policies.slices import PoolSlice, pool_slice, pools_of
from tpu_policies.values import UNKNOWN, as_dict, as_int, as_str, dig, is_true, plain
from tpu_stacks.catalog.flex_start import DWS_AUTO_REPAIR, DWS_LOCATION_POLICY, DWS_MIN_NODES, DWS_RESERVATION_AFFINITY
from tpu_stacks.catalog.tpu import QUEUED_TPU_GENERATIONS
from tpu_stacks.names import is_region

PER_ZONE = ("minNodeCount", "maxNodeCount")
TOTAL = ("totalMinNodeCount", "totalMaxNodeCount")


def _autoscaling_limits(name: str, autoscaling: dict[str, Any]) -> list[str]:
    """Limits GKE accepts on any pool: one kind of limit, min not above max."""
    problems = []
    per_zone = [k for k in PER_ZONE if autoscaling.get(k) is not None]
    total = [k for k in TOTAL if autoscaling.get(k) is not None]
    if per_zone and total:
        problems.append(
            f"node pool {name}: autoscaling mixes per-zone ({', '.join(per_zone)}) and total "
            f"({', '.join(total)}) limits, which GKE rejects; keep only one kind (total* for most pools)"
        )
    for low_key, high_key in (PER_ZONE, TOTAL):
        low, high = as_int(autoscaling.get(low_key)), as_int(autoscaling.get(high_key))
        if low is not None and high is not None and low > high:
            problems.append(f"node pool {name}: autoscaling {low_key} {low} is above {high_key} {high}; set min <= max")
    return problems


def _compact_zone(name: str, props: dict[str, Any]) -> list[str]:
    """COMPACT placement needs exactly one zone ([CTK] preconditions)."""
    locations = props.get("nodeLocations")
    if isinstance(locations, list) and len(locations) != 1:
        return [
            f"node pool {name}: COMPACT placement needs exactly one zone but nodeLocations has {len(locations)}; "
            "set nodeLocations to the one zone that has the TPU capacity"
        ]
    location = props.get("location")
    if locations is None and isinstance(location, str) and is_region(location):
        return [
            f"node pool {name}: COMPACT placement in regional location {location} without nodeLocations spans "
            "every zone of the cluster; set nodeLocations to one zone"
        ]
    return []


def _multi_host_size(pool: PoolSlice, props: dict[str, Any]) -> list[str]:
    """Fixed pools have exactly the slice's nodes; autoscaled ones scale 0 <-> the whole slice."""
    shape = pool.shape
    assert shape is not None
    nodes = shape.nodes
    why = (
        f"a {shape.topology} slice of {shape.machine_type} is {nodes} nodes"
        f" ({shape.chips} chips / {shape.chips_per_vm} per VM)"
    )
    autoscaling = as_dict(props.get("autoscaling"))
    count = props.get("nodeCount")
    if autoscaling:
        problems = []
        if count is not None:
            problems.append(f"node pool {pool.name}: nodeCount is set together with autoscaling; remove nodeCount")
        high = next(
            (autoscaling[k] for k in ("totalMaxNodeCount", "maxNodeCount") if autoscaling.get(k) is not None), None
        )
        low = next((autoscaling[k] for k in ("totalMinNodeCount", "minNodeCount") if autoscaling.get(k) is not None), 0)
        if high is None:
            problems.append(f"node pool {pool.name}: autoscaling has no maximum; {why}: set totalMaxNodeCount: {nodes}")
        elif as_int(high) is not None and as_int(high) != nodes:
            problems.append(
                f"node pool {pool.name}: autoscaling maximum is {as_int(high)} but {why}, and a multi-host "
                f"pool scales only between 0 and the whole slice: set the maximum to {nodes}"
            )
        if as_int(low) is not None and as_int(low) not in (0, nodes):
            problems.append(
                f"node pool {pool.name}: autoscaling minimum is {as_int(low)} but {why}: set it to 0 or {nodes}"
            )
        return problems
    effective = count if count is not None else props.get("initialNodeCount")
    if effective is None:
        return [f"node pool {pool.name}: no nodeCount; {why}: set nodeCount: {nodes}"]
    if effective is not UNKNOWN and as_int(effective) != nodes:
        return [
            f"node pool {pool.name}: has {as_int(effective)} nodes but {why}: set nodeCount: {nodes} "
            "(a multi-host pool is one atomic slice; for more capacity add more pools)"
        ]
    return []


def _capacity_companions(name: str, props: dict[str, Any], pool: PoolSlice | None) -> list[str]:
    """Flex-start and queued pools as GKE documents them (`--flex-start [--enable-queued-provisioning]
    --reservation-affinity=none --no-enable-autorepair --location-policy=ANY --num-nodes=0`)."""
    flex = is_true(dig(props, "nodeConfig", "flexStart"))
    queued = is_true(dig(props, "queuedProvisioning", "enabled"))
    if not (flex or queued):
        return []
    kind = "queued-provisioning" if queued else "flex-start"
    problems = []
    if queued and not flex:
        problems.append(
            f"node pool {name}: queuedProvisioning without nodeConfig.flexStart; GKE runs queued provisioning as "
            "flex-start with queued provisioning (--flex-start --enable-queued-provisioning): set flexStart: true"
        )
    auto_repair = dig(props, "management", "autoRepair")
    if auto_repair is not UNKNOWN and auto_repair is not DWS_AUTO_REPAIR:
        problems.append(
            f"node pool {name}: {kind} pool with auto-repair on (GKE's default); GKE requires "
            "--no-enable-autorepair: set management.autoRepair: false"
        )
    affinity = dig(props, "nodeConfig", "reservationAffinity", "consumeReservationType")
    if affinity is not UNKNOWN and affinity != DWS_RESERVATION_AFFINITY:
        problems.append(
            f"node pool {name}: {kind} pool consumes reservations ({affinity or 'GKE default'}); GKE requires "
            f"--reservation-affinity=none: set nodeConfig.reservationAffinity.consumeReservationType: "
            f"{DWS_RESERVATION_AFFINITY}"
        )
    autoscaling = props.get("autoscaling")
    if autoscaling is UNKNOWN:
        return problems
    autoscaling = as_dict(autoscaling)
    if not autoscaling or props.get("nodeCount") is not None:
        problems.append(
            f"node pool {name}: {kind} pool without autoscaling from {DWS_MIN_NODES} (a fixed nodeCount); GKE "
            f"provisions it through the autoscaler: remove nodeCount, set autoscaling with minimum {DWS_MIN_NODES}"
        )
    else:
        policy = autoscaling.get("locationPolicy")
        if policy is not UNKNOWN and policy != DWS_LOCATION_POLICY:
            problems.append(
                f"node pool {name}: {kind} pool with autoscaling locationPolicy {policy or 'BALANCED (default)'}; "
                f"GKE requires --location-policy=ANY: set autoscaling.locationPolicy: {DWS_LOCATION_POLICY}"
            )
        low = next((autoscaling[k] for k in ("totalMinNodeCount", "minNodeCount") if autoscaling.get(k) is not None), 0)
        if as_int(low) is not None and as_int(low) != DWS_MIN_NODES:
            problems.append(
                f"node pool {name}: {kind} pool scales from {as_int(low)} nodes; GKE provisions it from "
                f"{DWS_MIN_NODES}: set the autoscaling minimum to {DWS_MIN_NODES}"
            )
    if queued and pool is not None and pool.generation.name not in QUEUED_TPU_GENERATIONS:
        problems.append(
            f'node pool {name}: queued provisioning on TPU {pool.generation.name}, which GKE refused ("Flex start '
            "node pools don't support TPUs with queued provisioning\", xpk#900); use flex-start alone, or TPU "
            f"{' or '.join(QUEUED_TPU_GENERATIONS)}"
        )
    return problems


def check_pool(name: str, props: dict[str, Any]) -> list[str]:
    """Every shape problem of one node pool's inputs (empty when GKE would build it as meant)."""
    problems = _autoscaling_limits(name, as_dict(props.get("autoscaling")))
    pool = pool_slice(props, name)
    problems += _capacity_companions(name, props, pool)
    if pool is None:
        return problems
    placement = as_dict(props.get("placementPolicy"))
    placement_type = placement.get("type")
    if placement_type == "COMPACT":
        problems += _compact_zone(pool.name, props)
    if pool.error is not None:
        valid = ", ".join(s for s in pool.generation.topology_names[:12])
        return problems + [
            f"node pool {pool.name}: {pool.machine.name} with tpuTopology {pool.topology} is not a slice "
            f"GKE can build ({pool.error.problem}); {pool.error.fix or 'valid: ' + valid}"
        ]
    shape = pool.shape
    if shape is None:
        return problems
    if not shape.multi_host:
        if as_str(placement.get("tpuTopology")):
            problems.append(
                f"node pool {pool.name}: {shape.machine_type} at {shape.topology} is a single-host slice; "
                "GKE rejects tpuTopology on single-host pools (xpk#825): remove placementPolicy.tpuTopology"
            )
        return problems
    if shape.multi_host_placement == "workload-policy":
        if placement_type == "COMPACT":
            problems.append(
                f"node pool {pool.name}: GKE refuses COMPACT placement for {shape.machine_type} "
                '("Use workload policy instead", vllm-project/ci-infra#547): leave placementPolicy.type empty '
                "and set placementPolicy.policyName to a HIGH_THROUGHPUT workload policy"
            )
        policy_name = placement.get("policyName")
        if policy_name is not UNKNOWN and not as_str(policy_name):
            problems.append(
                f"node pool {pool.name}: multi-host {shape.generation} {shape.topology} needs a workload policy: "
                "create a gcp.compute.ResourcePolicy (workloadPolicy type HIGH_THROUGHPUT, acceleratorTopology "
                f"{shape.topology}) and set placementPolicy.policyName to it"
            )
    elif placement_type is not UNKNOWN and placement_type != "COMPACT":
        problems.append(
            f"node pool {pool.name}: multi-host {shape.topology} slice needs placementPolicy type COMPACT "
            f"with tpuTopology {shape.topology}"
        )
    return problems + _multi_host_size(pool, props)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    props = plain(args.props)
    for name, pool_props in pools_of(args.resource_type, props, args.name):
        for problem in check_pool(name, pool_props):
            report_violation(problem, None)


POLICY = ResourceValidationPolicy(
    name="tpu-node-pool-shape",
    description="TPU node pools form a valid slice: machine type and topology agree, node count = chips / chips "
    "per VM, COMPACT placement in one zone (tpu7x: a workload policy), autoscaling GKE accepts; flex-start and "
    "queued pools carry GKE's companions (flex-start, no reservation, no auto-repair, autoscaling from 0, ANY).",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
