"""inputs/k8s_quantity.py's `quantity_value`: every suffix of the Kubernetes quantity grammar as the number it stands
for. The values are Kubernetes' own: the binary SI units are powers of 1024 and the decimal ones powers of 10
(k8s.io/apimachinery pkg/api/resource/quantity.go), and the documentation's memory example says `128974848`,
`129e6`, `129M`, `128974848000m` and `123Mi` are about the same value
(kubernetes.io/docs/concepts/configuration/manage-resources-containers, "Memory resource units")."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.k8s_quantity import check_quantity, quantity_value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("128974848", 128974848),
        ("129e6", 129_000_000),
        ("129M", 129_000_000),
        ("128974848000m", 128974848),
        ("123Mi", 128974848),
        ("1Ki", 2**10),
        ("1Gi", 2**30),
        ("1Ti", 2**40),
        ("1Pi", 2**50),
        ("1Ei", 2**60),
        ("500m", Decimal("0.5")),
        ("1u", Decimal("1e-6")),
        ("1n", Decimal("1e-9")),
        ("2k", 2000),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),  # the exa suffix, not an exponent
        ("1E3", 1000),
        ("5e-1", Decimal("0.5")),
        ("1.5", Decimal("1.5")),
    ],
)
def test_each_suffix_is_its_factor(text, value):
    assert quantity_value(text) == value


@pytest.mark.parametrize("text", ["0", "0Gi", "-1", "-500m", "0.0"])
def test_zero_and_below_are_refused(text):
    with pytest.raises(UserError, match=r"is not above zero"):
        check_quantity(text, "k")
    with pytest.raises(UserError, match=r"^k: "):
        quantity_value(text, "k")


def test_the_smallest_positive_quantity_is_accepted():
    assert check_quantity("1n") == "1n" and check_quantity("0.001") == "0.001"
