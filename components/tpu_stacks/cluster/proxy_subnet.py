"""The proxy-only subnet a regional Gateway needs, created with the cluster or adopted.

GKE's regional Gateway classes (`gke-l7-rilb`, `gke-l7-regional-external-managed`) are Envoy-based load
balancers: their proxies take addresses from the region's proxy-only subnet (`purpose: REGIONAL_MANAGED_PROXY`),
and "in a given VPC network and region, only a single proxy-only subnet with purpose REGIONAL_MANAGED_PROXY can be
active at any point in time" (https://cloud.google.com/load-balancing/docs/proxy-only-subnets); that one subnet "is
shared by all regional Envoy-based load balancers" of the network and region (the same page, ?hl=ko). Packets from a
proxy to a backend carry an address of that subnet, so the servers' NetworkPolicy names its range.

Three consequences, each handled here:
- Adopting is the first step, not an afterthought: `cluster.gatewayApi.proxyOnlySubnet.existing` names the subnet the
  network already has, and `range` gives its range (the plan, and the NetworkPolicy that names the range, are decided
  offline, before any cloud call).
- Creating a second active subnet fails at the API (an HTTP 400, kubernetes/ingress-gce pull 873). Before creating
  one, the program looks the region's active proxy-only subnets up (pulumi-gcp `gcp.compute.get_subnetworks_output`,
  the Compute API's `subnetworks.list` with a filter) and stops with one line naming the subnet it found and the
  setting that adopts it, instead of the API's error.
- The subnet outlives the stack that created it: other load balancers of the region may use it by the time the stack
  is destroyed. It is kept on delete (`retain_on_delete`: "Pulumi will not call through to the resource provider's
  Delete method when deleting or replacing the resource during pulumi up or pulumi destroy",
  https://www.pulumi.com/docs/iac/concepts/options/retainondelete/); deleting it is a person's decision
  (docs/vllm.md says how).

Created before the cluster: GKE picks a new cluster's pod and Service ranges among the addresses still free, so it
then avoids this range.
"""

from __future__ import annotations

from typing import Any, Optional

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.cluster.decided import ClusterPlan
from tpu_stacks.errors import MISSING, UserError

# One active proxy-only subnet per region and network, shared by every regional Envoy load balancer there
# (ledger: gke.proxy-only-subnet-one-active).
PURPOSE = "REGIONAL_MANAGED_PROXY"
ROLE = "ACTIVE"
DEFAULT_NETWORK = "default"
"""The VPC network of the clusters this program creates (their ClusterArgs name none, so GKE uses `default`)."""
ACTIVE_PROXY_SUBNETS = f'(purpose = "{PURPOSE}") (role = "{ROLE}")'
"""The `subnetworks.list` filter for the region's active proxy-only subnets: AIP-160 expressions, one per
parentheses, ANDed ("To filter on multiple expressions, provide each separate expression within parentheses ... By
default, each expression is an AND expression", the `filter` query parameter,
https://cloud.google.com/compute/docs/reference/rest/v1/subnetworks/list). The look-up's answer carries no purpose or
role (GetSubnetworksSubnetworkResult: name, ipCidrRange, network, networkName, ...), so the filter is what selects;
the network is matched on the answer's `networkName`."""
ADOPT_KEY = "cluster.gatewayApi.proxyOnlySubnet.existing"


def needs_proxy_subnet(plan: ClusterPlan) -> bool:
    """The Gateway API is on and no existing proxy-only subnet is named: this stack creates one."""
    gateway = plan.spec.gateway_api
    return gateway.enabled and gateway.proxy_only_subnet.existing is None


def subnet_name(plan: ClusterPlan) -> str:
    return f"{plan.spec.name}-proxy-only"


def network_name(network: str) -> str:
    """`default` of `default`, `projects/p/global/networks/default` or a self link."""
    return network.rstrip("/").rsplit("/", 1)[-1]


def refuse_other_active(plan: ClusterPlan, network: str, found: list[Any]) -> str:
    """`network`, unless the region already has an active proxy-only subnet in it other than this stack's own (a
    second `up` finds its own): then the one-line refusal, as a RunError (Pulumi prints it without a traceback)."""
    if not network:  # an existing cluster whose look-up named no network: nothing to compare with
        return network
    own = subnet_name(plan)
    others = [
        subnet
        for subnet in found
        if _field(subnet, "network_name", "networkName") == network_name(network) and _field(subnet, "name") != own
    ]
    if others:
        other = others[0]
        name, cidr = _field(other, "name"), _field(other, "ip_cidr_range", "ipCidrRange")
        error = UserError(
            ADOPT_KEY,
            MISSING,
            f"is unset, and network {network_name(network)} already has the active proxy-only subnet {name} ({cidr}) "
            f"in {plan.region}, the one every regional load balancer there uses (a second one is refused)",
            f"adopt it: set {ADOPT_KEY}: {name} and cluster.gatewayApi.proxyOnlySubnet.range: {cidr}",
        )
        raise pulumi.RunError(str(error))
    return network


def _field(subnet: Any, *names: str) -> Any:
    """A look-up result's field, from the SDK's result object or the wire form of a mock."""
    for name in names:
        value = subnet.get(name) if isinstance(subnet, dict) else getattr(subnet, name, None)
        if value is not None:
            return value
    return None


def proxy_subnet_args(plan: ClusterPlan, network: pulumi.Input[str]) -> gcp.compute.SubnetworkArgs:
    return gcp.compute.SubnetworkArgs(
        name=subnet_name(plan),
        project=plan.spec.project,
        region=plan.region,
        network=network,
        ip_cidr_range=plan.spec.gateway_api.proxy_only_subnet.range,
        purpose=PURPOSE,
        role=ROLE,
        description="proxy-only subnet of the regional Gateways (tpu-stacks)",
    )


def declare_proxy_subnet(
    name: str, plan: ClusterPlan, network: pulumi.Input[str], parent: pulumi.Resource, after: list[pulumi.Resource]
) -> Optional[gcp.compute.Subnetwork]:
    """The subnet, or None when the cluster has no Gateway API or adopts an existing subnet. Its network input
    waits for the look-up of the region's active proxy-only subnets, which refuses to go on when another exists."""
    if not needs_proxy_subnet(plan):
        return None
    found = gcp.compute.get_subnetworks_output(
        filter=ACTIVE_PROXY_SUBNETS,
        project=plan.spec.project,
        region=plan.region,
        opts=pulumi.InvokeOutputOptions(parent=parent, depends_on=after),
    )
    checked = pulumi.Output.all(network, found.subnetworks).apply(
        lambda parts: refuse_other_active(plan, parts[0], list(parts[1] or []))
    )
    return gcp.compute.Subnetwork(
        f"{name}-proxy-only-subnet",
        proxy_subnet_args(plan, checked),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=after, retain_on_delete=True),
    )
