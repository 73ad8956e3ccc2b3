"""network-config-analyzer (nca, PyPI `network-config-analyzer`, github.com/np-guard/network-config-analyzer)
run on a cluster model, and its connectivity map parsed.

nca's facts this relies on, read in its source at v2.1.0:
- An `ipBlock` peer is parsed into an IP range and nothing else (nca/Parsers/K8sPolicyYamlParser.py,
  parse_peer: "If ipBlock is set then neither of podSelector or namespaceSelector can be", then
  parse_ip_block returns a PeerSet holding one IpBlock); pods are a separate kind of peer with no
  address (nca/CoreDS/Peer.py, class Pod), so an ipBlock never admits a pod. That is what GKE Dataplane
  V2 does: "CIDR rules do not apply to traffic where both sides of the connection are either managed by
  Cilium or use an IP belonging to a node in the cluster (including host networking pods)" (cilium
  Documentation/security/policy/language.rst).
- nca knows nothing of host networking (no `hostNetwork` in its source): host-network pods are left
  out of its input and modelled by the caller.
- `--output_format txt_no_fw_rules` prints one line per pair of peers, `src => dst : connections`,
  without minimising rules, and leaves out a pod's connections to itself
  (nca/FWRules/ConnectivityGraph.py, get_connections_without_fw_rules_txt_format). A pod is written
  `namespace/name` (with `--output_endpoints pods`); an address range `a.b.c.d-e.f.g.h`, one address
  `a.b.c.d` (IpBlock.get_ip_range_or_cidr_str). The ranges are split at every boundary a policy names,
  so each line's range is allowed uniformly.
- Connections are "All connections", or cubes `{protocols:TCP, UDP,dst_ports:53}` joined by commas, or
  "All but {...}" when the complement is shorter
  (nca/CoreDS/ConnectivityProperties.py, get_simplified_connections_representation).
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.network.cluster import Pod

PROTOCOLS = ("TCP", "UDP")  # the contract's vocabulary; other protocols are not compared
ALL_PORTS = ((1, 65535),)
Ranges = tuple[tuple[int, int], ...]
Ports = dict[str, Ranges]


def merge(ranges: list[tuple[int, int]] | Ranges) -> Ranges:
    result: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if result and lo <= result[-1][1] + 1:
            result[-1] = (result[-1][0], max(hi, result[-1][1]))
        else:
            result.append((lo, hi))
    return tuple(result)


def subtract(ranges: Ranges, taken: Ranges) -> Ranges:
    result = list(ranges)
    for tlo, thi in taken:
        pieces = []
        for lo, hi in result:
            if thi < lo or tlo > hi:
                pieces.append((lo, hi))
                continue
            if lo < tlo:
                pieces.append((lo, tlo - 1))
            if hi > thi:
                pieces.append((thi + 1, hi))
        result = pieces
    return tuple(result)


def covers(ranges: Ranges, wanted: Ranges) -> bool:
    return not subtract(wanted, ranges)


@dataclass(frozen=True)
class Address:
    """A range of addresses nca printed as a peer (lo..hi as integers)."""

    lo: int
    hi: int

    def __str__(self) -> str:
        first, last = ipaddress.ip_address(self.lo), ipaddress.ip_address(self.hi)
        return str(first) if first == last else f"{first}-{last}"


def cidr_ranges(cidr: str, excepted: list[str] | tuple[str, ...] = ()) -> Ranges:
    network = ipaddress.ip_network(cidr, strict=False)
    whole = ((int(network.network_address), int(network.broadcast_address)),)
    holes = []
    for hole in excepted:
        net = ipaddress.ip_network(hole, strict=False)
        holes.append((int(net.network_address), int(net.broadcast_address)))
    return subtract(whole, merge(holes))


def _parse_address(text: str) -> Address | None:
    text = text.strip()
    try:
        if "/" in text:
            network = ipaddress.ip_network(text, strict=False)
            return Address(int(network.network_address), int(network.broadcast_address))
        if "-" in text:
            first, last = text.split("-", 1)
            return Address(int(ipaddress.ip_address(first)), int(ipaddress.ip_address(last)))
        return Address(int(ipaddress.ip_address(text)), int(ipaddress.ip_address(text)))
    except ValueError:
        return None


def _parse_ports(text: str) -> Ranges:
    ranges = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        ranges.append((int(lo), int(hi or lo)))
    return merge(ranges)


def _parse_protocols(text: str) -> set[str]:
    text = text.strip()
    if text == "*":
        return set(PROTOCOLS)
    if text.startswith("all but "):
        return set(PROTOCOLS) - {name.strip().upper() for name in text[len("all but ") :].split(",")}
    return {name.strip().upper() for name in text.split(",")} & set(PROTOCOLS)


def parse_connections(text: str) -> Ports:
    """nca's connection string as the TCP and UDP ports it allows."""
    text = text.strip()
    if text == "All connections":
        return {protocol: ALL_PORTS for protocol in PROTOCOLS}
    if text.startswith("All but "):
        taken = parse_connections(text[len("All but ") :])
        return {p: r for p in PROTOCOLS if (r := subtract(ALL_PORTS, taken.get(p, ())))}
    allowed: dict[str, list[tuple[int, int]]] = {}
    for cube in re.findall(r"\{([^{}]*)\}", text):
        fields = dict(re.findall(r"(\w+):(.*?)(?=,\s*\w+:|$)", cube))
        protocols = _parse_protocols(fields["protocols"]) if "protocols" in fields else set(PROTOCOLS)
        ports = _parse_ports(fields["dst_ports"]) if "dst_ports" in fields else ALL_PORTS
        for protocol in protocols:
            allowed.setdefault(protocol, []).extend(ports)
    return {protocol: merge(ranges) for protocol, ranges in allowed.items()}


Peer = Pod | Address


@dataclass
class ConnectivityMap:
    """What nca allows: (source, destination) -> ports by protocol; a peer is a Pod or an Address."""

    edges: dict[tuple[Peer, Peer], Ports]

    def allowed(self, source: Peer, destination: Peer) -> Ports:
        return self.edges.get((source, destination), {})

    def addresses_to(self, destination: Pod) -> list[tuple[Address, Ports]]:
        return [(s, p) for (s, d), p in self.edges.items() if d == destination and isinstance(s, Address)]

    def addresses_from(self, source: Pod) -> list[tuple[Address, Ports]]:
        return [(d, p) for (s, d), p in self.edges.items() if s == source and isinstance(d, Address)]


def parse_map(text: str, pods: list[Pod]) -> ConnectivityMap:
    by_name = {f"{p.namespace}/{p.name}": p for p in pods}
    edges: dict[tuple[Peer, Peer], Ports] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(\S+) => (\S+) : (.*)", line.strip())
        if not match:
            continue
        if any(name.endswith("-livesim") for name in match.group(1, 2)):
            continue  # a pod nca adds on its own for a selector nothing matched (docs/SimulatingLiveClusterMissingResources.md)
        ends = []
        for name in match.group(1, 2):
            peer = by_name.get(name) or _parse_address(name)
            if peer is None:
                raise ValueError(f"nca printed a peer this model does not know: {name!r} in {line!r}")
            ends.append(peer)
        # nca prints one line per connection cube, so a pair may stand on several lines (TCP, then UDP).
        known = edges.setdefault((ends[0], ends[1]), {})
        for protocol, ranges in parse_connections(match.group(3)).items():
            known[protocol] = merge([*known.get(protocol, ()), *ranges])
    return ConnectivityMap(edges)


def _pod_object(pod: Pod) -> dict[str, Any]:
    ports = [
        {"name": name, "containerPort": port, "protocol": protocol}
        for name, (port, protocol) in pod.named_ports.items()
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "labels": pod.labels},
        "spec": {"containers": [{"name": "main", "image": "model", **({"ports": ports} if ports else {})}]},
    }


def write_input(directory: Path, namespaces: dict[str, dict[str, str]], pods: list[Pod]) -> Path:
    """Namespaces and Pods (host-network pods left out: nca cannot model them) in one file."""
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        for name, labels in namespaces.items()
    ]
    objects += [_pod_object(p) for p in pods if not p.host_network]
    path = directory / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=True))
    return path


def write_policies(path: Path, policies: list[dict[str, Any]]) -> Path:
    clean = [
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": p["metadata"]["name"], "namespace": p["metadata"]["namespace"]},
            "spec": p["spec"],
        }
        for p in policies
    ]
    path.write_text(yaml.safe_dump_all(clean, sort_keys=True) if clean else "")
    return path


def run(
    nca: Path, namespaces: dict[str, dict[str, str]], pods: list[Pod], views: dict[str, list[dict[str, Any]]]
) -> dict[str, ConnectivityMap]:
    """nca's connectivity map of the same pods under each set of policies, from one nca process (a
    scheme file with one NetworkConfig and one connectivityMap query per set, docs/SchemeFileFormat.md)."""
    with tempfile.TemporaryDirectory(prefix="nca-") as folder:
        directory = Path(folder)
        cluster = write_input(directory, namespaces, pods)
        configs, queries = [], []
        for name, policies in views.items():
            policy_file = write_policies(directory / f"policies-{name}.yaml", policies)
            configs.append({"name": name, "resourceList": [str(cluster)], "networkPolicyList": [str(policy_file)]})
            output = {
                "outputFormat": "txt_no_fw_rules",
                "outputEndpoints": "pods",
                "outputPath": str(directory / f"{name}.txt"),
            }
            queries.append({"name": f"map-{name}", "connectivityMap": [name], "outputConfiguration": output})
        scheme = directory / "scheme.yaml"
        scheme.write_text(yaml.safe_dump({"networkConfigList": configs, "queries": queries}, sort_keys=False))
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        done = subprocess.run([str(nca), "--scheme", str(scheme)], capture_output=True, text=True, timeout=300, env=env)
        outputs = {name: directory / f"{name}.txt" for name in views}
        if done.returncode != 0 or not all(path.is_file() for path in outputs.values()):
            raise RuntimeError(f"nca failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
        modelled = [p for p in pods if not p.host_network]
        return {name: parse_map(path.read_text(), modelled) for name, path in outputs.items()}
