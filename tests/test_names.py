"""Every name rule and the region parser, once (tpu_stacks.names)."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.names import (
    GKE_NAME,
    K8S_NAME,
    RESOURCE_NAME,
    SERVICE_ACCOUNT_ID,
    bounded,
    is_region,
    is_zone,
    node_account_id,
    region_of,
    workload_policy_name,
)


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


# -- names derived from user names (issue 12): deterministic, within the limit, distinct -------------


def test_names_that_fit_never_change():
    assert node_account_id("sax") == "sax-nodes"
    assert node_account_id("a" * 24) == "a" * 24 + "-nodes"  # exactly 30: unchanged
    assert workload_policy_name("raytrain", "v7x-2x2x2") == "raytrain-v7x-2x2x2"
    assert bounded("x" * 63, 63) == "x" * 63


def test_truncated_node_account_ids_keep_two_long_clusters_apart():
    """Cutting alone gave both `averylongclustername-a...` clusters the id `averylongclustername-a-t-nodes`."""
    one, two = node_account_id("averylongclustername-a-team-one"), node_account_id("averylongclustername-a-team-two")
    assert one != two
    for account in (one, two):
        assert SERVICE_ACCOUNT_ID.matches(account) and len(account) == 30 and account.endswith("-nodes"), account
    assert node_account_id("averylongclustername-a-team-one") == one  # the same on every run


def test_resource_policy_names_fit_63_characters():
    cluster, pool = "c" + "x" * 39, "p" + "y" * 39  # 40 + 1 + 40 = 81 characters unbounded
    name = workload_policy_name(cluster, pool)
    assert len(name) <= 63 and RESOURCE_NAME.matches(name), name
    assert workload_policy_name(cluster, pool[:-1] + "z") != name


def test_a_cut_never_leaves_a_dash_before_the_hash():
    name = bounded("abcdefghijklmnop-qrstuvwxyz0123456789", 30, "-nodes")
    assert "--" not in name and SERVICE_ACCOUNT_ID.matches(name), name


# -- one bucket rule, one zone-in-region rule ---------------------------------------------------------


def test_gs_paths_use_the_bucket_rule():
    """`gs://` paths were a regex of their own that let reserved and IP-shaped buckets through."""
    from tpu_stacks.names import is_bucket_name, is_gcs_path

    assert is_gcs_path("gs://weights") and is_gcs_path("gs://weights/llama/ckpt-1") and is_gcs_path("gs://a.b.c/x")
    for bad in ["gs://goog-weights/x", "gs://my-google-data/x", "gs://192.168.5.4/x", "gs://Weights/x", "gs://ab"]:
        assert not is_gcs_path(bad), bad
    assert not is_gcs_path("s3://weights/x") and not is_gcs_path("weights/x") and not is_gcs_path(None)
    assert is_bucket_name("weights") and not is_bucket_name("gs://weights") and not is_bucket_name(3)


@pytest.mark.parametrize(
    ("zone", "region", "inside"),
    [
        ("us-central1-b", "us-central1", True),
        ("u-france-east1-a", "u-france-east1", True),
        ("us-central1", "us-central1", False),  # a region is not a zone of itself
        ("us-central10-a", "us-central1", False),
        ("us-east5-a", "us-central1", False),
    ],
)
def test_zone_of_region(zone, region, inside):
    from tpu_stacks.names import check_zone_of, is_zone_of

    assert is_zone_of(zone, region) is inside
    if inside:
        assert check_zone_of("k", zone, region) == zone
    else:
        with pytest.raises(UserError, match=rf"^k: '{zone}' is not a zone of {region}; use a zone like {region}-a$"):
            check_zone_of("k", zone, region)
