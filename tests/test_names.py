"""Every name rule and the region parser, once (tpu_stacks.names)."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.names import GKE_NAME, K8S_NAME, SERVICE_ACCOUNT_ID, is_region, is_zone, region_of


@pytest.mark.parametrize(
    ("location", "region"),
    [
        ("us-central1-b", "us-central1"),
        ("us-central1", "us-central1"),
        ("europe-west9-a", "europe-west9"),
        ("u-france-east1", "u-france-east1"),  # a sovereign region: three parts, still a region
        ("u-france-east1-c", "u-france-east1"),
        ("northamerica-northeast1-a", "northamerica-northeast1"),
    ],
)
def test_region_of(location, region):
    assert region_of(location) == region


def test_zone_and_region_shapes():
    assert is_zone("u-france-east1-a") and not is_region("u-france-east1-a")
    assert is_region("u-france-east1") and not is_zone("u-france-east1")
    assert not is_zone("mars-1") and not is_region("mars-1")


@pytest.mark.parametrize(
    ("rule", "good", "bad"),
    [
        (K8S_NAME, "vllm-0", "Bad_NS"),
        (SERVICE_ACCOUNT_ID, "sax-iam-sa", "sa"),  # 6-30 characters
        (GKE_NAME, "tpu-cluster", "a" * 41),  # at most 40 characters
    ],
)
def test_rules_accept_and_refuse_in_one_line(rule, good, bad):
    assert rule.check("x.name", good) == good
    with pytest.raises(UserError) as refused:
        rule.check("x.name", bad)
    assert str(refused.value).startswith(f"x.name: {bad!r} is not a valid {rule.what}; use ")
    assert "\n" not in str(refused.value)
