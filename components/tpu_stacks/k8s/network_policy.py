"""NetworkPolicies generated from the connectivity contract: deny all ingress, then allow each group's flows.

`declare_network_policies` declares, per workload namespace:
- `default-deny-ingress`: every pod of the namespace accepts nothing unless a policy below allows it;
- one policy per contract group (`k8s.connectivity.Group`), selecting exactly its labels, with its
  ingress flows and (unless the group leaves egress open) its egress flows as rules, and the flows
  themselves as the `tpu-stacks.dev/flows` annotation.

How a flow's peer becomes a rule (never a rule that looks like it allows what it does not):
- `Pods` -> a pod selector (with a namespace selector outside the policy's namespace);
- `External` -> an `ipBlock`: only addresses outside the cluster, which is all an `ipBlock` matches on
  GKE Dataplane V2 (Cilium: connectivity.py);
- `Hosts`, `Anything` -> a port-only rule (the ports, no peer): nodes and host-network pods are matched
  by nothing narrower, so the rule says plainly that the port is open to every peer.
What NetworkPolicy cannot see: host-network pods are not selected by any policy; `kubectl
port-forward` enters the pod's network namespace through the kubelet and needs no allow.
Enforced only where the cluster runs a NetworkPolicy implementation: GKE Dataplane V2 (cluster.component).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.k8s.connectivity import ANNOTATION, External, Flow, Group, Peer, Pods

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace
DENY_ALL_NAME = "default-deny-ingress"
MANAGED = {"app.kubernetes.io/managed-by": "tpu-stacks"}


def peer_args(peer: Pods | External, namespace: str) -> k8s.networking.v1.NetworkPolicyPeerArgs:
    """A selector for pods (of `namespace` without a namespace selector), an ipBlock for outside addresses."""
    if isinstance(peer, External):
        return k8s.networking.v1.NetworkPolicyPeerArgs(
            ip_block=k8s.networking.v1.IPBlockArgs(cidr=peer.cidr, except_=list(peer.except_) or None)
        )
    pods = k8s.meta.v1.LabelSelectorArgs(match_labels=dict(peer.labels))
    if peer.namespace == namespace:
        return k8s.networking.v1.NetworkPolicyPeerArgs(pod_selector=pods)
    if peer.namespace == "*":
        every = k8s.meta.v1.LabelSelectorArgs()
        return k8s.networking.v1.NetworkPolicyPeerArgs(namespace_selector=every, pod_selector=pods)
    by_name = k8s.meta.v1.LabelSelectorArgs(match_labels={NAMESPACE_NAME_LABEL: peer.namespace})
    return k8s.networking.v1.NetworkPolicyPeerArgs(namespace_selector=by_name, pod_selector=pods)


def _peer_key(flow: Flow) -> str | None:
    """Flows whose peers become the same rule peer share a rule; hosts and any share the port-only rule (None)."""
    if isinstance(flow.peer, (Pods, External)):
        return json.dumps(flow.peer.json(), sort_keys=True)
    return None


Peers = list[k8s.networking.v1.NetworkPolicyPeerArgs] | None
Ports = list[k8s.networking.v1.NetworkPolicyPortArgs] | None


def rules(flows: Sequence[Flow], namespace: str) -> list[tuple[Peers, Ports]]:
    """(peers, ports) per rule, in the order the flows are stated: one rule per peer with all its ports.
    None peers: any peer (a port-only rule). A flow on every port becomes an entry with its protocol and
    no port ("If this field is not provided, this matches all port names and numbers", NetworkPolicyPort,
    kubernetes.io/docs/reference/kubernetes-api/policy-resources/network-policy-v1), so a TCP flow never
    opens UDP or SCTP as a rule without ports would."""
    grouped: dict[str | None, tuple[Peer, list[Flow]]] = {}
    for flow in flows:
        grouped.setdefault(_peer_key(flow), (flow.peer, []))[1].append(flow)
    out: list[tuple[Peers, Ports]] = []
    for peer, same in grouped.values():
        peers = [peer_args(peer, namespace)] if isinstance(peer, (Pods, External)) else None
        every = {f.protocol for f in same if f.port is None}
        entries: list[tuple[int | None, str]] = []
        for f in same:  # each (port, protocol) once; a protocol open on every port needs no single port
            entry = (f.port, f.protocol)
            if entry not in entries and (f.port is None or f.protocol not in every):
                entries.append(entry)
        ports: Ports = [k8s.networking.v1.NetworkPolicyPortArgs(port=port, protocol=proto) for port, proto in entries]
        out.append((peers, ports))
    return out


def policy_spec(group: Group) -> k8s.networking.v1.NetworkPolicySpecArgs:
    types = ["Ingress"] + (["Egress"] if group.restrict_egress else [])
    ingress = [
        k8s.networking.v1.NetworkPolicyIngressRuleArgs(from_=peers, ports=ports)
        for peers, ports in rules(group.of("ingress"), group.namespace)
    ]
    egress = [
        k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=peers, ports=ports)
        for peers, ports in rules(group.of("egress"), group.namespace)
    ]
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(group.labels)),
        policy_types=types,
        ingress=ingress or None,
        egress=egress if group.restrict_egress else None,
    )


def deny_all_ingress() -> k8s.networking.v1.NetworkPolicySpecArgs:
    every = k8s.meta.v1.LabelSelectorArgs()
    return k8s.networking.v1.NetworkPolicySpecArgs(pod_selector=every, policy_types=["Ingress"])


def declare_network_policies(
    name: str, namespace: str, groups: Sequence[Group], opts: pulumi.ResourceOptions
) -> list[k8s.networking.v1.NetworkPolicy]:
    """The namespace's deny-all ingress policy and one policy per contract group (all of `namespace`)."""
    for group in groups:
        if group.namespace != namespace:  # a program error (not the user's input): refused before declaring
            raise ValueError(f"group {group.name} is of namespace {group.namespace}, not {namespace}")
    policies = [
        k8s.networking.v1.NetworkPolicy(
            f"{name}-{DENY_ALL_NAME}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=DENY_ALL_NAME, namespace=namespace, labels=MANAGED),
            spec=deny_all_ingress(),
            opts=opts,
        )
    ]
    for group in groups:
        policies.append(
            k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-{group.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=group.name, namespace=namespace, labels=MANAGED, annotations={ANNOTATION: group.annotation()}
                ),
                spec=policy_spec(group),
                opts=opts,
            )
        )
    return policies
