"""Who may reach a model server: internal by default, public only to named networks.

Model servers on these stacks have no authentication of their own (vLLM without --api-key, the
Saxml HTTP server with its mutating admin endpoints), so a public load balancer needs source ranges,
and never the whole internet.
"""

from __future__ import annotations

import ipaddress

from tpu_stacks.errors import UserError

INTERNAL_LB_ANNOTATION = {"networking.gke.io/load-balancer-type": "Internal"}


def check_source_ranges(section: str, exposure: str, source_ranges: list[str], what: str) -> None:
    """Refuse a public endpoint without source ranges, a malformed range, or the whole internet."""
    if exposure == "public" and not source_ranges:
        raise UserError(
            f"{section}.sourceRanges",
            [],
            f"is empty for a public endpoint {what}",
            "list the CIDRs allowed to reach it (e.g. 203.0.113.0/24), or keep exposure: internal",
        )
    for index, cidr in enumerate(source_ranges):
        key = f"{section}.sourceRanges[{index}]"
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise UserError(key, cidr, "is not a CIDR range", "write it like 203.0.113.0/24") from None
        if "/" not in cidr:
            raise UserError(key, cidr, "is not a CIDR range", f"write it with a prefix length, like {cidr}/32")
        if network.prefixlen == 0:
            raise UserError(key, cidr, "opens the endpoint to the whole internet", "name the networks that need it")
    whole = covers_whole_internet(source_ranges)
    if whole:
        raise UserError(
            f"{section}.sourceRanges",
            source_ranges,
            f"together cover the whole internet ({whole})",
            "name the networks that need it, not pieces of every address",
        )


def covers_whole_internet(cidrs: list[str]) -> str:
    """`0.0.0.0/0` or `::/0` when the ranges' union is every address of that family (`0.0.0.0/1` and
    `128.0.0.0/1` are the whole internet in two pieces); empty when it is not. Unparsable ranges are
    left to the caller's own check."""
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(str(cidr), strict=False))
        except ValueError:
            continue
    for version, everything in ((4, "0.0.0.0/0"), (6, "::/0")):
        family = [n for n in networks if n.version == version]
        if family and list(ipaddress.collapse_addresses(family)) == [ipaddress.ip_network(everything)]:  # type: ignore[arg-type]
            return everything
    return ""
