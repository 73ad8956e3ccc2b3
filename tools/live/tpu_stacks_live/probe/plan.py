"""Which probes a stack gets: one per kind of flow its contract names, per policy, plus peer and deny probes.

Every probe follows a flow of the `tpu-stacks.dev/flows` annotation (contract.py), with the answer it expects:
- `dns` (egress to hosts on 53): three names resolve through the pod's resolver (getaddrinfo). The three forms
  Kubernetes DNS answers for a pod (kubernetes.io/docs/concepts/services-networking/dns-pod-service/,
  "Namespaces of Services": a query without a namespace is limited to the pod's namespace): a Service of the
  stack by its short name (through the search list), `kubernetes.default` (namespace-qualified: the API
  server's Service, in every cluster), and `storage.googleapis.com.` (fully qualified, outside the cluster:
  the trailing dot skips the search list; the name docs/verify-on-a-cluster.md "Does DNS work" resolves).
  Expected: `resolved` for each, and for the external name queried over TCP too (the contract opens 53 UDP
  and TCP; getaddrinfo takes UDP).
- `tpu-runtime` (egress to hosts on 8353), `tpu-device-plugin-metrics` (2112), `host-port` (any other port-only
  egress to hosts): one TCP connect to the pod's own node (`status.hostIP`). Expected: `connected`, or
  `refused` (a reset from the node: the packet left the pod, so the port-only rule let it out; a probe pod is
  not on a TPU node, where nothing listens on 8353). A drop by the policy is a timeout. That a node resets
  rather than drops: Kubernetes' own COS node setup accepts all inbound TCP ("The GCI image has host firewall
  which drop most inbound/forwarded packets", kubernetes/kubernetes cluster/gce/gci/configure-helper.sh,
  `config-ip-firewall`); GKE's node setup is not public, so a timeout names the node's firewall too.
- `metadata-server` (egress to 169.254.169.254/32 on 80): GET of the service account's e-mail with
  `Metadata-Flavor: Google` (docs/verify-on-a-cluster.md, "Does Workload Identity work"). Expected: `http`.
- `google-apis` (egress outside the private ranges on 443): TCP connect to storage.googleapis.com:443.
  Expected: `connected`.
- `api-server` (egress to any peer on 443, `api_endpoint()`: the metrics adapter, the picker, a Ray head with
  its autoscaler, a gateway smoke test): GET /version of `https://$KUBERNETES_SERVICE_HOST:$PORT` as the
  group's service account. Expected: `http` (any status: the API server answered).
- `peer` (a `pods` peer, either direction, both ends in namespaces the stack creates): a pod with the client's
  labels connects to a running pod of the server's labels on the port. Expected: `connected` or `refused`.
- `deny` (one per policy whose ingress admits only labelled pods on a port): a pod with no label the contract
  names connects there. Expected: `timeout` or `unreachable`: Cilium drops what no policy allows, without a
  reset (its connectivity tests expect `ResultPolicyDenyEgressDrop`, cilium/cilium-cli connectivity/builder/
  client_egress_to_cidr_deny.go; docs/verify-on-a-cluster.md's own probes "time out").
Not tried: flows whose peer lives in a namespace the stack does not own (kube-system's konnectivity-agent,
gmp-system's collectors, a KubeRay the user installed), outside addresses (load-balancer clients, the gateway's
proxy-only subnet and health checkers: a pod cannot stand in for them), the Dataplane V1 metadata address
169.254.169.252:988, and port-only egress on ports other than 443 (a Gateway's address known only at `up`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.k8s.platform_flows import (
    DNS_PORT,
    HTTPS_PORT,
    METADATA_SERVER,
    TPU_DEVICE_PLUGIN_METRICS_PORT,
    TPU_RUNTIME_PORT,
)
from tpu_stacks_live.probe import contract
from tpu_stacks_live.probe.contract import Group

GOOGLE_API_HOST = "storage.googleapis.com"
DOCS = "docs/verify-on-a-cluster.md"
ALLOWED = frozenset({"connected", "refused"})
DENIED = frozenset({"timeout", "unreachable"})


@dataclass(frozen=True)
class Target:
    """The server end of a peer or deny probe: a running pod of `labels` in `namespace`, found when the probe runs
    (its address is known only then). `port` None: any port (the flow covers all), the pod's first declared one."""

    namespace: str
    labels: dict[str, str] = field(hash=False)
    port: int | None = None


@dataclass(frozen=True)
class Probe:
    """One probe pod: where it runs, the labels it carries, what it tries and what answer passes."""

    kind: str
    check: str
    """`probe-<kind>:<where>`: the verdict's check name; `verify --only probe-<kind>` selects one kind."""
    namespace: str
    labels: dict[str, str] = field(hash=False)
    attempts: tuple[dict[str, Any], ...] = field(hash=False)
    expect: frozenset[str]
    what: str
    """The flow in words, for the verdict's detail."""
    fix: str
    service_account: str | None = None
    api_token: bool = False
    target: Target | None = None


def _egress(group: Group, kind: str, port: int | None = None) -> list[dict[str, Any]]:
    return [
        f
        for f in group.flows
        if f["direction"] == "egress" and f["peer"]["kind"] == kind and (port is None or f["port"] == port)
    ]


def _probe(
    group: Group, kind: str, attempts: list[dict[str, Any]], expect: frozenset[str], what: str, fix: str, **more: Any
) -> Probe:
    return Probe(
        kind,
        f"probe-{kind}:{group.name}",
        group.namespace,
        dict(group.labels),
        tuple(attempts),
        expect,
        what,
        fix,
        **more,
    )


def dns_probe(group: Group, objects: list[dict[str, Any]]) -> Probe | None:
    if not _egress(group, "hosts", DNS_PORT):
        return None
    names = [("namespace-qualified", "kubernetes.default"), ("external", f"{GOOGLE_API_HOST}.")]
    short = contract.first_service(objects, group.namespace)
    if short is not None:
        names.insert(0, ("short", short))
    attempts = [{"id": form, "op": "resolve", "name": name} for form, name in names]
    attempts.append({"id": "tcp", "op": "dns-tcp", "name": f"{GOOGLE_API_HOST}."})  # the contract's 53/TCP
    fix = (
        f"NetworkPolicy {group.name} must let its pods out on 53 UDP and TCP to any peer (dns() in "
        f"k8s/platform_flows.py); if it does, see {DOCS} 'Does DNS work with NodeLocal DNSCache and Cloud DNS?'"
    )
    what = "DNS: " + ", ".join(n for _, n in names) + f", and {GOOGLE_API_HOST}. over TCP"
    return _probe(group, "dns", attempts, frozenset({"resolved"}), what, fix)


def host_port_probes(group: Group) -> list[Probe]:
    kinds = {TPU_RUNTIME_PORT: "tpu-runtime", TPU_DEVICE_PLUGIN_METRICS_PORT: "tpu-device-plugin-metrics"}
    probes, seen = [], set()
    for flow in _egress(group, "hosts"):
        port = flow["port"]
        if port in (DNS_PORT, None) or port in seen:
            continue
        seen.add(port)
        kind = kinds.get(port, "host-port")
        fix = (
            f"NetworkPolicy {group.name} must let its pods out on {port}/{flow['protocol']} with no peer "
            f"(a port-only rule: {flow['why']}); if it does, the node's own firewall dropped it; see {DOCS} "
            "'How does libtpu reach the node's TPU runtime'"
        )
        attempt = {"id": f"node:{port}", "op": "connect", "host": "$NODE_IP", "port": port}
        probe = _probe(group, kind, [attempt], ALLOWED, f"the node's port {port} ({flow['why']})", fix)
        probes.append(probe if kind != "host-port" else _renamed(probe, f"probe-host-port-{port}:{group.name}"))
    return probes


def _renamed(probe: Probe, check: str) -> Probe:
    return Probe(**{**probe.__dict__, "check": check})


def metadata_probe(group: Group) -> Probe | None:
    cidr, port = METADATA_SERVER
    if not [f for f in _egress(group, "external", port) if f["peer"]["cidr"] == cidr]:
        return None
    address = cidr.split("/")[0]
    url = f"http://{address}/computeMetadata/v1/instance/service-accounts/default/email"
    attempt = {"id": "metadata", "op": "http", "url": url, "headers": {"Metadata-Flavor": "Google"}}
    fix = (
        f"NetworkPolicy {group.name} must let its pods out to {cidr} on {port} (metadata_server() in "
        f"k8s/platform_flows.py); see {DOCS} 'Does Workload Identity work from pods whose egress is restricted?'"
    )
    what = f"the metadata server {address}:{port}"
    return _probe(group, "metadata-server", [attempt], frozenset({"http"}), what, fix)


def google_apis_probe(group: Group) -> Probe | None:
    if not [f for f in _egress(group, "external", HTTPS_PORT) if f["peer"]["cidr"] == "0.0.0.0/0"]:
        return None
    attempt = {"id": "google-apis", "op": "connect", "host": GOOGLE_API_HOST, "port": HTTPS_PORT}
    fix = (
        f"NetworkPolicy {group.name} must let its pods out on {HTTPS_PORT} outside the private ranges "
        "(google_apis() in k8s/platform_flows.py); if it does, the subnet needs Private Google Access or Cloud NAT"
    )
    return _probe(group, "google-apis", [attempt], frozenset({"connected"}), f"{GOOGLE_API_HOST}:{HTTPS_PORT}", fix)


def api_server_probe(group: Group, objects: list[dict[str, Any]]) -> Probe | None:
    if not [f for f in _egress(group, "any", HTTPS_PORT) if f["protocol"] == "TCP"]:
        return None
    url = "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/version"
    attempt = {"id": "api-server", "op": "http", "url": url, "token": True}
    fix = (
        f"NetworkPolicy {group.name} must let its pods out on {HTTPS_PORT} to any peer (api_endpoint() in "
        f"k8s/platform_flows.py); see {DOCS} 'Does the API server reach the custom-metrics adapter'"
    )
    account = contract.service_account(objects, group.namespace, group.labels)
    return _probe(
        group,
        "api-server",
        [attempt],
        frozenset({"http"}),
        "the Kubernetes API server (/version)",
        fix,
        service_account=account,
        api_token=True,
    )


def _label_text(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "any pod"


def _end(all_groups: list[Group], namespace: str, labels: dict[str, str]) -> str:
    """A connection's end named by the policy of exactly those labels, else by the labels."""
    same = [g for g in all_groups if g.namespace == namespace and g.labels == labels]
    return same[0].name if same else f"{namespace}/{{{_label_text(labels)}}}"


def peer_probes(all_groups: list[Group], owned: set[str]) -> list[Probe]:
    """Every `pods` flow between namespaces the stack owns, once per (client, server, port): an ingress flow's
    client is its peer, an egress flow's client the group itself."""
    probes, seen = [], set()
    for group in all_groups:
        for flow in group.flows:
            peer = flow["peer"]
            if peer["kind"] != "pods" or flow["protocol"] != "TCP":
                continue
            peer_namespace = group.namespace if peer["namespace"] == "*" else peer["namespace"]
            ends = [(peer_namespace, dict(peer["labels"])), (group.namespace, dict(group.labels))]
            client, server = ends if flow["direction"] == "ingress" else ends[::-1]
            key = json.dumps([client, server, flow["port"]], sort_keys=True)
            if client[0] not in owned or server[0] not in owned or key in seen:
                continue
            seen.add(key)
            name = f"{_end(all_groups, *client)}->{_end(all_groups, *server)}:{flow['port'] or 'any'}"
            fix = (
                f"the contract names this connection ({flow['why']}): the server's NetworkPolicy must admit it and "
                f"the client's let it out; {DOCS} 'Set up once' shows how to read the deny log"
            )
            probes.append(
                Probe(
                    "peer",
                    f"probe-peer:{name}",
                    client[0],
                    client[1],
                    (),
                    ALLOWED,
                    name,
                    fix,
                    target=Target(server[0], server[1], flow["port"]),
                )
            )
    return probes


def deny_port(all_groups: list[Group], group: Group) -> int | None:
    """A port where `group`'s pods admit only labelled pods (by every policy that selects them), so a pod with none
    of those labels must be refused; None when every such port is also open to any peer or to every pod."""
    selecting = contract.policies_selecting(all_groups, group.namespace, group.labels)
    ingress = [f for g in selecting for f in g.flows if f["direction"] == "ingress" and f["protocol"] == "TCP"]

    def open_to_all(port: int) -> bool:
        return any(
            f["port"] in (port, None)
            and (f["peer"]["kind"] in ("any", "hosts") or (f["peer"]["kind"] == "pods" and not f["peer"]["labels"]))
            for f in ingress
        )

    for flow in ingress:
        if flow["peer"]["kind"] == "pods" and flow["peer"]["labels"] and flow["port"] and not open_to_all(flow["port"]):
            return int(flow["port"])
    return None


def deny_probes(all_groups: list[Group]) -> list[Probe]:
    probes = []
    for group in all_groups:
        port = deny_port(all_groups, group)
        if port is None:
            continue
        fix = (
            f"NetworkPolicy {group.name} (or another policy selecting its pods) admits a pod the contract does not "
            f"name on {port}: compare its ingress rules with its tpu-stacks.dev/flows annotation"
        )
        what = f"a pod with no label the contract admits -> {group.name}:{port}"
        probes.append(
            Probe(
                "deny",
                f"probe-deny:{group.name}:{port}",
                group.namespace,
                {},
                (),
                DENIED,
                what,
                fix,
                target=Target(group.namespace, dict(group.labels), port),
            )
        )
    return probes


def probes(objects: list[dict[str, Any]]) -> list[Probe]:
    """The stack's probes, from its objects' annotated NetworkPolicies, in the policies' order."""
    all_groups = contract.groups(objects)
    found: list[Probe | None] = []
    for group in all_groups:
        found += [dns_probe(group, objects), *host_port_probes(group), metadata_probe(group)]
        found += [google_apis_probe(group), api_server_probe(group, objects)]
    found += peer_probes(all_groups, contract.owned_namespaces(objects))
    found += deny_probes(all_groups)
    return [p for p in found if p is not None]


def probe_image(objects: list[dict[str, Any]]) -> str:
    """The smoke test's Python image when the stack has one (the same pinned image, from the user's registry if
    they moved it there), else the catalogue's (`tpu_stacks.images.PYTHON_IMAGE`)."""
    return contract.image(objects, PYTHON_IMAGE)
