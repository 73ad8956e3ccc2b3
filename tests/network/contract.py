"""The connectivity contract (the `tpu-stacks.dev/flows` annotation) held against an independent model.

`check(objects, flows_by_policy, nca=...)` lifts the rendered objects into pods (tests/network/cluster.py),
runs network-config-analyzer once (tests/network/analyzer.py) and returns one line per failure:
- a contract flow the policies do not allow ("blocked");
- a source/port nca lets into a guarded pod group that no contract ingress flow of the group covers
  ("wider than the contract");
- a pod of a namespace the stack creates that no annotated policy selects (host-network pods aside:
  no NetworkPolicy applies to them), or a policy other than a plain default deny without a contract
  ("no contract").
The ingress check reads nca's map of the ingress rules alone, so an ingress rule wider than the
contract fails even while the peers' egress rules hold the traffic back. Only TCP and UDP, the
contract's protocols, are compared.

A flow's end that is a node or a host-network pod is modelled here, not by nca: on GKE Dataplane V2
(Cilium) no ipBlock and no selector matches it ("CIDR rules do not apply to traffic where both sides of
the connection are either managed by Cilium or use an IP belonging to a node in the cluster (including
host networking pods)", cilium Documentation/security/policy/language.rst), and NetworkPolicy does not
apply to a host-network pod itself. Such a flow passes only through a rule with ports and no peer
(`from`/`to` absent) or a direction the pod's policies leave unrestricted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.network import analyzer
from tests.network.analyzer import ALL_PORTS, PROTOCOLS, Address, ConnectivityMap, Ranges, covers, merge, subtract
from tests.network.cluster import (
    Pod,
    namespace_labels,
    platform_pods,
    policies,
    policies_selecting,
    policy_types,
    workload_pods,
)
from tests.network.expectations import Expectations

ANNOTATION = "tpu-stacks.dev/flows"
PolicyKey = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Flow:
    direction: str  # ingress | egress, from the policy's pods' point of view
    peer: dict[str, Any]
    protocol: str
    port: int | None
    why: str

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Flow:
        return cls(raw["direction"], raw["peer"], raw["protocol"], raw.get("port"), raw.get("why", ""))

    @property
    def ports(self) -> Ranges:
        return ALL_PORTS if self.port is None else ((self.port, self.port),)

    def port_text(self) -> str:
        return f"{'all ports' if self.port is None else self.port}/{self.protocol}"

    def peer_text(self) -> str:
        kind = self.peer["kind"]
        if kind == "pods":
            labels = ",".join(f"{k}={v}" for k, v in sorted(self.peer.get("labels", {}).items())) or "any pod"
            return f"pods {self.peer['namespace']}/{{{labels}}}"
        if kind == "hosts":
            return f"hosts ({self.peer.get('what', '')})"
        if kind == "external":
            excepted = self.peer.get("except") or []
            return f"external {self.peer['cidr']}" + (f" except {','.join(excepted)}" if excepted else "")
        return "any"


def contract_from_annotations(objects: list[dict[str, Any]]) -> dict[PolicyKey, list[Flow]]:
    found = {}
    for policy in policies(objects):
        text = (policy["metadata"].get("annotations") or {}).get(ANNOTATION)
        if text is not None:
            key = (policy["metadata"]["namespace"], policy["metadata"]["name"])
            found[key] = [Flow.parse(raw) for raw in json.loads(text)]
    return found


def _rule_ports_cover(ports: list[dict[str, Any]] | None, pod: Pod | None, protocol: str, wanted: Ranges) -> bool:
    """Do a rule's ports cover `wanted` of `protocol`? Named ports resolve on `pod` (the destination)."""
    if not ports:
        return True
    ranges = []
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        port = entry.get("port")
        if port is None:
            ranges.append((1, 65535))
        elif isinstance(port, str):
            named = pod.named_ports.get(port) if pod else None
            if named and named[1] == protocol:
                ranges.append((named[0], named[0]))
        else:
            ranges.append((port, entry.get("endPort", port)))
    return covers(merge(ranges), wanted)


def host_end_passes(objects: list[dict[str, Any]], pod: Pod, direction: str, protocol: str, wanted: Ranges) -> bool:
    """Traffic between `pod` and a node or host-network pod: the pod's own policies decide, and only a
    rule without peers (or a direction none of them restricts) lets it through."""
    restricting = [p for p in policies_selecting(objects, pod) if direction.capitalize() in policy_types(p)]
    if not restricting:
        return True
    peers_key = "from" if direction == "ingress" else "to"
    named_on = pod if direction == "ingress" else None
    return any(
        not rule.get(peers_key) and _rule_ports_cover(rule.get("ports"), named_on, protocol, wanted)
        for policy in restricting
        for rule in policy["spec"].get(direction, []) or []
    )


class _Checker:
    def __init__(self, objects: list[dict[str, Any]], contract: dict[PolicyKey, list[Flow]], nca: Path):
        self.objects = objects
        self.contract = contract
        self.workload = workload_pods(objects)
        self.pods = self.workload + platform_pods()
        namespaces = namespace_labels(objects, self.pods)
        self.namespaces = namespaces
        # "full": what the policies allow; "ingress": what the ingress rules alone admit, since a guarded
        # group's ingress may not exceed its contract even where today's peers' egress rules hold it back.
        maps = analyzer.run(nca, namespaces, self.pods, {"full": policies(objects), "ingress": _ingress_only(objects)})
        self.map: ConnectivityMap = maps["full"]
        self.ingress_map: ConnectivityMap = maps["ingress"]
        self.failures: set[str] = set()
        # (destination, port) -> address ranges admitted beyond the contract, merged before reporting
        self.wide_addresses: dict[tuple[str, str], list[tuple[int, int]]] = {}

    def fail(self, what: str, source: str, destination: str, port: str, why: str = "") -> None:
        """One line: what, source -> destination, port/protocol, and the contract's reason."""
        self.failures.add(f"{what}: {source} -> {destination} {port}" + (f" ({why})" if why else ""))

    def flows_of(self, pod: Pod) -> list[tuple[PolicyKey, Flow]]:
        found = []
        for policy in policies_selecting(self.objects, pod):
            key = (policy["metadata"]["namespace"], policy["metadata"]["name"])
            found += [(key, flow) for flow in self.contract.get(key, [])]
        return found

    def peer_pods(self, peer: dict[str, Any]) -> list[Pod]:
        return [
            p
            for p in self.pods
            if peer["namespace"] in ("*", p.namespace)
            and all(p.labels.get(k) == v for k, v in (peer.get("labels") or {}).items())
        ]

    # every contract flow is allowed
    def check_flow(self, pod: Pod, flow: Flow) -> None:
        ingress = flow.direction == "ingress"
        kind = flow.peer["kind"]

        def report(other: str) -> None:
            source, destination = (other, pod.where) if ingress else (pod.where, other)
            self.fail("blocked", source, destination, flow.port_text(), flow.why)

        if kind in ("hosts", "any"):
            if not pod.host_network and not host_end_passes(
                self.objects, pod, flow.direction, flow.protocol, flow.ports
            ):
                report(flow.peer_text())
            return
        if kind == "external":
            if pod.host_network:
                return  # the node's own traffic: no NetworkPolicy applies
            wanted = analyzer.cidr_ranges(flow.peer["cidr"], flow.peer.get("except") or [])
            edges = self.map.addresses_to(pod) if ingress else self.map.addresses_from(pod)
            allowed = merge([(a.lo, a.hi) for a, ports in edges if covers(ports.get(flow.protocol, ()), flow.ports)])
            for lo, hi in subtract(wanted, allowed):
                report(f"external {Address(lo, hi)}")
            return
        others = self.peer_pods(flow.peer)
        if not others:
            report(f"{flow.peer_text()}, which matches no pod")
        for other in others:
            if other == pod:
                continue
            source, destination = (other, pod) if ingress else (pod, other)
            if source.host_network or destination.host_network:
                ok = all(
                    end.host_network or host_end_passes(self.objects, end, way, flow.protocol, flow.ports)
                    for end, way in ((source, "egress"), (destination, "ingress"))
                )
            else:
                # An ingress flow states what the destination admits (a peer such as "every pod" includes
                # pods whose own egress keeps them away); an egress flow needs both ends to agree.
                view = self.ingress_map if ingress else self.map
                ok = covers(view.allowed(source, destination).get(flow.protocol, ()), flow.ports)
            if not ok:
                report(other.where + (" (host network)" if other.host_network else ""))

    # no ingress wider than the contract
    def check_ingress(self, pod: Pod) -> None:
        flows = [flow for _, flow in self.flows_of(pod) if flow.direction == "ingress"]
        for (source, destination), allowed in self.ingress_map.edges.items():
            if destination != pod:
                continue
            for protocol in PROTOCOLS:
                ports = allowed.get(protocol, ())
                if not ports:
                    continue
                if isinstance(source, Address):
                    self._wider_from_addresses(source, pod, protocol, ports, flows)
                    continue
                covered = merge(
                    [r for f in flows if f.protocol == protocol and self._covers_pod(f, source) for r in f.ports]
                )
                for lo, hi in subtract(ports, covered):
                    self.fail("wider than the contract", source.where, pod.where, f"{_span(lo, hi)}/{protocol}")

    def _covers_pod(self, flow: Flow, source: Pod) -> bool:
        kind = flow.peer["kind"]
        if kind in ("hosts", "any"):
            return True
        if kind == "pods":
            return source in self.peer_pods(flow.peer)
        return False

    def _wider_from_addresses(self, source: Address, pod: Pod, protocol: str, ports: Ranges, flows: list[Flow]) -> None:
        cuts = sorted(
            {b for lo, hi in ports for b in (lo, hi + 1)}
            | {b for f in flows for lo, hi in f.ports for b in (lo, hi + 1)}
        )
        for lo, nxt in zip(cuts, cuts[1:]):
            hi = nxt - 1
            if not covers(ports, ((lo, hi),)):
                continue
            covering = [f for f in flows if f.protocol == protocol and covers(f.ports, ((lo, hi),))]
            if any(f.peer["kind"] in ("hosts", "any") for f in covering):
                continue
            taken = merge(
                [
                    r
                    for f in covering
                    if f.peer["kind"] == "external"
                    for r in analyzer.cidr_ranges(f.peer["cidr"], f.peer.get("except") or [])
                ]
            )
            wide = self.wide_addresses.setdefault((pod.where, f"{_span(lo, hi)}/{protocol}"), [])
            wide.extend(subtract(((source.lo, source.hi),), taken))

    # every workload pod carries a contract
    def check_coverage(self) -> None:
        declared = {o["metadata"]["name"] for o in self.objects if o["kind"] == "Namespace"}
        for policy in policies(self.objects):
            key = (policy["metadata"]["namespace"], policy["metadata"]["name"])
            if not _plain_deny(policy) and key not in self.contract:
                self.failures.add(f"no contract: policy {key[0]}/{key[1]} carries no {ANNOTATION} annotation")
        for pod in self.workload:
            if pod.namespace in declared and not pod.host_network and not self._contracted(pod):
                self.failures.add(f"no contract: pod {pod.where} is selected by no policy with a contract")

    def host_passes(self, pod: Pod, direction: str, protocol: str, ports: Ranges) -> bool:
        return host_end_passes(self.objects, pod, direction, protocol, ports)

    def _contracted(self, pod: Pod) -> bool:
        selecting = [p for p in policies_selecting(self.objects, pod) if not _plain_deny(p)]
        return any((p["metadata"]["namespace"], p["metadata"]["name"]) in self.contract for p in selecting)

    def run(self, expectations: bool = True) -> list[str]:
        if expectations:
            found = Expectations(self.objects, self.pods, self.map, self.host_passes)
            self.failures |= set(found.run())
        self.check_coverage()
        for pod in self.workload:
            for _, flow in self.flows_of(pod):
                self.check_flow(pod, flow)
            if not pod.host_network and self._contracted(pod):
                self.check_ingress(pod)
        for (destination, port), ranges in self.wide_addresses.items():
            for lo, hi in merge(ranges):
                self.fail("wider than the contract", f"external {Address(lo, hi)}", destination, port)
        return sorted(self.failures)


def _plain_deny(policy: dict[str, Any]) -> bool:
    """A namespace's default deny (every pod, no rules): the one policy without a contract of its own."""
    spec = policy["spec"]
    return not spec.get("podSelector") and not spec.get("ingress") and not spec.get("egress")


def _ingress_only(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The policies with their egress rules taken out (every pod's egress left open)."""
    found = []
    for policy in policies(objects):
        if "Ingress" in policy_types(policy):
            spec = {k: v for k, v in policy["spec"].items() if k != "egress"}
            found.append({**policy, "spec": {**spec, "policyTypes": ["Ingress"]}})
    return found


def _span(lo: int, hi: int) -> str:
    if (lo, hi) == (1, 65535):
        return "all ports"
    return str(lo) if lo == hi else f"{lo}-{hi}"


def check(
    objects: list[dict[str, Any]],
    flows_by_policy: dict[PolicyKey, list[Flow | dict]] | None = None,
    *,
    nca: Path,
    expectations: bool = True,
) -> list[str]:
    """Failures of the contract against nca's connectivity map, one line each, sorted; with
    `expectations`, also the flows derived from the rendered objects (tests/network/expectations.py).

    `flows_by_policy` maps (namespace, policy name) to its flows (Flow or the annotation's dicts); None
    reads them from the `tpu-stacks.dev/flows` annotations of the objects themselves."""
    if flows_by_policy is None:
        contract = contract_from_annotations(objects)
    else:
        contract = {
            key: [f if isinstance(f, Flow) else Flow.parse(f) for f in flows] for key, flows in flows_by_policy.items()
        }
    return _Checker(objects, contract, nca).run(expectations)


def transplant(contract_objects: list[dict[str, Any]], objects: list[dict[str, Any]]) -> dict[PolicyKey, list[Flow]]:
    """The contract annotated on `contract_objects` (say, a newer plan) moved onto the policies of
    `objects` (an older plan) that select the same pods: same namespace and podSelector, else same name."""
    contract = contract_from_annotations(contract_objects)
    selectors = {
        (p["metadata"]["namespace"], json.dumps(p["spec"].get("podSelector"), sort_keys=True)): p["metadata"]["name"]
        for p in policies(objects)
    }
    names = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in policies(objects)}
    moved: dict[PolicyKey, list[Flow]] = {}
    for policy in policies(contract_objects):
        key = (policy["metadata"]["namespace"], policy["metadata"]["name"])
        if key not in contract:
            continue
        selector = json.dumps(policy["spec"].get("podSelector"), sort_keys=True)
        name = selectors.get((key[0], selector)) or (key[1] if key in names else None)
        if name:
            moved.setdefault((key[0], name), []).extend(contract[key])
    return moved


def _load(folder: Path) -> list[dict[str, Any]]:
    import yaml

    return [doc for path in sorted(folder.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]


def main(argv: list[str] | None = None) -> int:
    """Check a folder of rendered manifests (`tpu-stacks plan --manifests DIR`) against its own
    annotations, or against the contract annotated in another folder (--contract DIR)."""
    import argparse

    from tests.network.nca_venv import ensure_nca

    parser = argparse.ArgumentParser(prog="python -m tests.network.contract", description=main.__doc__)
    parser.add_argument("manifests", type=Path, help="folder of the stack's rendered manifests")
    parser.add_argument("--contract", type=Path, help="folder whose tpu-stacks.dev/flows annotations to hold them to")
    args = parser.parse_args(argv)
    objects = _load(args.manifests)
    flows = transplant(_load(args.contract), objects) if args.contract else None
    root = Path(__file__).resolve().parents[2]
    failures = check(objects, flows, nca=ensure_nca(root / ".pytest_cache" / "d" / "nca-venv"))
    print("\n".join(f"{args.manifests.name}: {line}" for line in failures) or "no failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
