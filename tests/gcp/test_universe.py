"""The universe catalogue: one project-id parser, identity strings, locations, documented limits and
the advisory lines they give, and every fact's source."""

import re
from datetime import date
from pathlib import Path

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import (
    BUCKET_LOCATION,
    DISK_TYPE,
    GKE_MODE,
    MACHINE_SERIES,
    UNIVERSES,
    advisories,
    cluster_features,
    feature,
    machine_series,
    universe,
)
from tpu_stacks.names import is_region, is_zone, region_of

ROOT = Path(__file__).resolve().parents[2]
S3NS = universe("s3ns")
GOOGLE = universe("google")


def refusal(call) -> str:
    with pytest.raises(UserError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- the one project-id parser --------------------------------------------------------------------


@pytest.mark.parametrize("written", ["my-proj", "s3ns:my-proj"])
def test_s3ns_accepts_both_forms_and_identities_use_the_bare_id(written):
    assert S3NS.bare_project(written) == "my-proj"
    assert S3NS.workload_pool(written) == "my-proj.s3ns.svc.id.goog"
    assert S3NS.service_account_email("sax-iam-sa", written) == "sax-iam-sa@my-proj.s3ns.iam.gserviceaccount.com"
    assert S3NS.ksa_member(written, "default", "sax-sa") == "serviceAccount:my-proj.s3ns.svc.id.goog[default/sax-sa]"
    assert S3NS.principal_member("42", written, "ns", "sa") == (
        "principal://iam.googleapis.com/projects/42/locations/global/"
        "workloadIdentityPools/my-proj.s3ns.svc.id.goog/subject/ns/ns/sa/sa"
    )


def test_google_ids_are_unchanged_including_legacy_domain_scoped_ones():
    assert GOOGLE.bare_project("my-proj") == "my-proj"
    assert GOOGLE.workload_pool("my-proj") == "my-proj.svc.id.goog"
    assert GOOGLE.bare_project("example.com:my-proj") == "example.com:my-proj"


@pytest.mark.parametrize(
    "chosen,written,message",
    [
        (
            "google",
            "s3ns:my-proj",
            "cluster.project: 's3ns:my-proj' is a project id of universe s3ns, but the stack deploys to universe "
            "google (googleapis.com); write PROJECT_ID, or set gcp:universeDomain to the project's universe",
        ),
        ("s3ns", "acme:my-proj", "cluster.project: 'acme:my-proj' is not a project id of universe s3ns"),
        ("s3ns", "s3ns:", "cluster.project: 's3ns:' has no project id after its prefix; write s3ns:PROJECT_ID"),
        (
            "s3ns",
            "s3ns:s3ns:my-proj",
            "cluster.project: 's3ns:s3ns:my-proj' has more than one prefix; write s3ns:my-proj (one prefix)",
        ),
        ("google", "example.com:example.com:my-proj", "has more than one prefix; write example.com:my-proj"),
    ],
)
def test_a_prefix_that_contradicts_the_universe_is_refused_in_one_line(chosen, written, message):
    assert message in refusal(lambda: universe(chosen).bare_project(written, key="cluster.project"))


def test_no_identity_string_can_carry_the_prefix():
    strings = [
        S3NS.workload_pool("s3ns:p"),
        S3NS.service_account_email("account-id", "s3ns:p"),
        S3NS.ksa_member("s3ns:p", "n", "k"),
        S3NS.principal_member("1", "s3ns:p", "n", "k"),
    ]
    assert not [s for s in strings if "s3ns:" in s]


# -- locations ------------------------------------------------------------------------------------


@pytest.mark.parametrize("location", ["u-france-east1", "u-france-east1-a", "u-france-east1-b", "u-france-east1-c"])
def test_s3ns_locations_are_its_one_region(location):
    assert S3NS.check_location(location) == "u-france-east1"
    assert region_of(location) == "u-france-east1"  # the one region parser keeps the region whole


@pytest.mark.parametrize(
    "location,message",
    [
        ("europe-west9-a", "cluster.location: 'europe-west9-a' is not a region of universe s3ns; use one of "),
        (
            "europe-west9",
            "cluster.location: 'europe-west9' is not a region of universe s3ns; use one of u-france-east1",
        ),
        ("u-france-east1-d", "cluster.location: 'u-france-east1-d' is not a zone of universe s3ns"),
    ],
)
def test_a_location_outside_s3ns_is_refused(location, message):
    assert message in refusal(lambda: S3NS.check_location(location))


def test_google_refuses_the_sovereign_region_and_accepts_its_own():
    message = refusal(lambda: GOOGLE.check_location("u-france-east1-a"))
    assert message.startswith("cluster.location: 'u-france-east1-a' is in universe s3ns")
    assert GOOGLE.check_location("europe-west9-a") == "europe-west9"


# -- documented limits and advisories ------------------------------------------------------------

SAXML_S3NS = cluster_features(
    "standard",
    machine_types=["e2-standard-4", "ct5lp-hightpu-4t", "ct5lp-hightpu-4t"],
    bucket_locations=["U-FRANCE-EAST1"],
)


def test_features_are_kind_and_value():
    assert SAXML_S3NS == {
        "gke-mode:standard",
        "machine-series:e2",
        "machine-series:ct5lp",
        "bucket-location:u-france-east1",
    }
    assert machine_series("ct5lp-hightpu-4t") == "ct5lp" and machine_series("c3-standard-8") == "c3"
    with pytest.raises(ValueError):
        feature("gpu-count", "8")


def test_the_tutorial_on_s3ns_gets_one_line_per_documented_limit():
    lines = advisories(S3NS, SAXML_S3NS)
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    mode, series = lines
    assert mode.startswith("Cloud de Confiance by S3NS (s3ns) does not offer the GKE mode standard this stack plans")
    assert "offered: autopilot" in mode and "kubernetes-engine/docs/tpc-differences" in mode
    assert "machine series ct5lp, e2 this stack plans (offered: c3, a3;" in series
    assert "no TPU machine type is listed" in series
    assert all("docs/sovereign.md" in line and "read 2026-11-23" in line for line in lines)


def test_what_s3ns_offers_raises_no_advisory():
    offered = cluster_features("autopilot", ["c3-standard-8", "a3-highgpu-8g"], ["pd-balanced"], ["u-france-east1"])
    assert advisories(S3NS, offered) == []


@pytest.mark.parametrize(
    "planned,words",
    [
        ({feature(DISK_TYPE, "hyperdisk-balanced")}, "GKE disk type hyperdisk-balanced"),
        ({feature(BUCKET_LOCATION, "EU")}, "bucket location eu"),
    ],
)
def test_disks_and_multi_region_buckets_are_advised_too(planned, words):
    (line,) = advisories(S3NS, planned)
    assert words in line


def test_google_documents_no_limits_here():
    assert advisories(GOOGLE, SAXML_S3NS | {feature(GKE_MODE, "standard"), feature(MACHINE_SERIES, "ct6e")}) == []


# -- the catalogue's sources ----------------------------------------------------------------------


def _sources(chosen):
    return [limit.source for limit in chosen.limits] + [note.source for note in chosen.notes] + list(chosen.sources)


def test_every_s3ns_fact_has_a_dated_source():
    for source in _sources(S3NS):
        assert source.title and date.fromisoformat(source.checked) <= date(2026, 12, 31)
        assert source.url.startswith("https://documentation.s3ns.fr/")
    assert all(is_region(region) for region in S3NS.regions)
    assert all(is_zone(zone) and region_of(zone) in S3NS.regions for zone in S3NS.zones)
    assert S3NS.api_domain == "s3nsapis.fr" and S3NS.project_prefix == "s3ns" and S3NS.identity_prefix == "s3ns"


def test_universes_are_found_by_name_or_api_domain():
    assert universe("s3nsapis.fr") is S3NS and universe("googleapis.com") is GOOGLE
    assert [u.name for u in UNIVERSES] == ["google", "s3ns"]


def test_the_sovereign_page_cites_every_source():
    page = (ROOT / "docs" / "sovereign.md").read_text()
    missing = [s.url for s in _sources(S3NS) if s.url not in page]
    assert not missing, missing
    assert re.search(r"u-france-east1-a", page)
