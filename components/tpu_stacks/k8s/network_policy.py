"""NetworkPolicies of a workload namespace: deny all ingress, then allow exactly what each pod needs.

Each workload describes its pods as `Guarded` entries whose `labels` are the very dict its pod
template carries (one source: the policy cannot select other pods than those it protects), and
each allow names its peers the same way. `declare_network_policies` then declares:
- `default-deny-ingress`: every pod of the namespace accepts nothing unless a policy below allows it;
- one policy per guarded pod group: its ingress allows, and its egress allows (DNS, the metadata
  server, HTTPS outside the cluster's private ranges, plus the in-namespace peers it talks to).

What NetworkPolicy cannot see (kubernetes.io/docs/concepts/services-networking/network-policies):
- host-network pods (Saxml's multi-host model servers) are not selected by any policy; their
  traffic to other pods comes from node addresses, so the admin server allows its port from the
  private ranges as well (ipBlock, below); ports on the node are guarded by the VPC firewall only;
- `kubectl port-forward` enters the pod's own network namespace through the kubelet, so the
  port-forward path to an API needs no allow;
- load balancers: GKE's passthrough load balancers keep the client's address, so an API port behind
  a LoadBalancer Service is allowed from anywhere and `loadBalancerSourceRanges` (exposure.py)
  narrows who may reach it.
Egress by name (Hugging Face, *.googleapis.com) is impossible in NetworkPolicy: both are served from
shared, changing address ranges. So egress allows HTTPS (443) to any address outside the private
ranges, which keeps pods from reaching other pods and internal services on any port they were not
granted, and allows DNS (kube-dns) and the GKE metadata server (Workload Identity tokens).
Enforced only where the cluster runs a NetworkPolicy implementation: GKE Dataplane V2 (cluster.component).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
"""RFC 1918: where pods, Services, nodes and internal load balancers live in a VPC-native cluster."""
METADATA_SERVER = ("169.254.169.254/32", 80)
"""The metadata address pods call for Workload Identity tokens (GKE intercepts it with its metadata server)."""
GKE_METADATA_SERVER = ("169.254.169.252/32", 988)
"""Where the GKE metadata server itself listens on the node (cloud.google.com/kubernetes-engine/docs/how-to/
workload-identity, "network policies": allow egress to 169.254.169.252/32 port 988 with Dataplane V2)."""
KUBE_DNS = {"k8s-app": "kube-dns"}
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace
MANAGED_PROMETHEUS = ("gmp-system", {"app.kubernetes.io/name": "collector"})
"""Managed Prometheus's collectors (cloud.google.com/stackdriver/docs/managed-prometheus: the PodMonitoring
of the collectors themselves selects `app.kubernetes.io/name: collector` in gmp-system)."""
DENY_ALL_NAME = "default-deny-ingress"


@dataclass(frozen=True)
class Peer:
    """Who may connect: pods by labels (in this namespace, or in the namespace named), or addresses."""

    pod_labels: dict[str, str] | None = None
    namespace: str | None = None
    """Another namespace by name; None: the policy's own namespace (with pod_labels)."""
    any_namespace: bool = False
    """Pods of every namespace (pod_labels then narrows them)."""
    cidrs: tuple[str, ...] = ()
    except_cidrs: tuple[str, ...] = ()

    def args(self) -> k8s.networking.v1.NetworkPolicyPeerArgs:
        if self.cidrs:
            (cidr,) = self.cidrs
            return k8s.networking.v1.NetworkPolicyPeerArgs(
                ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr, except_=list(self.except_cidrs) or None)
            )
        namespace = None
        if self.namespace is not None:
            namespace = k8s.meta.v1.LabelSelectorArgs(match_labels={NAMESPACE_NAME_LABEL: self.namespace})
        elif self.any_namespace:
            namespace = k8s.meta.v1.LabelSelectorArgs()
        pods = k8s.meta.v1.LabelSelectorArgs(match_labels=self.pod_labels) if self.pod_labels is not None else None
        return k8s.networking.v1.NetworkPolicyPeerArgs(namespace_selector=namespace, pod_selector=pods)


ANYWHERE = Peer(cidrs=("0.0.0.0/0",))
ANY_POD = Peer(pod_labels={}, any_namespace=True)
PROMETHEUS = Peer(pod_labels=MANAGED_PROMETHEUS[1], namespace=MANAGED_PROMETHEUS[0])
PRIVATE = tuple(Peer(cidrs=(cidr,)) for cidr in PRIVATE_RANGES)


@dataclass(frozen=True)
class Allow:
    """One ingress or egress rule: these peers (none: any peer) on these TCP ports (none: every port)."""

    why: str
    peers: tuple[Peer, ...] = ()
    ports: tuple[int, ...] = ()
    udp_ports: tuple[int, ...] = ()

    def _ports(self) -> list[k8s.networking.v1.NetworkPolicyPortArgs] | None:
        ports = [k8s.networking.v1.NetworkPolicyPortArgs(port=p, protocol="TCP") for p in self.ports]
        ports += [k8s.networking.v1.NetworkPolicyPortArgs(port=p, protocol="UDP") for p in self.udp_ports]
        return ports or None

    def ingress(self) -> k8s.networking.v1.NetworkPolicyIngressRuleArgs:
        return k8s.networking.v1.NetworkPolicyIngressRuleArgs(
            from_=[p.args() for p in self.peers] or None, ports=self._ports()
        )

    def egress(self) -> k8s.networking.v1.NetworkPolicyEgressRuleArgs:
        return k8s.networking.v1.NetworkPolicyEgressRuleArgs(
            to=[p.args() for p in self.peers] or None, ports=self._ports()
        )


def dns_and_google() -> tuple[Allow, ...]:
    """The egress every workload pod needs: DNS, Workload Identity tokens, HTTPS outside the cluster."""
    return (
        Allow(
            "DNS through kube-dns",
            peers=(Peer(pod_labels=KUBE_DNS, namespace="kube-system"),),
            ports=(53,),
            udp_ports=(53,),
        ),
        Allow("Workload Identity tokens", peers=(Peer(cidrs=(METADATA_SERVER[0],)),), ports=(METADATA_SERVER[1],)),
        Allow(
            "the GKE metadata server on the node",
            peers=(Peer(cidrs=(GKE_METADATA_SERVER[0],)),),
            ports=(GKE_METADATA_SERVER[1],),
        ),
        Allow(
            "Google APIs (GCS, Monitoring, Artifact Registry), Hugging Face: HTTPS outside the private ranges",
            peers=(Peer(cidrs=("0.0.0.0/0",), except_cidrs=PRIVATE_RANGES),),
            ports=(443,),
        ),
    )


@dataclass(frozen=True)
class Guarded:
    """A group of pods (selected by exactly the labels their template carries) and what they may do."""

    name: str
    labels: dict[str, str]
    ingress: tuple[Allow, ...] = ()
    egress: tuple[Allow, ...] | None = field(default_factory=dns_and_google)
    """None: egress not restricted (the reason is in the workload's docstring and docs/security.md)."""


def scrape(ports: Sequence[int]) -> Allow:
    return Allow("Managed Prometheus scrapes the metrics", peers=(PROMETHEUS,), ports=tuple(ports))


def deny_all_ingress() -> k8s.networking.v1.NetworkPolicySpecArgs:
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(), policy_types=["Ingress"]
    )


def policy_spec(guarded: Guarded) -> k8s.networking.v1.NetworkPolicySpecArgs:
    types = ["Ingress"] + ([] if guarded.egress is None else ["Egress"])
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(guarded.labels)),
        policy_types=types,
        ingress=[allow.ingress() for allow in guarded.ingress] or None,
        egress=None if guarded.egress is None else [allow.egress() for allow in guarded.egress],
    )


def declare_network_policies(
    name: str, namespace: str, guarded: Sequence[Guarded], opts: pulumi.ResourceOptions
) -> list[k8s.networking.v1.NetworkPolicy]:
    """The namespace's deny-all ingress policy and one policy per guarded group."""
    labels = {"app.kubernetes.io/managed-by": "tpu-stacks"}
    policies = [
        k8s.networking.v1.NetworkPolicy(
            f"{name}-{DENY_ALL_NAME}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=DENY_ALL_NAME, namespace=namespace, labels=labels),
            spec=deny_all_ingress(),
            opts=opts,
        )
    ]
    for group in guarded:
        policies.append(
            k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-{group.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=group.name, namespace=namespace, labels=labels),
                spec=policy_spec(group),
                opts=opts,
            )
        )
    return policies
