"""Capacity, decided: what GKE accepts for spot, reservations, flex-start and queued provisioning,
and the autoscaling limits each slice shape allows.

Flex-start and queued provisioning come with companions GKE documents (no reservation, no auto-repair,
location policy ANY, autoscaling from zero; queued provisioning is flex-start with queued
provisioning): the facts and their sources are in the catalogue (`catalog.tpu`, DWS_*); this module
refuses the combinations GKE documents as unsupported with one line. Pure: no provider SDK.
"""

from __future__ import annotations

import re

from tpu_stacks.catalog.tpu import DWS_MIN_NODES, FLEX_START_MAX_RUN_SECONDS, QUEUED_TPU_GENERATIONS, SliceShape
from tpu_stacks.cluster.spec import SliceSpec
from tpu_stacks.errors import UserError
from tpu_stacks.names import RESOURCE_NAME

DURATION = re.compile(r"^[1-9]\d*s$")


def check_capacity(key: str, spec: SliceSpec) -> None:
    """Capacity options GKE refuses together ([CTK] gke-node-pool preconditions, catalogue 5.4)."""
    if spec.max_run_duration is not None and not DURATION.match(spec.max_run_duration):
        raise UserError(
            f"{key}.maxRunDuration",
            spec.max_run_duration,
            "is not a duration GKE accepts",
            "write seconds, e.g. 86400s",
        )
    if spec.reservation is not None and not RESOURCE_NAME.matches(spec.reservation):
        raise UserError(
            f"{key}.reservation",
            spec.reservation,
            "is not a reservation name",
            "use the reservation's name: lowercase letters, digits and '-'",
        )
    if spec.flex_start and spec.spot:
        raise UserError(f"{key}.flexStart", True, "cannot be combined with spot", "choose flexStart or spot, not both")
    if spec.flex_start and spec.reservation:
        raise UserError(f"{key}.flexStart", True, "cannot use a reservation", "remove reservation or flexStart")
    if spec.queued_provisioning and spec.reservation:
        raise UserError(
            f"{key}.queuedProvisioning",
            True,
            "cannot use a reservation (affinity must be NO_RESERVATION)",
            "remove reservation or queuedProvisioning",
        )
    if spec.queued_provisioning and spec.spot:
        raise UserError(
            f"{key}.queuedProvisioning", True, "cannot be combined with spot", "choose queuedProvisioning or spot"
        )
    if spec.spot and spec.reservation:
        raise UserError(f"{key}.spot", True, "cannot consume a reservation", "remove reservation or spot")
    if spec.queued_provisioning and "flex_start" in spec.model_fields_set and not spec.flex_start:
        raise UserError(
            f"{key}.flexStart",
            False,
            "contradicts queuedProvisioning, which GKE runs as flex-start with queued provisioning",
            "remove flexStart (queued provisioning turns it on) or queuedProvisioning",
        )
    if (spec.flex_start or spec.queued_provisioning) and spec.max_run_duration is not None:
        seconds = int(spec.max_run_duration[:-1])
        if seconds > FLEX_START_MAX_RUN_SECONDS:
            raise UserError(
                f"{key}.maxRunDuration",
                spec.max_run_duration,
                "is longer than the 7 days a flex-start VM may run",
                f"use at most {FLEX_START_MAX_RUN_SECONDS}s",
            )


def check_queued_generation(key: str, spec: SliceSpec, shape: SliceShape) -> None:
    """Queued provisioning only where Google's tooling shows GKE building it (`QUEUED_TPU_GENERATIONS`)."""
    if spec.queued_provisioning and shape.generation not in QUEUED_TPU_GENERATIONS:
        raise UserError(
            f"{key}.queuedProvisioning",
            True,
            f"is not known to work for TPU {shape.generation} (GKE answered \"Flex start node pools don't "
            'support TPUs with queued provisioning", xpk#900)',
            f"use flexStart alone, or queued provisioning on TPU {' or '.join(QUEUED_TPU_GENERATIONS)}",
        )


def autoscaling_limits(key: str, spec: SliceSpec, shape: SliceShape) -> tuple[int | None, int | None, int | None]:
    """(fixed node count, autoscaling min, autoscaling max) that GKE accepts for this pool."""
    scales_from_zero = spec.flex_start or spec.queued_provisioning  # --num-nodes=0, autoscaling from 0
    if shape.multi_host:
        if spec.nodes not in (None, shape.nodes):
            raise UserError(
                f"{key}.nodes",
                spec.nodes,
                f"does not match the {shape.topology} slice on {shape.machine_type}",
                f"a multi-host pool always has {shape.nodes} nodes; add slices with count instead",
            )
        if spec.autoscaling is None and not scales_from_zero:
            return shape.nodes, None, None
        low = spec.autoscaling.min_nodes if spec.autoscaling else DWS_MIN_NODES
        high = spec.autoscaling.max_nodes if spec.autoscaling and spec.autoscaling.max_nodes else shape.nodes
        if low not in (0, shape.nodes) or high != shape.nodes:
            raise UserError(
                f"{key}.autoscaling",
                f"{low}..{high}",
                "is not a whole-slice range",
                f"a multi-host pool scales only between 0 and {shape.nodes} nodes (the whole slice)",
            )
        if scales_from_zero and low != DWS_MIN_NODES:
            raise UserError(
                f"{key}.autoscaling.minNodes",
                low,
                "must be 0 with flex-start or queued provisioning",
                "set minNodes: 0",
            )
        return None, low, high
    if spec.autoscaling is None and not scales_from_zero:
        return spec.nodes if spec.nodes is not None else 1, None, None
    low = spec.autoscaling.min_nodes if spec.autoscaling else DWS_MIN_NODES
    high = spec.autoscaling.max_nodes if spec.autoscaling and spec.autoscaling.max_nodes else spec.nodes or 1
    if low > high:
        raise UserError(
            f"{key}.autoscaling", f"{low}..{high}", "has minNodes above maxNodes", "set minNodes <= maxNodes"
        )
    if scales_from_zero and low != DWS_MIN_NODES:
        raise UserError(
            f"{key}.autoscaling.minNodes", low, "must be 0 with flex-start or queued provisioning", "set minNodes: 0"
        )
    return None, low, high
