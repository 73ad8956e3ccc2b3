"""The connectivity contract: which flows each pod group needs, stated next to its pods, with the reason.

Each workload's `network.py` returns `Group`s: the labels its pod template carries (one dict, so the
policy cannot select other pods) and the flows those pods need, in both directions. Nothing here
imports Pulumi: `k8s.network_policy` turns a group into a NetworkPolicy (and writes the group's
flows on it as the `tpu-stacks.dev/flows` annotation), docs/security.md shows the same flows, and an
independent checker reads the annotation back from rendered manifests.

A peer is one of:
- `Pods`: pods by labels, in one namespace (written out by name) or in every namespace ("*");
- `Hosts`: nodes and host-network pods. On GKE Dataplane V2 (Cilium) no `ipBlock` and no selector
  matches them: "CIDR rules do not apply to traffic where both sides of the connection are either
  managed by Cilium or use an IP belonging to a node in the cluster (including host networking
  pods)" (cilium Documentation/security/policy/language.rst). Such a flow is served by a port-only
  rule (the port, no peer), which honestly opens that port to every peer;
- `External`: addresses outside the cluster (internet, Google APIs, load-balancer clients whose
  address is preserved, the metadata server's documented address), matched by `ipBlock`;
- `Anything`: any peer at all, for an end whose address cannot be known when planning (a port-only rule).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

Direction = Literal["ingress", "egress"]
Protocol = Literal["TCP", "UDP"]
ANNOTATION = "tpu-stacks.dev/flows"


@dataclass(frozen=True)
class Pods:
    """Pods of `namespace` ("*": of every namespace) whose labels include `labels` ({}: all pods there)."""

    namespace: str
    labels: dict[str, str] = field(default_factory=dict, hash=False)

    def json(self) -> dict[str, object]:
        return {"kind": "pods", "namespace": self.namespace, "labels": dict(self.labels)}


@dataclass(frozen=True)
class Hosts:
    """Nodes and host-network pods: `what` they are (a port-only rule serves them)."""

    what: str

    def json(self) -> dict[str, object]:
        return {"kind": "hosts", "what": self.what}


@dataclass(frozen=True)
class External:
    """Addresses outside the cluster: a CIDR with its network address (host bits refused), minus `except_`."""

    cidr: str
    except_: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for cidr in (self.cidr, *self.except_):
            ipaddress.ip_network(cidr, strict=True)  # ValueError: a contract names ranges, not addresses

    def json(self) -> dict[str, object]:
        return {"kind": "external", "cidr": self.cidr, "except": list(self.except_)}


@dataclass(frozen=True)
class Anything:
    """Any peer: an end whose address is not known when planning (served by a port-only rule)."""

    def json(self) -> dict[str, object]:
        return {"kind": "any"}


Peer = Union[Pods, Hosts, External, Anything]
ANY = Anything()


@dataclass(frozen=True)
class Flow:
    """One connection the group needs: direction from the group's point of view, peer, protocol, port."""

    direction: Direction
    peer: Peer
    protocol: Protocol
    port: int | None
    """None: every port."""
    why: str

    def json(self) -> dict[str, object]:
        return {
            "direction": self.direction,
            "peer": self.peer.json(),
            "protocol": self.protocol,
            "port": self.port,
            "why": self.why,
        }


def ingress(peer: Peer, ports: Sequence[int | None], why: str, protocol: Protocol = "TCP") -> tuple[Flow, ...]:
    return tuple(Flow("ingress", peer, protocol, port, why) for port in ports)


def egress(peer: Peer, ports: Sequence[int | None], why: str, protocol: Protocol = "TCP") -> tuple[Flow, ...]:
    return tuple(Flow("egress", peer, protocol, port, why) for port in ports)


@dataclass(frozen=True)
class Group:
    """A group of pods (selected by exactly the labels their template carries) and the flows they need."""

    name: str
    namespace: str
    labels: dict[str, str] = field(hash=False)
    flows: tuple[Flow, ...] = ()
    restrict_egress: bool = True
    """False: the policy leaves egress open (the reason is in the workload's docstring); flows still list it."""

    def of(self, direction: Direction) -> tuple[Flow, ...]:
        return tuple(f for f in self.flows if f.direction == direction)

    def annotation(self) -> str:
        """The flows as compact JSON, in the order stated, keys sorted: what the checker reads back."""
        return json.dumps([f.json() for f in self.flows], separators=(",", ":"), sort_keys=True)


def unique(flows: Iterable[Flow]) -> tuple[Flow, ...]:
    """The flows in order, each once (a peer stated by two reasons keeps the first)."""
    seen: list[tuple[str, str, str, int | None]] = []
    kept = []
    for flow in flows:
        key = (flow.direction, json.dumps(flow.peer.json(), sort_keys=True), flow.protocol, flow.port)
        if key not in seen:
            seen.append(key)
            kept.append(flow)
    return tuple(kept)
