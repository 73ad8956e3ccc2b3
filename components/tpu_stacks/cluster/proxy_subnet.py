"""The proxy-only subnet a regional Gateway needs, created with the cluster or adopted.

GKE's regional Gateway classes (`gke-l7-rilb`, `gke-l7-regional-external-managed`) are Envoy-based load
balancers: their proxies take addresses from the region's proxy-only subnet (`purpose: REGIONAL_MANAGED_PROXY`),
and "in a given VPC network and region, only a single proxy-only subnet with purpose REGIONAL_MANAGED_PROXY can be
active at any point in time" (https://cloud.google.com/load-balancing/docs/proxy-only-subnets). Packets from a
proxy to a backend carry an address of that subnet, so the servers' NetworkPolicy names its range.

Why the program cannot find an existing one by itself: the plan (and the NetworkPolicy that names the range) is
decided offline, before any cloud call; listing a network's subnets needs the Compute API and credentials, and a
look-up's answer is unknown in a preview. So `cluster.gatewayApi.proxyOnlySubnet.existing` names it and `range`
gives its range; creating a second active one in the same region and network fails at `up`.

Created before the cluster: GKE picks a new cluster's pod and Service ranges among the addresses still free, so it
then avoids this range.
"""

from typing import Optional

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.cluster.decided import ClusterPlan

PURPOSE = "REGIONAL_MANAGED_PROXY"
ROLE = "ACTIVE"
DEFAULT_NETWORK = "default"
"""The VPC network of the clusters this program creates (their ClusterArgs name none, so GKE uses `default`)."""


def needs_proxy_subnet(plan: ClusterPlan) -> bool:
    """The Gateway API is on and no existing proxy-only subnet is named: this stack creates one."""
    gateway = plan.spec.gateway_api
    return gateway.enabled and gateway.proxy_only_subnet.existing is None


def proxy_subnet_args(plan: ClusterPlan, network: pulumi.Input[str]) -> gcp.compute.SubnetworkArgs:
    return gcp.compute.SubnetworkArgs(
        name=f"{plan.spec.name}-proxy-only",
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
    """The subnet, or None when the cluster has no Gateway API or adopts an existing subnet."""
    if not needs_proxy_subnet(plan):
        return None
    return gcp.compute.Subnetwork(
        f"{name}-proxy-only-subnet",
        proxy_subnet_args(plan, network),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=after),
    )
