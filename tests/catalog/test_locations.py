"""The location catalogue (catalog/locations.py): every list cites a source, generations and TPU machine
types come from catalog/tpu.py, every shipped stack's zone offers its generation; and the project and
universe rules that go with it (names.PROJECT_ID / PROJECT_NUMBER, universe.resolve)."""

import re
from pathlib import Path

import pytest
import yaml

from tpu_stacks.catalog import locations
from tpu_stacks.catalog.tpu import GENERATIONS, generation, generation_names
from tpu_stacks.cluster.spec import SystemPoolSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import resolve, universe
from tpu_stacks.names import PROJECT_ID, PROJECT_NUMBER, is_region, is_zone, region_of
from tpu_stacks.raytrain.plan import SYSTEM_POOL as RAY_SYSTEM_POOL

ROOT = Path(__file__).resolve().parents[2]
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
GOOGLE, S3NS = universe("google"), universe("s3ns")


def refusal(action) -> str:
    with pytest.raises(UserError) as caught:
        action()
    return str(caught.value)


# -- sources -----------------------------------------------------------------------------------------


def test_every_list_cites_a_source_with_an_address_and_a_date():
    for catalogue in locations.CATALOGUE.values():
        sources = [catalogue.zones_source, *(offer.source for offer in catalogue.tpu_offers or ())]
        sources += [catalogue.tpu_source] if catalogue.tpu_offers is None else []
        for source in sources:
            assert source is not None and source.title and DATE.match(source.checked)
            assert source.url.startswith("https://"), source
    for series in locations.CPU_SERIES:
        assert series.source.url.startswith("https://") and DATE.match(series.source.checked)


def test_every_universe_has_a_catalogue_and_s3ns_is_read_from_universe_py():
    assert set(locations.CATALOGUE) == {"google", "s3ns"}
    s3ns = locations.locations_of(S3NS)
    assert s3ns.regions == S3NS.regions == ("u-france-east1",)
    assert s3ns.all_zones == S3NS.zones == ("u-france-east1-a", "u-france-east1-b", "u-france-east1-c")
    assert s3ns.tpu_offers is None  # S3NS lists no TPU machine type: no zone list, an advisory instead


# -- TPU zones ---------------------------------------------------------------------------------------


def test_offers_name_generations_of_catalog_tpu_and_zones_of_the_region_table():
    google = locations.locations_of(GOOGLE)
    for offer in google.tpu_offers:
        assert offer.generation in generation_names()
        for zone in offer.zones:
            assert is_zone(zone) and zone in google.zones[region_of(zone)], zone
    assert all(google.offering(name) for name in generation_names()), "every generation is offered somewhere"


def test_zones_as_googles_page_lists_them():
    # Typed from "TPU regions and zones" (docs.cloud.google.com/tpu/docs/regions-zones, North America).
    google = locations.locations_of(GOOGLE)
    assert {"us-central1-b", "us-east1-d", "us-east5-a", "us-east5-b", "europe-west4-a"} <= set(google.offering("v6e"))
    assert {"us-central1-a", "us-south1-a", "us-west1-c", "us-west4-a"} <= set(google.offering("v5e"))
    assert {"us-central1-a", "us-east5-a"} <= set(google.offering("v5p"))
    assert google.offering("v4") == ("us-central2-b",)
    assert set(google.offering("tpu7x")) == {"us-central1-c", "us-central1-ai1a"}
    assert "us-central1-a" not in google.offering("v6e") and "us-central1-b" not in google.offering("v5e")


def test_region_table_has_the_zones_google_documents():
    google = locations.locations_of(GOOGLE)
    assert google.zones["us-central1"][:4] == ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")
    assert google.zones["europe-west1"] == ("europe-west1-b", "europe-west1-c", "europe-west1-d")
    assert google.zones["us-east1"] == ("us-east1-b", "us-east1-c", "us-east1-d")
    assert all(is_region(region) for region in google.regions)
    assert len(google.regions) == 43


def test_nearest_puts_the_same_region_then_the_same_area_first():
    assert locations.nearest("us-central1-a", ["europe-west4-a", "us-east1-d", "us-central1-b"]) == [
        "us-central1-b",
        "us-east1-d",
        "europe-west4-a",
    ]
    assert locations.nearest("europe-west1-b", ["us-central1-b", "europe-west4-a"])[0] == "europe-west4-a"


def test_refusal_names_the_key_the_zones_that_offer_it_and_the_source():
    message = refusal(lambda: locations.check_tpu_zone(GOOGLE, "us-west4-a", "v6e", "vllm.zone"))
    assert message.startswith("vllm.zone: 'us-west4-a' does not offer TPU v6e (source: TPU regions and zones")
    assert "<https://docs.cloud.google.com/tpu/docs/regions-zones>, read 2026-11-23" in message
    assert "; use us-central1-b, us-east1-d" in message  # nearest: same area (us-) first, by name
    assert "or set cluster.allowUncatalogued: true" in message and "\n" not in message


def test_a_region_passes_when_one_of_its_zones_offers_the_generation():
    assert locations.check_tpu_zone(GOOGLE, "us-central1", "tpu7x", "cluster.location") is None
    message = refusal(lambda: locations.check_tpu_zone(GOOGLE, "europe-west1", "v5e", "cluster.location"))
    assert "'europe-west1' has no zone that offers TPU v5e" in message


def test_the_override_returns_a_record_instead_of_refusing():
    line = locations.check_tpu_zone(GOOGLE, "us-west4-a", "v6e", "cluster.location", allow=True)
    assert line.startswith("cluster.location: 'us-west4-a' does not offer TPU v6e in the catalogue")
    assert line.endswith("accepted because cluster.allowUncatalogued is true")


def test_unknown_regions_and_zones_are_refused_with_choices():
    message = refusal(lambda: locations.check_location(GOOGLE, "us-central9-a", "gcp:zone"))
    assert message.startswith(
        "gcp:zone: 'us-central9-a' is in us-central9, which is not a region of Google Cloud (source:"
    )
    assert "use one of us-central1" in message
    message = refusal(lambda: locations.check_location(GOOGLE, "us-central1-d", "cluster.location"))
    assert "is not a zone of us-central1" in message and "us-central1-a, us-central1-b" in message
    assert locations.check_location(GOOGLE, "us-central1-f", "cluster.location") is None


# -- shipped stacks ----------------------------------------------------------------------------------


def _stack_zones():
    """(stack, zone or region, generation) as each shipped stack file writes them (not from the plan)."""
    found = []
    for path in sorted(ROOT.glob("Pulumi.*.yaml")):
        config = yaml.safe_load(path.read_text())["config"]
        cluster = config["tpu-stacks:cluster"]
        scenario = config.get("tpu-stacks:scenario", "cluster")
        if scenario == "cluster":
            pairs = [(s.get("zone") or cluster["location"], s["generation"]) for s in cluster["slices"]]
        else:
            section = config[f"tpu-stacks:{scenario}"]
            pairs = [(section.get("zone") or cluster["location"], section["tpuGeneration"])]
        domain = config.get("gcp:universeDomain")
        found += [(path.name, domain, zone, generation(gen).name) for zone, gen in pairs]
    return found


@pytest.mark.parametrize("stack,domain,zone,gen", _stack_zones())
def test_every_shipped_stacks_zone_offers_its_generation(stack, domain, zone, gen):
    chosen = universe(domain or "google")
    offered = locations.locations_of(chosen).offering(gen)
    if offered is None:  # S3NS: no TPU zone list; its machine-series advisory says so (docs/sovereign.md)
        assert stack == "Pulumi.saxml-s3ns.yaml"
        assert any("no TPU machine type is listed" in limit.says for limit in chosen.limits)
        return
    assert zone in offered if is_zone(zone) else any(region_of(z) == zone for z in offered), (stack, zone, gen)


# -- machine types -----------------------------------------------------------------------------------


def test_tpu_machine_types_are_read_from_catalog_tpu():
    assert locations.tpu_machine_types() == [m.name for g in GENERATIONS for m in g.machine_types]
    assert "ct6e-standard-8t" in locations.tpu_machine_types()
    assert all(locations.is_tpu_machine_type(name) for name in locations.tpu_machine_types())


def test_cpu_machine_types_the_project_uses_are_in_the_catalogue():
    for name in (SystemPoolSpec().machine_type, RAY_SYSTEM_POOL.machine_type, "e2-standard-4", "n1-standard-16"):
        assert locations.check_cpu_machine_type(name, "k") is None
    assert not set(locations.cpu_machine_types()) & set(locations.tpu_machine_types())


@pytest.mark.parametrize("name", ["e2-custom-4-8192", "custom-4-15360", "n2-custom-8-65536-ext", "e2-micro"])
def test_custom_and_shared_core_types_follow_the_documented_rule(name):
    assert locations.check_cpu_machine_type(name, "k") is None


@pytest.mark.parametrize(
    "name,problem",
    [
        ("e2-standard-3", "is not a machine type of the E2 series"),
        ("n1-standard-12", "is not a machine type of the N1 series"),
        ("x9-standard-4", "is not a machine type in the catalogue"),
        ("c3-custom-4-8192", "is not a machine type of the C3 series"),  # C3 offers no custom types
        ("e2-standard", "is not a machine type of the E2 series"),
    ],
)
def test_machine_types_that_do_not_exist_are_refused(name, problem):
    message = refusal(lambda: locations.check_cpu_machine_type(name, "cluster.systemPool.machineType"))
    assert message.startswith(f"cluster.systemPool.machineType: {name!r} {problem}")
    assert "cluster.allowUncatalogued" in message


# -- projects and universes --------------------------------------------------------------------------


@pytest.mark.parametrize("project", ["my-proj", "a12345", "p" * 30, "tpu-stacks-2026"])
def test_project_ids_that_follow_the_rule(project):
    assert PROJECT_ID.matches(project) and GOOGLE.check_project(project) == project


@pytest.mark.parametrize("project", ["proj", "p" * 31, "1project", "my-proj-", "My-Proj", "my_proj", "my proj"])
def test_project_ids_that_do_not(project):
    assert not PROJECT_ID.matches(project)
    assert refusal(lambda: GOOGLE.check_project(project, "gcp:project")).startswith(f"gcp:project: {project!r}")


def test_prefixed_and_domain_scoped_ids_are_checked_after_the_prefix():
    assert S3NS.check_project("s3ns:my-tpu-project") == "my-tpu-project"
    assert GOOGLE.check_project("example.com:my-proj") == "example.com:my-proj"
    assert "is not a valid project id" in refusal(lambda: S3NS.check_project("s3ns:ab"))


@pytest.mark.parametrize("number,ok", [("123456789012", True), ("0123", False), ("12a4", False), ("", False)])
def test_project_numbers_are_digits(number, ok):
    assert PROJECT_NUMBER.matches(number) is ok


def test_universe_and_universe_domain_agree_or_are_refused():
    assert resolve(None, None) == "google" and resolve(None, "s3nsapis.fr") == "s3ns"
    assert resolve("s3ns", "s3nsapis.fr") == "s3ns" and resolve("google", "googleapis.com") == "google"
    message = refusal(lambda: resolve("google", "s3nsapis.fr"))
    assert message.startswith("cluster.universe: 'google' contradicts gcp:universeDomain 's3nsapis.fr'")
    message = refusal(lambda: resolve("s3ns", None))
    assert "needs gcp:universeDomain: s3nsapis.fr" in message
    message = refusal(lambda: resolve(None, "s3nsapis.com"))
    assert message.startswith("gcp:universeDomain: 's3nsapis.com' is not the API domain of a known universe")
