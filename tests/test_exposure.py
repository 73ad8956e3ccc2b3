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
