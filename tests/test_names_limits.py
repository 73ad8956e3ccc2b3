"""names.py at its limits: the published lengths (Compute Engine names 63, bucket names 222 with dots and 63 per
part), the derived names' 6-digit hash and their room, and the node service account rule (names.py's mutation
survivors)."""

from __future__ import annotations

import hashlib
import re

import pytest

from tpu_stacks import names
from tpu_stacks.errors import UserError
from tpu_stacks.names import (
    bounded,
    check_bucket_name,
    check_node_service_account,
    is_bucket_name,
    is_gcs_path,
    node_account_id,
    workload_policy_name,
)

# https://cloud.google.com/compute/docs/access/service-accounts#default_service_account: PROJECT_NUMBER-compute@...
DEFAULT_ACCOUNT = "123456789012-compute@developer.gserviceaccount.com"


def test_the_compute_default_account_is_refused_for_new_nodes_and_kept_for_existing_ones():
    """GKE's hardening guide: nodes should run as a least-privilege account, not the default (project Editor); an
    existing cluster's nodes are a fact the stack reports, not a choice it makes."""
    with pytest.raises(UserError, match=r"^cluster\.nodeServiceAccount: .* is the Compute Engine default account"):
        check_node_service_account(DEFAULT_ACCOUNT, "cluster.nodeServiceAccount", existing=False)
    assert check_node_service_account(DEFAULT_ACCOUNT, "k", existing=True) == DEFAULT_ACCOUNT


def test_a_node_service_account_is_an_email_of_an_iam_account():
    own = "tpu-nodes@my-project.iam.gserviceaccount.com"
    assert check_node_service_account(own, "k", existing=False) == own
    assert check_node_service_account(own, "k", existing=True) == own
    with pytest.raises(UserError, match=r"^k: 'tpu-nodes' is not a service account email"):
        check_node_service_account("tpu-nodes", "k", existing=False)


def test_a_compute_engine_name_of_63_characters_is_kept():
    """RFC 1035 names of Compute Engine resources are at most 63 characters: a cluster and pool that make exactly 63
    are not cut."""
    cluster, pool = "c" * 40, "p" * 22
    assert workload_policy_name(cluster, pool) == f"{cluster}-{pool}"
    assert len(workload_policy_name(cluster, pool + "q")) == 63


def test_bucket_names_with_dots_are_at_most_222_characters_and_63_a_part():
    """https://cloud.google.com/storage/docs/buckets#naming: up to 222 characters when the name has dots, and no
    dot-separated part longer than 63."""
    longest = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 30])
    assert len(longest) == 222 and check_bucket_name(longest) == longest
    with pytest.raises(UserError, match=r"is not 3-222 characters long"):
        check_bucket_name(longest + "d")
    with pytest.raises(UserError, match=r"has a dot-separated part that is empty, too long"):
        check_bucket_name("a" * 64 + ".b")


def test_the_is_forms_answer_false_not_none():
    assert is_bucket_name("goog-weights") is False
    assert is_gcs_path("gs://goog-weights/x") is False
    assert is_bucket_name("weights") is True and is_gcs_path("gs://weights/x") is True


def test_a_cut_name_carries_six_hex_digits_of_the_whole_names_hash():
    """16**6 = 16.7 million values (names.HASH_LENGTH): the digits are the sha256 of the whole name and suffix."""
    cluster = "averylongclustername-a-team-one"
    account = node_account_id(cluster)
    digest = hashlib.sha256(f"{cluster}-nodes".encode()).hexdigest()
    assert re.fullmatch(r"[a-z0-9-]+-([0-9a-f]{6})-nodes", account)
    assert account == f"{cluster[:17]}-{digest[:6]}-nodes"  # 17 + 1 + 6 + 6 = 30, an account id's limit


def test_a_cut_needs_room_for_one_character_of_the_name():
    """`x-` and a 6-digit hash: 8 characters is the least a cut name takes."""
    assert bounded("abcdefghijkl", 8) == "a-" + hashlib.sha256(b"abcdefghijkl").hexdigest()[:6]
    with pytest.raises(ValueError, match=r"no room for 'abcdefghijkl' in 7 characters"):
        bounded("abcdefghijkl", 7)


@pytest.mark.parametrize(
    ("check", "value"),
    [
        (lambda v: names.PROJECT_ID.matches(v), "my-project\n"),
        (lambda v: names.PROJECT_ID.matches(v), "a" * 30 + "\n"),
        (lambda v: names.K8S_NAME.matches(v), "vllm\n"),
        (lambda v: names.is_zone(v), "us-central1-a\n"),
        (lambda v: names.is_region(v), "us-central1\n"),
    ],
)
def test_a_final_newline_is_not_part_of_a_valid_name(check, value):
    """Python's `$` also matches before a string's final newline, so `pattern.match` with `^...$` took
    'my-project\\n' for a project id (second reader's finding): the rules match the whole value."""
    assert not check(value)
    assert check(value.rstrip("\n"))


def test_image_names_and_tags_with_a_final_newline_are_refused():
    with pytest.raises(UserError):
        names.check_image_name("team/ray-maxtext\n", "raytrain.image")
