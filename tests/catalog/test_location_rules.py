"""catalog/locations.py's refusal line at its edges: how many sources and choices it names."""

import pytest

from tpu_stacks.catalog import locations
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import universe

GOOGLE = universe("google")


def _refusal(zone: str, generation: str) -> str:
    with pytest.raises(UserError) as raised:
        locations.check_tpu_zone(GOOGLE, zone, generation, "vllm.zone")
    return str(raised.value)


def test_the_refusal_cites_the_generations_own_sources():
    """v6e's zones come from three lists (the TPU page, its single-tenant edition, Google's toolkit): the first cited
    in full, the other two counted; v4's from the TPU page alone."""
    assert locations.locations_of("google").sources_for("v6e") == [
        locations.TPU_ZONES,
        locations.TPU_ZONES_SINGLE_TENANT,
        locations.CTK_V6E,
    ]
    assert "read 2026-11-23 and 2 more in catalog/locations.py)" in _refusal("us-west4-a", "v6e")
    v4 = _refusal("us-west4-a", "v4")
    assert "read 2026-11-23); use us-central2-b, or set" in v4 and "more" not in v4


def test_the_refusal_shows_six_choices_and_counts_the_rest():
    """v6e is offered in 11 zones: six named, nearest first, and five counted, so the line stays one readable line."""
    offered = locations.locations_of("google").offering("v6e")
    assert len(offered) == 11
    shown = locations.nearest("us-west4-a", offered)[:6]
    assert f"use {', '.join(shown)} (and 5 more), or set" in _refusal("us-west4-a", "v6e")


def test_six_choices_are_all_shown_and_a_seventh_is_counted():
    zones = [f"us-east{n}-a" for n in range(1, 8)]
    assert locations._shown(zones[:6]) == ", ".join(zones[:6])
    assert locations._shown(zones) == ", ".join(zones[:6]) + " (and 1 more)"


def test_an_unknown_region_with_the_override_is_recorded_not_refused():
    line = locations.check_location(GOOGLE, "us-central9", "cluster.location", allow=True)
    assert line.startswith("cluster.location: 'us-central9' is not a region of ")
    assert line.endswith("; accepted because cluster.allowUncatalogued is true")
    assert locations.check_location(GOOGLE, "us-central1", "cluster.location", allow=True) is None


def test_a_wrong_size_is_offered_its_own_kind_and_an_unknown_kind_the_series():
    """`e2-standard-3` does not exist: the sizes of e2-standard are offered (GENERAL_PURPOSE's E2 table: 2, 4, 8, 16,
    32 vCPUs); `e2-mega-4` names no kind, so the series' types are, six shown."""
    with pytest.raises(UserError) as wrong_size:
        locations.check_cpu_machine_type("e2-standard-3", "cluster.jobsPool.machineType")
    assert "; use e.g. e2-standard-2, e2-standard-4, e2-standard-8, e2-standard-16, e2-standard-32, or set" in str(
        wrong_size.value
    )
    with pytest.raises(UserError) as wrong_kind:
        locations.check_cpu_machine_type("e2-mega-4", "cluster.jobsPool.machineType")
    assert (
        "; use e.g. e2-standard-2, e2-standard-4, e2-standard-8, e2-standard-16, e2-standard-32, e2-highcpu-2 (and"
        in (str(wrong_kind.value))
    )
    line = locations.check_cpu_machine_type("e2-standard-3", "cluster.jobsPool.machineType", allow=True)
    assert line.startswith("cluster.jobsPool.machineType: 'e2-standard-3' is not a machine type of the E2 series")
    assert line.endswith("; accepted because cluster.allowUncatalogued is true")
    assert locations._custom_ok("e2-standard-4") is False


def test_a_location_belongs_to_the_universe_that_lists_its_region():
    """S3NS lists one region, u-france-east1 (gcp/universe.py); any other location is Google Cloud's."""
    assert locations.universe_of_location("u-france-east1-a").name == "s3ns"
    assert locations.universe_of_location("us-central1-a").name == "google"
    assert locations.universe_of_location("mars-north1").name == "google"


def test_the_generations_a_zone_offers():
    """The TPU page (TPU_ZONES): us-central1-a offers v5p and v5e; us-east5-a v6e and v5p, and v5e single-tenant."""
    assert set(locations.generation_names_offered("google", "us-central1-a")) == {"v5e", "v5p"}
    assert set(locations.generation_names_offered("google", "us-east5-a")) == {"v5e", "v5p", "v6e"}
    assert locations.generation_names_offered("s3ns", "u-france-east1-a") == []
