"""Kubernetes resource quantities (`8`, `500m`, `64Gi`), checked by the API server's own grammar.

The grammar (k8s.io/apimachinery pkg/api/resource/quantity.go, and the Kubernetes API reference
"Quantity"): `<signedNumber><suffix>`, the suffix a binary SI unit (Ki Mi Gi Ti Pi Ei), a decimal SI
unit (n u m "" k M G T P E) or a decimal exponent (e3, E-2). A request or limit of these stacks must
also be above zero: a negative or zero CPU or memory is a typo, not a choice.
"""

from __future__ import annotations

import re
from decimal import Decimal

from tpu_stacks.errors import UserError

QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)


def check_quantity(value: str, key: str = "") -> str:
    """The quantity, or a refusal: not the Kubernetes grammar, or not above zero."""
    match = QUANTITY.match(value) if isinstance(value, str) else None
    if match is None:
        raise UserError(
            key, value, "is not a Kubernetes quantity", "write a number with an optional unit: 8, 500m, 64Gi, 1.5"
        )
    if Decimal(match["number"]) <= 0:
        raise UserError(key, value, "is not above zero", "give a positive quantity such as 500m or 64Gi")
    return value


_SUFFIX = {
    **{unit: Decimal(1024) ** power for power, unit in enumerate(("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    **{unit: Decimal(10) ** power for unit, power in (("n", -9), ("u", -6), ("m", -3), ("k", 3), ("M", 6))},
    **{unit: Decimal(10) ** power for unit, power in (("G", 9), ("T", 12), ("P", 15), ("E", 18))},
}
"""Each suffix of the grammar as a factor (quantity.go: binary SI `Ki`..`Ei`, decimal SI `n`..`E`)."""


def quantity_value(value: str, key: str = "") -> Decimal:
    """The quantity as a number in its base unit (`500m` CPU is 0.5, `64Gi` memory is 68719476736 bytes); a
    decimal exponent (`1e3`) is read as the grammar reads it."""
    match = QUANTITY.match(check_quantity(value, key))
    assert match is not None  # check_quantity refused anything else
    suffix = match["suffix"] or ""
    if suffix[:1] in ("e", "E") and suffix not in _SUFFIX:
        return Decimal(match["number"]) * Decimal(10) ** int(suffix[1:])
    return Decimal(match["number"]) * _SUFFIX[suffix]
