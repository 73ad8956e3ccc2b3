"""Flows a stack needs, derived from its rendered objects rather than from its contract.

The contract check (tests/network/contract.py) can only confirm the flows our code declares: a flow the
`tpu-stacks.dev/flows` annotation leaves out is never looked for. The expectations here are read from
the Services, APIServices, PodMonitorings, Ray clusters and pod specs themselves, and held against the
same network-config-analyzer map (one nca process per stack):

- "service": a LoadBalancer Service's targetPorts admit the addresses of its
  `loadBalancerSourceRanges` (everywhere when none), and it keeps the client address with
  `externalTrafficPolicy: Local`: with `Cluster` a node that has no backend forwards the request
  under its own address, which no ipBlock matches on Dataplane V2 (cilium
  Documentation/security/policy/caveats.rst; https://kubernetes.io/docs/tasks/access-application-cluster/create-external-load-balancer/#preserving-the-client-source-ip).
  A ClusterIP Service annotated `tpu-stacks.dev/clients: cluster` admits a pod of another namespace;
  otherwise its callers (next) are its clients.
- "caller": a pod whose env values, args, command or mounted/referenced ConfigMap data name a Service
  (`<service>` in its own namespace, `<service>.<ns>`, `<service>.<ns>.svc...`, with or without
  `:<port>`) reaches the Service's pods on the target port: its egress and their ingress agree.
- "apiservice": the API server reaches an aggregated API's pods through the konnectivity agents in
  kube-system (https://kubernetes.io/docs/tasks/extend-kubernetes/setup-konnectivity/), on the target
  port of the APIService's `spec.service.port` (443 when unset,
  https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/api-service-v1/).
- "scrape": every PodMonitoring / ClusterPodMonitoring endpoint port is reachable from the Managed
  Prometheus collectors (https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed).
- "healthcheck": a load balancer's health checks reach what they check. A GKE HealthCheckPolicy's target (a
  Service's pods, an InferencePool's selected pods) admits Google's health-check ranges, 35.191.0.0/16 and
  130.211.0.0/22 ("Health check ranges" of the regional Application Load Balancers,
  https://cloud.google.com/load-balancing/docs/firewall-rules), on the policy's fixed port. An InferencePool's
  endpoint picker is a backend of the load balancer too: without a policy on its Service, GKE checks it on gRPC
  9003 ("The GKE gateway controller health-checks the EPP backend on gRPC port 9003 by default", llm-d/llm-d-router
  v0.10.0 config/charts/llm-d-router-gateway/templates/gke.yaml:39-40), so that port must be admitted.
- "ray": in one Ray cluster, workers reach the head's GCS (`port`, 6379), dashboard (`dashboard-port`,
  8265) and client server (`ray-client-server-port`, 10001), and every node reaches every other
  node's node manager and object manager (`node-manager-port`, `object-manager-port`: a random port
  unless set, so any TCP port) and worker ports (`min-worker-port`..`max-worker-port`, 10002-19999)
  (https://docs.ray.io/en/latest/ray-core/configure.html#ports-configurations). rayStartParams of the
  rendered RayCluster override the defaults. A RayJob's submitter (K8sJobMode, the default) reaches
  its cluster's head on the dashboard port: KubeRay runs `ray job submit --address http://<dashboard
  URL>` in it (ray-project/kuberay ray-operator/controllers/ray/rayjob_controller.go,
  getSubmitterTemplate; pinned by TestGetSubmitterTemplate in rayjob_controller_unit_test.go).
- "ray-operator": a pod of another namespace that carries the KubeRay operator's labels (the impostor of
  tests/network/cluster.py) reaches no port of a Ray pod that a plain pod of its namespace (the tenant)
  does not. The operator calls a head's dashboard and job API, which run code as the workload's service
  account; a label is set by whoever creates the pod, so only the operator's own namespace (GKE's add-on:
  konnectivity-agent in kube-system) may be trusted with it.

Each failure is one line: `expectation <name>: <source> -> <destination> <port>/<protocol> (<detail>)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.network.analyzer import ALL_PORTS, Address, ConnectivityMap, Ranges, cidr_ranges, covers, merge, subtract
from tests.network.cluster import Pod, selects

CLUSTER_CLIENTS = "tpu-stacks.dev/clients"  # a Service annotation: "cluster" = meant for every namespace
HostPasses = Callable[[Pod, str, str, Ranges], bool]  # (pod, direction, protocol, ports) through a node

# Ray's documented ports (https://docs.ray.io/en/latest/ray-core/configure.html#ports-configurations):
# rayStartParams key -> default; None is "a random port" (any TCP port must be open).
RAY_HEAD_PORTS = {"port": 6379, "dashboard-port": 8265, "ray-client-server-port": 10001}
RAY_NODE_PORTS = {"node-manager-port": None, "object-manager-port": None}
RAY_WORKER_PORTS = ("min-worker-port", 10002, "max-worker-port", 19999)
HEALTH_CHECK_SOURCES = ("35.191.0.0/16", "130.211.0.0/22")  # the firewall-rules page (module docstring)
GKE_PICKER_HEALTH_PORT = 9003  # GKE's default check of an InferencePool's picker (module docstring)


def _span(ranges: Ranges) -> str:
    return ",".join("all ports" if r == (1, 65535) else str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}" for r in ranges)


class Expectations:
    """Checks each expectation against nca's map of every policy (`full`)."""

    def __init__(
        self, objects: list[dict[str, Any]], pods: list[Pod], full: ConnectivityMap, host_passes: HostPasses
    ) -> None:
        self.objects = objects
        self.pods = pods
        self.workload = [p for p in pods if not p.platform]
        self.map = full
        self.host_passes = host_passes
        self.failures: set[str] = set()

    def fail(self, what: str, source: str, destination: str, protocol: str, ports: Ranges, detail: str) -> None:
        self.failures.add(f"expectation {what}: {source} -> {destination} {_span(ports)}/{protocol} ({detail})")

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] in kinds]

    def platform(self, namespace: str, group: str) -> list[Pod]:
        return [p for p in self.pods if p.platform and p.namespace == namespace and p.group == group]

    # one flow, pod to pod
    def reach(self, what: str, source: Pod, destination: Pod, protocol: str, ports: Ranges, detail: str) -> None:
        if source == destination:
            return
        if source.host_network or destination.host_network:
            ok = all(
                end.host_network or self.host_passes(end, way, protocol, ports)
                for end, way in ((source, "egress"), (destination, "ingress"))
            )
        else:
            ok = covers(self.map.allowed(source, destination).get(protocol, ()), ports)
        if not ok:
            self.fail(what, source.where, destination.where, protocol, ports, detail)

    # Services
    def backends(self, service: dict[str, Any]) -> list[Pod]:
        selector = (service.get("spec") or {}).get("selector")
        if not selector:
            return []  # endpoints managed by hand: nothing to lift
        namespace = service["metadata"].get("namespace", "default")
        return [p for p in self.workload if p.namespace == namespace and selects({"matchLabels": selector}, p.labels)]

    def target(self, entry: dict[str, Any], pod: Pod) -> tuple[str, Ranges] | None:
        """A Service port's protocol and target port on `pod`; None when a named targetPort is not there."""
        protocol = entry.get("protocol", "TCP")
        port = entry.get("targetPort", entry["port"])
        if isinstance(port, str) and not port.isdigit():
            named = pod.named_ports.get(port)
            if not named or named[1] != protocol:
                return None
            port = named[0]
        return protocol, ((int(port), int(port)),)

    def serve(self, what: str, service: dict[str, Any], entries: list[dict[str, Any]], sources: list[Pod], why: str):
        name = f"Service {service['metadata'].get('namespace', 'default')}/{service['metadata']['name']}"
        backends = self.backends(service)
        if not backends and (service.get("spec") or {}).get("selector"):
            self.failures.add(f"expectation {what}: {name} selects no pod ({why})")
        for pod in backends:
            for entry in entries:
                found = self.target(entry, pod)
                if found is None:
                    self.failures.add(
                        f"expectation {what}: {name} targetPort {entry.get('targetPort')!r} is no port of {pod.where}"
                    )
                    continue
                for source in sources:
                    self.reach(what, source, pod, *found, f"{why}, {name} port {entry['port']}")

    def check_services(self) -> None:
        tenants = self.platform("tenant", "tenant-app")
        for service in self.of_kind("Service"):
            spec, meta = service.get("spec") or {}, service["metadata"]
            name = f"Service {meta.get('namespace', 'default')}/{meta['name']}"
            entries = spec.get("ports") or []
            if spec.get("type") == "LoadBalancer":
                self.check_load_balancer(service, name, entries)
            if (meta.get("annotations") or {}).get(CLUSTER_CLIENTS) == "cluster":
                self.serve("service", service, entries, tenants, "meant for the whole cluster")

    def check_load_balancer(self, service: dict[str, Any], name: str, entries: list[dict[str, Any]]) -> None:
        spec = service["spec"]
        sources = spec.get("loadBalancerSourceRanges") or ["0.0.0.0/0"]
        if spec.get("externalTrafficPolicy", "Cluster") != "Local":
            for entry in entries:
                self.fail(
                    "service",
                    "load balancer clients",
                    name,
                    entry.get("protocol", "TCP"),
                    ((entry["port"],) * 2,),
                    "externalTrafficPolicy Cluster: node-forwarded requests carry a node address on Dataplane V2",
                )
        wanted = merge([r for cidr in sources for r in cidr_ranges(cidr)])
        for pod in self.backends(service):
            if pod.host_network:
                continue  # no NetworkPolicy applies to the node's own address
            for entry in entries:
                found = self.target(entry, pod)
                if found is None:
                    continue  # reported by serve()
                protocol, ports = found
                allowed = merge(
                    [(a.lo, a.hi) for a, p in self.map.addresses_to(pod) if covers(p.get(protocol, ()), ports)]
                )
                for lo, hi in subtract(wanted, allowed):
                    self.fail(
                        "service",
                        f"external {Address(lo, hi)}",
                        pod.where,
                        protocol,
                        ports,
                        f"a client of load balancer {name} (loadBalancerSourceRanges {','.join(sources)})",
                    )

    # callers found in pod specs
    def texts(self, pod: Pod) -> list[str]:
        spec = pod.template.get("spec") or {}
        containers = [*spec.get("initContainers", []), *spec.get("containers", [])]
        found: list[str] = []
        maps = {v["configMap"]["name"] for v in spec.get("volumes", []) if "configMap" in v}
        maps |= {
            s["configMap"]["name"]
            for v in spec.get("volumes", [])
            for s in (v.get("projected") or {}).get("sources", [])
            if "configMap" in s
        }
        for container in containers:
            found += [str(x) for x in [*container.get("command", []), *container.get("args", [])]]
            for env in container.get("env", []):
                if "value" in env:
                    found.append(str(env["value"]))
                ref = (env.get("valueFrom") or {}).get("configMapKeyRef")
                if ref:
                    maps.add(ref["name"])
            maps |= {e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e}
        for config in self.of_kind("ConfigMap"):
            if config["metadata"].get("namespace", "default") == pod.namespace and config["metadata"]["name"] in maps:
                found += [str(v) for v in (config.get("data") or {}).values()]
        return found

    def calls(self, pod: Pod, service: dict[str, Any]) -> set[int | None]:
        """The ports with which `pod` names `service` (None: named without a port); empty if it never does."""
        name, namespace = service["metadata"]["name"], service["metadata"].get("namespace", "default")
        pattern = re.compile(
            rf"(?<![\w.-]){re.escape(name)}(\.{re.escape(namespace)}(?:\.svc(?:\.[A-Za-z0-9-]+)*)?)?"
            r"(?::(\d+))?(?![\w-]|\.[A-Za-z0-9])"
        )
        ports: set[int | None] = set()
        for text in self.texts(pod):
            for match in pattern.finditer(text):
                if match.group(1) or pod.namespace == namespace:
                    ports.add(int(match.group(2)) if match.group(2) else None)
        return ports

    def check_callers(self) -> None:
        for service in self.of_kind("Service"):
            entries = (service.get("spec") or {}).get("ports") or []
            name = f"{service['metadata'].get('namespace', 'default')}/{service['metadata']['name']}"
            for caller in self.workload:
                ports = self.calls(caller, service)
                if not ports:
                    continue
                chosen = [e for e in entries if None in ports or e["port"] in ports]
                for port in sorted(p for p in ports if p is not None and p not in {e["port"] for e in entries}):
                    self.fail("caller", caller.where, f"Service {name}", "TCP", ((port, port),), "no such Service port")
                self.serve("caller", service, chosen, self.pods_of_group(caller), f"{caller.group} names it")

    def pods_of_group(self, pod: Pod) -> list[Pod]:
        return [p for p in self.workload if p.namespace == pod.namespace and p.group == pod.group]

    # aggregated APIs
    def check_api_services(self) -> None:
        agents = self.platform("kube-system", "konnectivity-agent")
        for api in self.of_kind("APIService"):
            ref = (api.get("spec") or {}).get("service")
            if not ref:
                continue  # served by the API server itself
            service = next(
                (
                    s
                    for s in self.of_kind("Service")
                    if s["metadata"]["name"] == ref["name"]
                    and s["metadata"].get("namespace", "default") == ref["namespace"]
                ),
                None,
            )
            label = f"APIService {api['metadata']['name']}"
            if service is None:
                self.failures.add(
                    f"expectation apiservice: {label} names Service {ref['namespace']}/{ref['name']}, not rendered"
                )
                continue
            port = ref.get("port", 443)
            entries = [e for e in service["spec"].get("ports") or [] if e["port"] == port]
            if not entries:
                self.failures.add(f"expectation apiservice: {label} calls port {port}, which its Service lacks")
            self.serve("apiservice", service, entries, agents, f"the API server (via konnectivity) calls {label}")

    # Managed Prometheus
    def check_scrapes(self) -> None:
        collectors = self.platform("gmp-system", "collector")
        for monitor in self.of_kind("PodMonitoring", "ClusterPodMonitoring"):
            spec, meta = monitor.get("spec") or {}, monitor["metadata"]
            label = f"{monitor['kind']} {meta.get('namespace', '')}/{meta['name']}".replace(" /", " ")
            targets = [
                p
                for p in self.workload
                if (monitor["kind"] == "ClusterPodMonitoring" or p.namespace == meta.get("namespace"))
                and selects(spec.get("selector"), p.labels)
            ]
            if not targets:
                self.failures.add(f"expectation scrape: {label} selects no pod")
            for pod in targets:
                for endpoint in spec.get("endpoints", []):
                    port = endpoint["port"]
                    if isinstance(port, str) and not port.isdigit():
                        named = pod.named_ports.get(port)
                        if not named:
                            self.failures.add(f"expectation scrape: {label} port {port!r} is no port of {pod.where}")
                            continue
                        port = named[0]
                    for collector in collectors:
                        self.reach("scrape", collector, pod, "TCP", ((int(port), int(port)),), f"{label} scrapes it")

    # load-balancer health checks
    def check_health_checks(self) -> None:
        checked: dict[tuple[str, str, str], int] = {}  # (namespace, kind, name) of the target -> port
        for policy in self.of_kind("HealthCheckPolicy"):
            spec, namespace = policy.get("spec") or {}, policy["metadata"].get("namespace", "default")
            ref = spec.get("targetRef") or {}
            config = (spec.get("default") or {}).get("config") or {}
            block = next((v for k, v in config.items() if k.endswith("HealthCheck") and isinstance(v, dict)), {})
            if block.get("portSpecification") == "USE_FIXED_PORT" and "port" in block:
                checked[(ref.get("namespace", namespace), ref.get("kind", ""), ref.get("name", ""))] = block["port"]
        for pool in self.of_kind("InferencePool"):
            namespace = pool["metadata"].get("namespace", "default")
            picker = ((pool.get("spec") or {}).get("endpointPickerRef") or {}).get("name")
            if picker:
                checked.setdefault((namespace, "Service", picker), GKE_PICKER_HEALTH_PORT)
        for (namespace, kind, name), port in sorted(checked.items()):
            for pod in self.checked_pods(namespace, kind, name):
                allowed = merge(
                    [(a.lo, a.hi) for a, p in self.map.addresses_to(pod) if covers(p.get("TCP", ()), ((port, port),))]
                )
                for cidr in HEALTH_CHECK_SOURCES:
                    for lo, hi in subtract(cidr_ranges(cidr), allowed):
                        detail = f"the load balancer's health check of {kind} {namespace}/{name}"
                        self.fail(
                            "healthcheck", f"external {Address(lo, hi)}", pod.where, "TCP", ((port, port),), detail
                        )

    def checked_pods(self, namespace: str, kind: str, name: str) -> list[Pod]:
        """The pods behind a health-checked target: a Service's backends, an InferencePool's selected pods."""
        for obj in self.of_kind(kind):
            if obj["metadata"]["name"] != name or obj["metadata"].get("namespace", "default") != namespace:
                continue
            if kind == "Service":
                return self.backends(obj)
            selector = {"matchLabels": ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}}
            return [p for p in self.workload if p.namespace == namespace and selects(selector, p.labels)]
        self.failures.add(f"expectation healthcheck: {kind} {namespace}/{name} is checked but not rendered")
        return []

    # Ray
    def check_ray(self) -> None:
        clusters: dict[tuple[str, str], list[Pod]] = {}
        for pod in self.workload:
            if pod.ray_params is not None:
                clusters.setdefault((pod.namespace, pod.labels["ray.io/cluster"]), []).append(pod)
        for (_, cluster), nodes in clusters.items():
            heads = [p for p in nodes if p.labels.get("ray.io/node-type") == "head"]
            for head in heads:
                for key, default in RAY_HEAD_PORTS.items():
                    port = int(head.ray_params.get(key, default))
                    for node in nodes:
                        if node not in heads:
                            self.reach("ray", node, head, "TCP", ((port, port),), f"Ray {key} of {cluster}")
            for destination in nodes:
                for key, ports in self.node_ports(destination.ray_params).items():
                    for source in nodes:
                        self.reach("ray", source, destination, "TCP", ports, f"Ray {key} of {cluster}")

    def check_ray_submitters(self) -> None:
        for job in self.of_kind("RayJob"):
            spec, meta = job.get("spec") or {}, job["metadata"]
            if spec.get("submissionMode", "K8sJobMode") != "K8sJobMode":
                continue  # HTTPMode: the operator submits, from outside the stack's pods
            namespace = meta.get("namespace", "default")
            submitters = [
                p for p in self.workload if p.namespace == namespace and p.group == f"{meta['name']}-submitter"
            ]
            chosen = (spec.get("clusterSelector") or {}).get("ray.io/cluster")
            heads = [
                p
                for p in self.workload
                if p.namespace == namespace
                and p.labels.get("ray.io/node-type") == "head"
                and (p.labels.get("ray.io/cluster") == chosen if chosen else p.group == f"{meta['name']}-head")
            ]
            if submitters and not heads:
                self.failures.add(f"expectation ray: RayJob {namespace}/{meta['name']} selects no Ray head")
            for head in heads:
                port = int((head.ray_params or {}).get("dashboard-port", RAY_HEAD_PORTS["dashboard-port"]))
                for submitter in submitters:
                    why = f"RayJob {meta['name']} submits through the dashboard"
                    self.reach("ray", submitter, head, "TCP", ((port, port),), why)

    def check_ray_operator_impostors(self) -> None:
        impostors = self.platform("tenant", "kuberay-impostor")
        tenants = self.platform("tenant", "tenant-app")
        for node in self.workload:
            if node.ray_params is None:
                continue
            for impostor in impostors:
                for protocol in ("TCP", "UDP"):
                    plain = merge([r for tenant in tenants for r in self.map.allowed(tenant, node).get(protocol, ())])
                    for lo, hi in subtract(self.map.allowed(impostor, node).get(protocol, ()), plain):
                        self.fail(
                            "ray-operator",
                            impostor.where,
                            node.where,
                            protocol,
                            ((lo, hi),),
                            "a pod of another namespace with the KubeRay operator's labels: only the operator's own "
                            "namespace may call a Ray pod",
                        )

    @staticmethod
    def node_ports(params: dict[str, Any]) -> dict[str, Ranges]:
        found: dict[str, Ranges] = {}
        for key, default in RAY_NODE_PORTS.items():
            value = params.get(key, default)
            found[key] = ALL_PORTS if value in (None, 0, "0") else ((int(value), int(value)),)
        low_key, low, high_key, high = RAY_WORKER_PORTS
        found["worker ports"] = ((int(params.get(low_key, low)), int(params.get(high_key, high))),)
        return found

    def run(self) -> list[str]:
        self.check_services()
        self.check_callers()
        self.check_api_services()
        self.check_scrapes()
        self.check_health_checks()
        self.check_ray()
        self.check_ray_submitters()
        self.check_ray_operator_impostors()
        return sorted(self.failures)
