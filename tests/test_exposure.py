"""Public endpoints need named source networks; one rule for every stack."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.serving.exposure import (
    check_source_ranges,
    covers_whole_internet,
    external_traffic_policy,
    require_clients,
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


def test_an_internal_load_balancer_names_its_clients():
    """GKE's internal passthrough load balancer answers every address of the VPC and of the networks connected to it
    unless `loadBalancerSourceRanges` narrow its firewall rule (ledger: gke.internal-lb.clients): an internal one with
    no ranges is refused, with why the server's own authentication does not close that; a cluster-only server and a
    public one (checked by check_source_ranges) are not this rule's."""
    with pytest.raises(UserError) as error:
        require_clients("sglang", "internal", [], "serving the OpenAI API", "SGLang has no API key")
    assert str(error.value) == (
        "sglang.sourceRanges: [] is empty for the internal load balancer serving the OpenAI API: it answers every "
        "address of the VPC and of the networks connected to it, and SGLang has no API key; list your clients' ranges "
        "(on the default network, your region's subnet: 10.128.0.0/20 in us-central1), or set sglang.exposure to "
        "cluster"
    )
    require_clients("sglang", "internal", ["10.128.0.0/20"], "x", "y")
    require_clients("sglang", "cluster", [], "x", "y")
    require_clients("sglang", "public", [], "x", "y")
