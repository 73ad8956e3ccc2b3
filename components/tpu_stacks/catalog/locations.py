"""Where things exist: regions, zones, the zones that offer each TPU generation, and machine types.

A stack's location and machine types are checked against this catalogue in the spec/plan phase, before
any resource: a region or zone that does not exist, a zone that does not offer the slice's TPU
generation, a machine type that does not exist are refused in one line that says where the list comes
from. Every list names its source and the date it was read. The catalogue is a snapshot: a zone newer
than it is accepted with `cluster.allowUncatalogued: true`, which the plan records (`Beyond`).

Facts kept elsewhere are derived, never repeated: TPU machine types and generations come from
`catalog/tpu.py`; the S3NS universe's region and zones from `gcp/universe.py` (its REGIONS source).
Pure: no provider SDK (the policy pack imports it too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.tpu import GENERATIONS, generation_of_machine_type
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import GKE_DIFFERENCES as S3NS_GKE
from tpu_stacks.gcp.universe import REGIONS as S3NS_REGIONS
from tpu_stacks.gcp.universe import UNIVERSES, Source, Universe, universe
from tpu_stacks.names import is_zone, is_zone_of, region_of

READ = "2026-11-23"
OVERRIDE_KEY = "cluster.allowUncatalogued"
"""The explicit override for a region, zone or machine type newer than this catalogue."""

# -- sources ----------------------------------------------------------------------------------------

COMPUTE_REGIONS = Source(
    title="Compute Engine: Regions and zones (Available regions and zones)",
    url="https://docs.cloud.google.com/compute/docs/regions-zones",
    checked=READ,
)
"""The region/zone table, read through a public transcription of it (one array of every zone, citing
this page); the page's own stored excerpts agree where they show it (us-central1 a, b, c, f;
europe-west1 b, c, d)."""
TPU_ZONES = Source(
    title="TPU regions and zones",
    url="https://docs.cloud.google.com/tpu/docs/regions-zones",
    checked=READ,
)
"""North America: TPU7x us-central1-ai1a, us-central1-c; v6e us-central1-b, us-east1-d, us-east5-a,
us-east5-b, us-south1-ai1b (the `types-zones` edition of the page); v5p us-central1-a, us-east5-a; v5e
us-central1-a, us-south1-a, us-west1-c, us-west4-a; v4 us-central2-b. Europe: v6e europe-west4-a
(cloud.google.com/tpu/docs/regions). The page's other European and Asian rows were not readable here."""
TPU_ZONES_SINGLE_TENANT = Source(
    title="TPU-Regionen und -Zonen ([D-ZONES], German edition)",
    url="https://cloud-dot-devsite-v2-prod.appspot.com/tpu/docs/types-zones?hl=de",
    checked=READ,
)
"""Zones listed as single-tenant ("Einzelmandant"): capacity by reservation. v6e us-east5-c, us-east4-a,
us-east4-b, us-west1-c; v5p us-east5-b, us-east5-c, us-south1-a; v5e us-east5-a, us-east5-b, us-east5-c."""
CTK_V6E = Source(
    title="GoogleCloudPlatform/cluster-toolkit examples/gke-tpu-v6e (daily test zone) [CTK]",
    url="https://github.com/GoogleCloudPlatform/cluster-toolkit/tree/10470803/examples/gke-tpu-v6e",
    checked=READ,
)
"""Google's own toolkit tests TPU v6e node pools in asia-northeast1-b ([CTK])."""
GENERAL_PURPOSE = Source(
    title="Compute Engine: General-purpose machine family",
    url="https://docs.cloud.google.com/compute/docs/general-purpose-machines",
    checked=READ,
)
"""Predefined sizes of the E2, N1, N2, N2D, N4, C3 and C3D series (as a public transcription lists them)."""
CUSTOM_MACHINES = Source(
    title="Compute Engine: Create a VM with a custom machine type",
    url="https://docs.cloud.google.com/compute/docs/instances/creating-instance-with-custom-machine-type",
    checked=READ,
)
"""Custom types are written `SERIES-custom-VCPUS-MEMORY_MB` (`custom-VCPUS-MEMORY_MB` for N1), with
`-ext` for extended memory; E2, N1, N2, N2D and N4 offer them."""


class Offer(BaseModel):
    """Zones where one TPU generation can be created, as one source lists them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    generation: str
    zones: tuple[str, ...]
    source: Source
    note: str = ""


class UniverseLocations(BaseModel):
    """One universe's regions, zones and TPU offers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    universe: str
    zones: dict[str, tuple[str, ...]]
    """Region -> its zones."""
    zones_source: Source
    tpu_offers: tuple[Offer, ...] | None
    """None: the universe publishes no TPU zone list (its own limits say so, see gcp/universe.py)."""
    tpu_source: Source | None = None
    """Where a universe without TPU offers says so."""

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(self.zones)

    @property
    def all_zones(self) -> tuple[str, ...]:
        return tuple(zone for zones in self.zones.values() for zone in zones)

    def offering(self, gen: str) -> tuple[str, ...] | None:
        """The zones that offer `gen` (None when the universe publishes no TPU zones)."""
        if self.tpu_offers is None:
            return None
        return tuple(sorted({z for offer in self.tpu_offers if offer.generation == gen for z in offer.zones}))

    def sources_for(self, gen: str) -> list[Source]:
        return [offer.source for offer in self.tpu_offers or () if offer.generation == gen]


def _zones(table: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """`{"us-central1": "abcf"}` -> `{"us-central1": ("us-central1-a", ...)}`; AI zones are written whole."""
    result: dict[str, tuple[str, ...]] = {}
    for region, suffixes in table.items():
        result[region] = tuple(f"{region}-{suffix}" for suffix in suffixes.split())
    return result


# Compute Engine regions and the suffixes of their zones (COMPUTE_REGIONS), plus the AI zones and the
# TPU-only region us-central2 that the TPU page names (TPU_ZONES): us-central1-ai1a, us-south1-ai1b,
# us-central2-b (the one zone of us-central2 a source names).
GOOGLE_ZONES = _zones(
    {
        "africa-south1": "a b c",
        "asia-east1": "a b c",
        "asia-east2": "a b c",
        "asia-northeast1": "a b c",
        "asia-northeast2": "a b c",
        "asia-northeast3": "a b c",
        "asia-south1": "a b c",
        "asia-south2": "a b c",
        "asia-southeast1": "a b c",
        "asia-southeast2": "a b c",
        "australia-southeast1": "a b c",
        "australia-southeast2": "a b c",
        "europe-central2": "a b c",
        "europe-north1": "a b c",
        "europe-north2": "a b c",
        "europe-southwest1": "a b c",
        "europe-west1": "b c d",
        "europe-west2": "a b c",
        "europe-west3": "a b c",
        "europe-west4": "a b c",
        "europe-west6": "a b c",
        "europe-west8": "a b c",
        "europe-west9": "a b c",
        "europe-west10": "a b c",
        "europe-west12": "a b c",
        "me-central1": "a b c",
        "me-central2": "a b c",
        "me-west1": "a b c",
        "northamerica-northeast1": "a b c",
        "northamerica-northeast2": "a b c",
        "northamerica-south1": "a b c",
        "southamerica-east1": "a b c",
        "southamerica-west1": "a b c",
        "us-central1": "a b c f ai1a",
        "us-central2": "b",
        "us-east1": "b c d",
        "us-east4": "a b c",
        "us-east5": "a b c",
        "us-south1": "a b c ai1b",
        "us-west1": "a b c",
        "us-west2": "a b c",
        "us-west3": "a b c",
        "us-west4": "a b c",
    }
)

GOOGLE_TPU_OFFERS: tuple[Offer, ...] = (
    Offer(generation="tpu7x", zones=("us-central1-ai1a", "us-central1-c"), source=TPU_ZONES),
    Offer(
        generation="v6e",
        zones=("us-central1-b", "us-east1-d", "us-east5-a", "us-east5-b", "us-south1-ai1b", "europe-west4-a"),
        source=TPU_ZONES,
    ),
    Offer(
        generation="v6e",
        zones=("us-east5-c", "us-east4-a", "us-east4-b", "us-west1-c"),
        source=TPU_ZONES_SINGLE_TENANT,
        note="single-tenant",
    ),
    Offer(generation="v6e", zones=("asia-northeast1-b",), source=CTK_V6E, note="Google's toolkit tests v6e here"),
    Offer(generation="v5p", zones=("us-central1-a", "us-east5-a"), source=TPU_ZONES),
    Offer(
        generation="v5p",
        zones=("us-east5-b", "us-east5-c", "us-south1-a"),
        source=TPU_ZONES_SINGLE_TENANT,
        note="single-tenant",
    ),
    Offer(generation="v5e", zones=("us-central1-a", "us-south1-a", "us-west1-c", "us-west4-a"), source=TPU_ZONES),
    Offer(
        generation="v5e",
        zones=("us-east5-a", "us-east5-b", "us-east5-c"),
        source=TPU_ZONES_SINGLE_TENANT,
        note="single-tenant",
    ),
    Offer(generation="v4", zones=("us-central2-b",), source=TPU_ZONES),
)


def _s3ns() -> UniverseLocations:
    """S3NS's one region and its zones, as gcp/universe.py records them (one source of truth). S3NS lists
    no TPU machine type (its machine-series limit, an advisory at preview): no TPU zone list."""
    s3ns = universe("s3ns")
    return UniverseLocations(
        universe=s3ns.name,
        zones={region: tuple(z for z in s3ns.zones if is_zone_of(z, region)) for region in s3ns.regions},
        zones_source=S3NS_REGIONS,
        tpu_offers=None,
        tpu_source=S3NS_GKE,
    )


CATALOGUE: dict[str, UniverseLocations] = {
    "google": UniverseLocations(
        universe="google", zones=GOOGLE_ZONES, zones_source=COMPUTE_REGIONS, tpu_offers=GOOGLE_TPU_OFFERS
    ),
    "s3ns": _s3ns(),
}
assert set(CATALOGUE) == {u.name for u in UNIVERSES}, "every universe needs a location catalogue"


def locations_of(chosen: Universe | str) -> UniverseLocations:
    return CATALOGUE[chosen if isinstance(chosen, str) else chosen.name]


# -- nearest first --------------------------------------------------------------------------------


def _area(location: str) -> str:
    """`us-central1-b` -> `us`, `europe-west4` -> `europe`: the continent part of the name."""
    return location.split("-", 1)[0]


def nearest(location: str, candidates: Iterable[str]) -> list[str]:
    """Candidates ordered nearest first by name: same region, then same area (`us-`, `europe-`), then
    the rest, alphabetically within each group (names are all the catalogue knows of distance)."""
    region = region_of(location)
    return sorted(set(candidates), key=lambda zone: (region_of(zone) != region, _area(zone) != _area(location), zone))


def _shown(zones: list[str], limit: int = 6) -> str:
    return ", ".join(zones[:limit]) + (f" (and {len(zones) - limit} more)" if len(zones) > limit else "")


def _override_fix(allow_key: str) -> str:
    """`allow_key` is a config key (`cluster.allowUncatalogued`) or, for the pack, a whole phrase."""
    action = allow_key if " " in allow_key else f"set {allow_key}: true"
    return f"or {action} for one newer than the catalogue"


def _cited(sources: list[Source]) -> str:
    """The first source in full, the others counted: one line stays readable."""
    first, others = sources[0], len(dict.fromkeys(sources)) - 1
    more = f" and {others} more in catalog/locations.py" if others else ""
    return f"{first.title} <{first.url}>, read {first.checked}{more}"


# -- checks -----------------------------------------------------------------------------------------


def check_location(
    chosen: Universe, location: str, key: str, allow: bool = False, allow_key: str = OVERRIDE_KEY
) -> str | None:
    """Refuse a region or zone that the universe's catalogue does not list, in one line naming `key`.
    With `allow`, return the line that records it instead (None when the location is listed)."""
    catalogue = locations_of(chosen)
    region = region_of(location)
    if region not in catalogue.zones:
        where = f"is in {region}, which is not a region" if is_zone(location) else "is not a region"
        problem = f"{where} of {chosen.title or chosen.name} (source: {catalogue.zones_source.cite()})"
        choices = nearest(location, catalogue.regions)
    elif is_zone(location) and location not in catalogue.zones[region]:
        problem = f"is not a zone of {region} (source: {catalogue.zones_source.cite()})"
        choices = list(catalogue.zones[region])
    else:
        return None
    if allow:
        return f"{key}: {location!r} {problem}; accepted because {allow_key} is true"
    raise UserError(key, location, problem, f"use one of {_shown(choices)}, {_override_fix(allow_key)}")


def check_tpu_zone(
    chosen: Universe, zone: str, gen: str, key: str, allow: bool = False, allow_key: str = OVERRIDE_KEY
) -> str | None:
    """Refuse a zone (or, for a region, a region with no such zone) that does not offer TPU `gen`: one
    line naming `key`, the zones that do (nearest first) and the sources. None when offered, or when the
    universe publishes no TPU zones (its own advisory says so); with `allow`, the line that records it."""
    catalogue = locations_of(chosen)
    offered = catalogue.offering(gen)
    if offered is None:
        return None
    if is_zone(zone):
        if zone in offered:
            return None
        problem = f"does not offer TPU {gen}"
    else:
        if any(is_zone_of(z, zone) for z in offered):
            return None
        problem = f"has no zone that offers TPU {gen}"
    cited = _cited(catalogue.sources_for(gen))
    if allow:
        return f"{key}: {zone!r} {problem} in the catalogue ({cited}); accepted because {allow_key} is true"
    choices = nearest(zone, offered)
    raise UserError(key, zone, f"{problem} (source: {cited})", f"use {_shown(choices)}, {_override_fix(allow_key)}")


# -- machine types ----------------------------------------------------------------------------------


class MachineSeries(BaseModel):
    """A Compute Engine series: its predefined types are `SERIES-KIND-VCPUS` for the sizes listed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    sizes: dict[str, tuple[int, ...]]
    """Kind (`standard`, `highmem`, `highcpu`) -> vCPU counts."""
    named: tuple[str, ...] = ()
    """Types outside the KIND-VCPUS rule (E2's shared-core e2-micro, e2-small, e2-medium)."""
    custom: bool = False
    source: Source = GENERAL_PURPOSE

    def types(self) -> list[str]:
        built = [f"{self.name}-{kind}-{vcpus}" for kind, counts in self.sizes.items() for vcpus in counts]
        return built + list(self.named)


_N2 = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
CPU_SERIES: tuple[MachineSeries, ...] = (
    MachineSeries(
        name="e2",
        sizes={"standard": (2, 4, 8, 16, 32), "highcpu": (2, 4, 8, 16, 32), "highmem": (2, 4, 8, 16)},
        named=("e2-micro", "e2-small", "e2-medium"),
        custom=True,
    ),
    MachineSeries(name="n1", sizes={"standard": (1, 2, 4, 8, 16, 32, 64, 96)}, custom=True),
    MachineSeries(
        name="n2",
        sizes={"standard": _N2, "highcpu": (2, 4, 8, 16, 32, 48, 64, 80, 96), "highmem": _N2},
        custom=True,
    ),
    MachineSeries(
        name="n2d",
        sizes={
            "standard": (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224),
            "highcpu": (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224),
            "highmem": (2, 4, 8, 16, 32, 48, 64, 80, 96),
        },
        custom=True,
    ),
    MachineSeries(
        name="n4",
        sizes={kind: (2, 4, 8, 16, 32, 48, 64, 80) for kind in ("standard", "highcpu", "highmem")},
        custom=True,
    ),
    MachineSeries(name="c3", sizes={kind: (4, 8, 22, 44, 88, 176) for kind in ("standard", "highcpu", "highmem")}),
    MachineSeries(
        name="c3d", sizes={kind: (4, 8, 16, 30, 60, 90, 180, 360) for kind in ("standard", "highcpu", "highmem")}
    ),
)
CUSTOM_TYPE = re.compile(r"^(?:(?P<series>[a-z0-9]+)-)?custom-(?P<vcpus>[1-9]\d*)-(?P<memory>[1-9]\d*)(?:-ext)?$")
"""`e2-custom-4-8192`, `custom-4-15360` (N1), `n2-custom-8-65536-ext` (CUSTOM_MACHINES)."""


def cpu_machine_types() -> list[str]:
    return [name for series in CPU_SERIES for name in series.types()]


def tpu_machine_types() -> list[str]:
    """Every TPU machine type, read from catalog/tpu.py (never listed twice)."""
    return [machine.name for gen in GENERATIONS for machine in gen.machine_types]


def _custom_ok(name: str) -> bool:
    match = CUSTOM_TYPE.match(name)
    if not match:
        return False
    series = match.group("series") or "n1"
    return any(s.name == series and s.custom for s in CPU_SERIES)


def check_cpu_machine_type(name: str, key: str, allow: bool = False, allow_key: str = OVERRIDE_KEY) -> str | None:
    """Refuse a CPU machine type that is not in the catalogue (a TPU type is refused by its caller, which
    knows why it does not belong). Sizes that do not exist (`e2-standard-3`) and unknown series alike."""
    if name in cpu_machine_types() or _custom_ok(name):
        return None
    series = name.split("-", 1)[0]
    known = next((s for s in CPU_SERIES if s.name == series), None)
    if known is not None:
        problem = f"is not a machine type of the {series.upper()} series (source: {known.source.cite()})"
        choices = [t for t in known.types() if t.startswith(name.rsplit("-", 1)[0])] or known.types()
    else:
        problem = f"is not a machine type in the catalogue (series known: {', '.join(s.name for s in CPU_SERIES)})"
        choices = ["e2-standard-4", "n2-standard-4", "n1-standard-16"]
    if allow:
        return f"{key}: {name!r} {problem}; accepted because {allow_key} is true"
    raise UserError(key, name, problem, f"use e.g. {_shown(choices)}, {_override_fix(allow_key)}")


def is_tpu_machine_type(name: str) -> bool:
    return generation_of_machine_type(name) is not None


def universe_of_location(location: str) -> Universe:
    """The universe whose catalogue lists the location's region (Google Cloud when none does): the
    policy pack sees only a location, never the provider's universe."""
    region = region_of(location)
    return next((u for u in UNIVERSES if region in CATALOGUE[u.name].zones), universe("google"))


def generation_names_offered(chosen: Universe | str, zone: str) -> list[str]:
    """The TPU generations a zone offers (for messages and the policy pack)."""
    catalogue = locations_of(chosen)
    return [gen.name for gen in GENERATIONS if zone in (catalogue.offering(gen.name) or ())]
