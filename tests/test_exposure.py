"""Public endpoints need named source networks; one rule for every stack."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.serving.exposure import (
    check_source_ranges,
    covers_whole_internet,
    external_traffic_policy,
    service_type,
)


def test_internal_needs_nothing_and_public_with_ranges_passes():
    check_source_ranges("vllm", "internal", [], "x")
    check_source_ranges("vllm", "public", ["203.0.113.0/24", "2001:db8::/32"], "x")


@pytest.mark.parametrize(
    "ranges,message",
    [
        ([], "vllm.sourceRanges: [] is empty for a public endpoint serving"),
        (["203.0.113.0/33"], "vllm.sourceRanges[0]: '203.0.113.0/33' is not a CIDR range"),
        (["office"], "vllm.sourceRanges[0]: 'office' is not a CIDR range"),
        (["203.0.113.7"], "write it with a prefix length, like 203.0.113.7/32"),
        (["10.0.0.0/8", "0.0.0.0/0"], "vllm.sourceRanges[1]: '0.0.0.0/0' opens the endpoint to the whole internet"),
        (["::/0"], "opens the endpoint to the whole internet"),
        (
            ["203.0.113.0/24", "203.0.113.7/24"],
            "vllm.sourceRanges[1]: '203.0.113.7/24' has host bits set; write its network address, 203.0.113.0/24, "
            "or the one address, 203.0.113.7/32",
        ),
        (
            ["2001:db8::1/32"],
            "has host bits set; write its network address, 2001:db8::/32, or the one address, 2001:db8::1/128",
        ),
        (["10.0.0.1/0"], "has host bits set"),
    ],
)
def test_refused(ranges, message):
    with pytest.raises(UserError, match=None) as error:
        check_source_ranges("vllm", "public", ranges, "serving the API")
    assert message in str(error.value)


@pytest.mark.parametrize(
    "ranges,whole",
    [
        (["0.0.0.0/1", "128.0.0.0/1"], "0.0.0.0/0"),
        (["128.0.0.0/1", "10.0.0.0/8", "0.0.0.0/1"], "0.0.0.0/0"),
        (["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"], "0.0.0.0/0"),
        (["::/1", "8000::/1", "203.0.113.0/24"], "::/0"),
    ],
)
def test_pieces_of_the_whole_internet_are_refused(ranges, whole):
    with pytest.raises(UserError) as error:
        check_source_ranges("vllm", "public", ranges, "serving the API")
    assert f"vllm.sourceRanges: {ranges} together cover the whole internet ({whole})" in str(error.value)


def test_pieces_that_leave_addresses_out_pass():
    # 192.0.0.0/2 missing: 3/4 of IPv4 is wide, but it is not everyone (the pack's advisory stays the judge).
    check_source_ranges("vllm", "public", ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2"], "x")
    check_source_ranges("vllm", "public", ["0.0.0.0/1", "::/1"], "x")


def test_a_range_with_its_network_address_and_a_single_address_pass():
    check_source_ranges("vllm", "public", ["203.0.113.7/32", "198.51.100.0/24", "2001:db8::1/128"], "x")
    check_source_ranges("vllm", "internal", ["10.0.0.0/8"], "x")


def test_the_union_rule_reads_a_range_with_host_bits_as_its_network():
    """The pack judges manifests this program did not check; GKE's firewall masks host bits, so do we."""
    assert covers_whole_internet(["0.0.0.1/1", "128.0.0.1/1"]) == "0.0.0.0/0"
    assert covers_whole_internet(["0.0.0.1/1", "office"]) == ""


def test_load_balancers_keep_the_client_address_and_cluster_exposure_has_none():
    assert (service_type("internal"), external_traffic_policy("internal")) == ("LoadBalancer", "Local")
    assert (service_type("public"), external_traffic_policy("public")) == ("LoadBalancer", "Local")
    assert (service_type("cluster"), external_traffic_policy("cluster")) == ("ClusterIP", None)
