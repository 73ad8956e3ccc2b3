"""Who may reach a model server: the networks its load balancer names, or the cluster's pods only.

Model servers on these stacks have no authentication that covers them (the Saxml HTTP server with its mutating admin
endpoints has none; Ray Serve LLM's OpenAI app has none; vLLM's API key guards /v1, /v2, /inference and /cohere, while
/invocations serves the same completions without it: ledger: vllm.api-key.guarded-prefixes,
vllm.api-key.invocations-unguarded, ray.serve-llm.openai-app-no-auth). So every load balancer in front of one names
its clients: a public one never the whole internet, and an internal one too, since GKE's internal passthrough load
balancer answers every address of the VPC and of the networks connected to it unless the Service's
`loadBalancerSourceRanges` narrow the firewall rule GKE writes for it (ledger: gke.internal-lb.clients,
gke.lb.source-ranges). With `externalTrafficPolicy: Local` the client's own address reaches the pod, so the same
ranges are the NetworkPolicy's `ipBlock`s (k8s.platform_flows.load_balancer_clients).
"""

from __future__ import annotations

import ipaddress

from tpu_stacks.errors import UserError

INTERNAL_LB_ANNOTATION = {"networking.gke.io/load-balancer-type": "Internal"}


def service_type(exposure: str) -> str:
    """`cluster`: a ClusterIP Service (pods only); `internal` and `public`: a passthrough load balancer."""
    return "ClusterIP" if exposure == "cluster" else "LoadBalancer"


def external_traffic_policy(exposure: str) -> str | None:
    """`Local` on every load balancer. With `Cluster`, a request landing on a node without a serving pod is
    forwarded with that node's address, which no `ipBlock` matches on GKE Dataplane V2 (cilium
    Documentation/security/policy/caveats.rst); with `Local` the client's address reaches the pod, so the
    policy can name the source ranges, and only nodes with a ready serving pod pass the load balancer's
    health check, which the node itself answers on the Service's healthCheckNodePort, outside any pod
    policy (cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer, "Effect of
    externalTrafficPolicy")."""
    return None if exposure == "cluster" else "Local"


def check_source_ranges(section: str, exposure: str, source_ranges: list[str], what: str) -> None:
    """Refuse a public endpoint without source ranges, a malformed range, or the whole internet.

    A range with host bits set (`203.0.113.7/24`) is refused with its network address as the fix: the
    range becomes both `loadBalancerSourceRanges` and the NetworkPolicy's `ipBlock`, and a user who wrote
    one address with a short prefix may have meant `/32`; we do not guess which."""
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
        address = ipaddress.ip_interface(cidr).ip
        if address != network.network_address:
            raise UserError(
                key,
                cidr,
                "has host bits set",
                f"write its network address, {network}, or the one address, {address}/{network.max_prefixlen}",
            )
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


def require_clients(section: str, exposure: str, source_ranges: list[str], what: str, unguarded: str) -> None:
    """Refuse an internal load balancer that names no clients: it would answer the whole VPC. `unguarded` says why
    the server's own authentication does not close that (it is part of the one-line refusal)."""
    if exposure == "internal" and not source_ranges:
        raise UserError(
            f"{section}.sourceRanges",
            [],
            f"is empty for the internal load balancer {what}: it answers every address of the VPC and of the networks "
            f"connected to it, and {unguarded}",
            f"list your clients' ranges (on the default network, your region's subnet: 10.128.0.0/20 in "
            f"us-central1), or set {section}.exposure to cluster",
        )


def covers_whole_internet(cidrs: list[str]) -> str:
    """`0.0.0.0/0` or `::/0` when the ranges' union is every address of that family (`0.0.0.0/1` and
    `128.0.0.0/1` are the whole internet in two pieces); empty when it is not. Unparsable ranges are
    left to the caller's own check. A range with host bits counts as its network (`strict=False`), as GKE's
    firewall and Go's net.ParseCIDR read it: the policy pack judges manifests this program did not check."""
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(str(cidr), strict=False))
        except ValueError:
            continue
    # One family at a time: collapse_addresses takes networks of a single version.
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    if v4 and list(ipaddress.collapse_addresses(v4)) == [ipaddress.IPv4Network("0.0.0.0/0")]:
        return "0.0.0.0/0"
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    if v6 and list(ipaddress.collapse_addresses(v6)) == [ipaddress.IPv6Network("::/0")]:
        return "::/0"
    return ""
