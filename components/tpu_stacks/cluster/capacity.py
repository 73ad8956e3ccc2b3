"""Capacity, decided: what GKE accepts for spot, reservations, flex-start and queued provisioning,
and the autoscaling limits each slice shape allows.

Flex-start and queued provisioning come with companions GKE documents (no reservation, no auto-repair,
location policy ANY, autoscaling from zero; queued provisioning is flex-start with queued
provisioning): the facts and their sources are in the catalogue (`catalog.tpu`, DWS_*); this module
refuses the combinations GKE documents as unsupported with one line. A `capacity` list of one kind is
the same node pool; of several kinds, a ComputeClass GKE falls back across (`cluster.compute_class`), whose
unsupported combinations and minimum versions are refused here too. Pure: no provider SDK.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.capacity import (
    AUTO_CREATION_WITHOUT_NAP,
    CUSTOM_COMPUTE_CLASS,
    FLEX_START_TPU,
    FLEX_START_UNSUPPORTED,
    PLAIN_KINDS,
    KindName,
)
from tpu_stacks.catalog.flex_start import DWS_MIN_NODES, FLEX_START_MAX_RUN_SECONDS
from tpu_stacks.catalog.tpu import QUEUED_TPU_GENERATIONS, GkeVersion, SliceShape, gke_version
from tpu_stacks.cluster.spec import SliceSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.names import RESOURCE_NAME

DURATION = re.compile(r"^[1-9]\d*s$")
MIN_VERSION_KEY = "cluster.minVersion"


def min_version_of(text: str) -> GkeVersion:
    """`cluster.minVersion` parsed, or refused in one line under that key: the one parse every floor check
    (TPU generations, flex-start, ComputeClass fallback) reads, whichever of them meets the version first."""
    try:
        return gke_version(text)
    except UserError as error:
        raise error.under(MIN_VERSION_KEY) from None


def check_capacity(key: str, spec: SliceSpec) -> None:
    """Capacity options GKE refuses together ([CTK] gke-node-pool preconditions)."""
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


def check_flex_start_pool(key: str, spec: SliceSpec, shape: SliceShape, min_version: str | None) -> None:
    """A flex-start node pool (`flexStart: true` or `capacity: [flexStart]`) has the limits of a flexStart
    fallback priority: no TPU v4, and GKE's flex-start TPU floor when the user pins a version."""
    if not spec.flex_start:
        return
    if shape.generation in FLEX_START_UNSUPPORTED:
        raise UserError(
            f"{key}.flexStart",
            True,
            f'is not offered for TPU {shape.generation} (GKE: "TPU v3 and v4 are not supported")',
            "remove flexStart or use another generation",
        )
    if min_version is None:
        return  # an unpinned version is the channel's: the generation floors of the plan apply
    chosen = min_version_of(min_version)
    if chosen < FLEX_START_TPU.parsed:
        raise UserError(
            "cluster.minVersion",
            min_version,
            "is older than flex-start TPU node pools need",
            f"use {FLEX_START_TPU.version} or later (source: {FLEX_START_TPU.source})",
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


# -- capacity lists: one kind is a node pool of that kind, several a ComputeClass (catalog.capacity) --


class Capacity(BaseModel):
    """One entry of a `capacity` list: a kind GKE may provision the slice with."""

    model_config = ConfigDict(frozen=True)

    kind: KindName
    reservation: str | None = None
    """The specific reservation's name (kind `reservation`)."""

    def describe(self) -> str:
        return f"reservation {self.reservation}" if self.reservation else self.kind


def parse_capacity(key: str, raw: list[Any]) -> tuple[Capacity, ...]:
    """The user's list as kinds, in order; a misspelled or repeated kind is refused with one line."""
    if not raw:
        raise UserError(key, [], "is empty", "list at least one of spot, onDemand, flexStart, {reservation: NAME}")
    kinds: list[Capacity] = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        if isinstance(item, dict):
            if set(item) != {"reservation"}:
                extra = sorted(set(item) - {"reservation"})
                raise UserError(
                    f"{where}.{extra[0]}" if extra else where,
                    item.get(extra[0]) if extra else item,
                    "is not a setting of a reservation entry (only a specific reservation of the cluster's "
                    "project, the only affinity GKE takes for TPU rules)",
                    "write {reservation: NAME}",
                )
            name = item["reservation"]
            if not isinstance(name, str) or not RESOURCE_NAME.matches(name):
                raise UserError(
                    f"{where}.reservation",
                    name,
                    "is not a reservation name",
                    "use the reservation's name: lowercase letters, digits and '-'",
                )
            entry = Capacity(kind="reservation", reservation=name)
        elif isinstance(item, str) and item in PLAIN_KINDS:
            entry = Capacity(kind=PLAIN_KINDS[PLAIN_KINDS.index(item)])  # the catalogue's own value, as its type
        else:
            close = difflib.get_close_matches(str(item), [*PLAIN_KINDS, "reservation"], n=1)
            hint = "write {reservation: NAME}" if close == ["reservation"] else f"did you mean '{close[0]}'?"
            raise UserError(
                where,
                item,
                "is not a capacity kind",
                hint if close else "use spot, onDemand, flexStart or {reservation: NAME}",
            )
        if entry in kinds:
            raise UserError(where, entry.describe(), "is listed twice", "list each kind once, in the order to try")
        kinds.append(entry)
    return tuple(kinds)


def is_fallback(capacity: list[Any] | None) -> bool:
    """Several kinds: GKE creates the pools from a ComputeClass (workloads then leave sizing to it)."""
    return capacity is not None and len(capacity) > 1


def single_kind(key: str, spec: SliceSpec, kinds: tuple[Capacity, ...]) -> SliceSpec:
    """One kind is today's node pool: the slice with the matching capacity setting."""
    _refuse_flags(key, spec)
    only = kinds[0]
    update: dict[str, Any] = {
        "spot": only.kind == "spot",
        "reservation": only.reservation,
        "flex_start": only.kind == "flexStart",
    }
    return spec.model_copy(update=update)


def _refuse_flags(key: str, spec: SliceSpec) -> None:
    for field, alias in (("spot", "spot"), ("reservation", "reservation"), ("flex_start", "flexStart")):
        if getattr(spec, field):
            raise UserError(
                f"{key}.{alias}",
                getattr(spec, field),
                "cannot be combined with capacity",
                "list it in capacity instead",
            )
    if spec.queued_provisioning:
        raise UserError(
            f"{key}.queuedProvisioning",
            True,
            "cannot be combined with capacity (a ComputeClass does not queue ProvisioningRequests)",
            "remove queuedProvisioning or capacity",
        )


def check_fallback(
    key: str, spec: SliceSpec, shape: SliceShape, kinds: tuple[Capacity, ...], mode: str, min_version: str | None
) -> None:
    """Refuse what GKE documents as unsupported for a ComputeClass of this slice (catalog.capacity)."""
    _refuse_flags(key, spec)
    for field, alias in (("nodes", "nodes"), ("autoscaling", "autoscaling")):
        if getattr(spec, field) is not None:
            raise UserError(
                f"{key}.{alias}",
                getattr(spec, field),
                "cannot be set with several capacity kinds: GKE creates and sizes the ComputeClass's node pools",
                f"remove {alias} (the pods' replicas decide the nodes) or list one capacity kind",
            )
    if spec.threads_per_core is not None:
        raise UserError(
            f"{key}.threadsPerCore",
            spec.threads_per_core,
            "cannot be set with several capacity kinds: auto-created node pools do not configure SMT "
            "(GKE, About node pool auto-creation)",
            "remove threadsPerCore or list one capacity kind",
        )
    flex = next((i for i, kind in enumerate(kinds) if kind.kind == "flexStart"), None)
    if flex is not None and shape.generation in FLEX_START_UNSUPPORTED:
        raise UserError(
            f"{key}.capacity[{flex}]",
            "flexStart",
            f'is not offered for TPU {shape.generation} (GKE: "TPU v3 and v4 are not supported")',
            "remove flexStart or use another generation",
        )
    if flex is not None and spec.max_run_duration is not None and DURATION.match(spec.max_run_duration):
        if int(spec.max_run_duration[:-1]) > FLEX_START_MAX_RUN_SECONDS:
            raise UserError(
                f"{key}.maxRunDuration",
                spec.max_run_duration,
                "is longer than the 7 days a flex-start VM may run",
                f"use at most {FLEX_START_MAX_RUN_SECONDS}s",
            )
    needs = [CUSTOM_COMPUTE_CLASS]
    if mode == "standard":
        needs.append(AUTO_CREATION_WITHOUT_NAP)
    if flex is not None:
        needs.append(FLEX_START_TPU)
    floor = max(needs, key=lambda minimum: minimum.parsed.key)
    if min_version is None:
        raise UserError(
            "cluster.minVersion",
            MISSING,
            f"is required for a capacity fallback ({' -> '.join(k.describe() for k in kinds)}), which needs "
            f"GKE {floor.version}",
            f"set cluster.minVersion to {floor.version} or later (source: {floor.source})",
        )
    chosen = min_version_of(min_version)
    for minimum in needs:
        if chosen < minimum.parsed:
            raise UserError(
                "cluster.minVersion",
                min_version,
                f"is older than a ComputeClass with {' -> '.join(k.describe() for k in kinds)} needs",
                f"use {floor.version} or later (source: {minimum.source})",
            )
