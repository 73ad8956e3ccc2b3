"""A TPU node pool only where its zones offer its TPU generation, judged from the location catalogue.

GKE refuses a node pool whose machine type its zone does not have, after the cluster exists. Any
program's pools are read (a raw `gcp.container.NodePool` or a Cluster's inline `nodePools`, no
annotations): the machine type names the generation (`slices.pool_slice`), the zones are the pool's
`nodeLocations`, else its zonal `location`, else the cluster's (inline pools); a regional location
without zones is judged by whether any zone of the region offers the generation. Facts and sources come
from `tpu_stacks.catalog.locations`, the same catalogue the program's plan refuses with.

- `tpu-zone-offers-generation` (mandatory, configurable): a listed zone that does not offer the TPU.
  `allowedZones` accepts zones newer than the catalogue (the counterpart of `cluster.allowUncatalogued`).
- `tpu-zone-catalogued` (advisory): a zone the catalogue does not list, a universe that publishes no TPU
  zones (S3NS), or a location unknown at preview: the pool is not judged, and says so.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.slices import CLUSTER_TYPE, pool_slice, pools_of
from tpu_policies.values import UNKNOWN, as_list, plain
from tpu_stacks.catalog.locations import check_location, check_tpu_zone, locations_of, universe_of_location
from tpu_stacks.errors import UserError
from tpu_stacks.names import is_region, is_zone

OVERRIDE = "add the zone to this policy's allowedZones"


ALLOWED_ZONES = Setting(
    "allowedZones",
    [],
    "Zones accepted for any TPU generation: ones newer than the catalogue.",
)


def _zones(pool: dict[str, Any], cluster: dict[str, Any]) -> list[Any] | None:
    """Where the pool's nodes go: its nodeLocations, else a zonal location, else the cluster's (inline
    pools); a region alone when only a region is known; None when nothing is known."""
    for source in (pool, cluster):
        zones = source.get("nodeLocations")
        if zones is UNKNOWN:
            return [UNKNOWN]
        if as_list(zones):
            return as_list(zones)
        location = source.get("location")
        if location is UNKNOWN or isinstance(location, str):
            return [location]
    return None


def judge(name: str, pool: dict[str, Any], cluster: dict[str, Any], allowed: list[str]) -> tuple[list, list]:
    """(violations, advisories) of one pool's zones against its TPU generation."""
    tpu = pool_slice(pool, name)
    if tpu is None:
        return [], []
    gen, machine = tpu.generation.name, tpu.machine.name
    where = f"node pool {tpu.name} ({machine}, TPU {gen})"
    zones = _zones(pool, cluster)
    if not zones:
        return [], [f"{where}: no location or nodeLocations; its zone cannot be judged against TPU {gen}"]
    problems, notes = [], []
    for zone in zones:
        if zone is UNKNOWN or not isinstance(zone, str):
            notes.append(f"{where}: its zone is not known at preview; not judged against the TPU zone catalogue")
            continue
        if zone in allowed:
            continue
        chosen = universe_of_location(zone)
        catalogue = locations_of(chosen)
        if catalogue.offering(gen) is None:
            source = catalogue.tpu_source or catalogue.zones_source
            notes.append(
                f"{where}: {chosen.title or chosen.name} publishes no TPU zone list; {zone} not judged "
                f"(source: {source.cite()})"
            )
            continue
        if not (is_zone(zone) or is_region(zone)):
            notes.append(f"{where}: location {zone!r} is neither a zone nor a region; not judged")
            continue
        try:
            check_location(chosen, zone, "location", allow_key=OVERRIDE)
        except UserError as error:
            notes.append(f"{where}: {zone} {error.problem}; not judged against TPU {gen}; {error.fix}")
            continue
        try:
            check_tpu_zone(chosen, zone, gen, "zone", allow_key=OVERRIDE)
        except UserError as error:
            problems.append(f"{where}: {zone} {error.problem}; GKE would refuse the pool; {error.fix}")
    return problems, notes


def _each(args: ResourceValidationArgs) -> list[tuple[list, list]]:
    props = plain(args.props)
    cluster = props if args.resource_type == CLUSTER_TYPE else {}
    allowed = [str(zone) for zone in as_list(ALLOWED_ZONES.read(args))]
    return [judge(name, pool, cluster, allowed) for name, pool in pools_of(args.resource_type, props, args.name)]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    for problems, _ in _each(args):
        for problem in problems:
            report_violation(problem, None)


def _validate_catalogued(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    for _, notes in _each(args):
        for note in dict.fromkeys(notes):
            report_violation(note, None)


POLICY = ResourceValidationPolicy(
    name="tpu-zone-offers-generation",
    description="A TPU node pool's zones offer its TPU generation (the location catalogue, with sources: "
    "tpu_stacks.catalog.locations); GKE would refuse the pool after the cluster exists.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=config_schema(ALLOWED_ZONES),
)

CATALOGUED_POLICY = ResourceValidationPolicy(
    name="tpu-zone-catalogued",
    description="A TPU node pool whose zone the location catalogue does not list (or that is unknown at "
    "preview, or in a universe that publishes no TPU zones) is reported, never passed in silence.",
    validate=_validate_catalogued,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.LOW,
)
