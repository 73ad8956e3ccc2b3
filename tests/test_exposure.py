"""Public endpoints need named source networks; one rule for every stack."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.exposure import check_source_ranges


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
