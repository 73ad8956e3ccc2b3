"""The universe catalogue's exact answers where a near miss reads the same: the choices a location refusal
offers (the regions for a region, the zones for a zone), and Google Cloud as the universe that needs no domain.

Sources: "Cloud de Confiance regions and zones" (https://documentation.s3ns.fr/kms/docs/locations, read
2026-11-23: one region u-france-east1, zones -a, -b, -c); Google's client libraries take the universe domain
"googleapis.com" when none is configured (Google Auth Library, GetUniverseDomainInterface: "default to
\"googleapis.com\" if no universe domain is configured",
https://docs.cloud.google.com/php/docs/reference/auth/latest/GetUniverseDomainInterface), so Google Cloud is the one
universe a stack may name without setting `gcp:universeDomain`.
"""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import resolve, universe

S3NS = universe("s3ns")
GOOGLE = universe("google")
S3NS_ZONES = "u-france-east1-a, u-france-east1-b, u-france-east1-c"


def refusal(call) -> str:
    with pytest.raises(UserError) as caught:
        call()
    return str(caught.value)


def test_a_region_outside_s3ns_is_offered_the_region_not_its_zones():
    """A region is answered with a region: the zones would not fit the key as written."""
    assert refusal(lambda: S3NS.check_location("europe-west9")) == (
        "cluster.location: 'europe-west9' is not a region of universe s3ns; use one of u-france-east1"
    )


def test_a_zone_outside_s3ns_is_offered_its_three_zones():
    assert refusal(lambda: S3NS.check_location("europe-west9-a")) == (
        f"cluster.location: 'europe-west9-a' is not a region of universe s3ns; use one of {S3NS_ZONES}"
    )


def test_google_needs_no_domain_and_a_sovereign_universe_does():
    assert GOOGLE.is_default is True
    assert S3NS.is_default is False
    assert resolve("google", None) == "google"  # the provider's default domain is Google Cloud's
    assert "needs gcp:universeDomain: s3nsapis.fr" in refusal(lambda: resolve("s3ns", None))
