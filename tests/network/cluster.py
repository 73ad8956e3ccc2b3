"""A stack's rendered objects as the pods a cluster would run, plus the platform's own pods.

network-config-analyzer (nca) reads Pods, Namespaces and NetworkPolicies; it knows the standard
workload kinds but not the custom resources our stacks declare, so every pod template is lifted here
into Pods, with the labels the controllers add (the policies may select on them). Each template
becomes two replicas, so traffic between pods of one group shows in nca's map (it leaves out a pod's
connections to itself).

The platform's pods are written from GKE's and upstream's documentation, not from our code, so a
policy that names them wrongly fails here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REPLICAS = 2


@dataclass(frozen=True)
class Pod:
    """One pod: `group` names it in failures (namespace/group), `name` is the replica nca sees."""

    namespace: str
    group: str
    name: str
    labels: dict[str, str] = field(hash=False, compare=False)
    host_network: bool = False
    named_ports: dict[str, tuple[int, str]] = field(default_factory=dict, hash=False, compare=False)
    platform: bool = False
    # the pod template it was lifted from, and a Ray node's rayStartParams (tests/network/expectations.py)
    template: dict[str, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)
    ray_params: dict[str, Any] | None = field(default=None, hash=False, compare=False, repr=False)

    @property
    def where(self) -> str:
        return f"{self.namespace}/{self.group}"


# The platform's pods, each with the labels its documentation gives:
# - kube-dns: `kubectl get pods --namespace=kube-system -l k8s-app=kube-dns`
#   (https://kubernetes.io/docs/tasks/administer-cluster/dns-debugging-resolution/; GKE runs kube-dns in
#   kube-system, https://cloud.google.com/kubernetes-engine/docs/concepts/kube-dns).
# - konnectivity-agent: the agents the API server tunnels through to reach pods (webhooks, aggregated
#   APIs), `k8s-app: konnectivity-agent` in kube-system (the upstream example
#   https://kubernetes.io/docs/tasks/extend-kubernetes/setup-konnectivity/, konnectivity-agent.yaml; the
#   GCE addon kubernetes/kubernetes cluster/gce/addons/konnectivity-agent).
# - Managed Prometheus collectors: `app.kubernetes.io/name: collector` in gmp-system (the PodMonitoring
#   GKE documents for the collectors' own metrics selects exactly that,
#   https://cloud.google.com/stackdriver/docs/managed-prometheus/exporters/prometheus).
# - a KubeRay operator installed in the cluster (not GKE's hosted one), as `helm install -n ray-system` would
#   run it: KubeRay labels the operator's pods `app.kubernetes.io/component: kuberay-operator` in both its
#   installs (github.com/ray-project/kuberay v1.7.0 ray-operator/config/manager/manager.yaml and
#   helm-chart/kuberay-operator/templates/deployment.yaml; the chart installs into the release's namespace).
# - a tenant: a plain pod of another namespace, so an ingress wider than the contract shows.
# - an impostor: a pod of the tenant's namespace that carries the KubeRay operator's labels (anyone who may
#   create a pod may set any label), so a policy that trusts the label in every namespace shows.
PLATFORM_PODS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("kube-system", "kube-dns", {"k8s-app": "kube-dns"}),
    ("kube-system", "konnectivity-agent", {"k8s-app": "konnectivity-agent"}),
    ("gmp-system", "collector", {"app.kubernetes.io/name": "collector", "app.kubernetes.io/part-of": "gmp"}),
    (
        "ray-system",
        "kuberay-operator",
        {"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/component": "kuberay-operator"},
    ),
    ("tenant", "tenant-app", {"app": "tenant-app"}),
    (
        "tenant",
        "kuberay-impostor",
        {"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/component": "kuberay-operator"},
    ),
)


def _templates(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(group suffix, pod template, labels the controller adds) of one workload object."""
    kind, spec, name = obj["kind"], obj.get("spec") or {}, obj["metadata"]["name"]
    # The Job controller labels its pods `batch.kubernetes.io/job-name` and `job-name`
    # (https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-labels).
    job = {"batch.kubernetes.io/job-name": name, "job-name": name}
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        return [("", spec["template"], {})]
    if kind == "Job":
        return [("", spec["template"], job)]
    if kind == "JobSet":
        # The JobSet controller labels each pod with its JobSet, replicated job and job index
        # (kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go: JobSetNameKey, ReplicatedJobNameKey,
        # JobIndexKey); a child Job is named <jobset>-<replicated job>-<index>.
        found = []
        for replicated in spec["replicatedJobs"]:
            child = f"{name}-{replicated['name']}-0"
            labels = {
                "jobset.sigs.k8s.io/jobset-name": name,
                "jobset.sigs.k8s.io/replicatedjob-name": replicated["name"],
                "jobset.sigs.k8s.io/job-index": "0",
                "batch.kubernetes.io/job-name": child,
                "job-name": child,
            }
            found.append((replicated["name"], replicated["template"]["spec"]["template"], labels))
        return found
    if kind == "RayCluster":
        return _ray_groups(spec, name)
    if kind == "RayJob":
        found = []
        if "rayClusterSpec" in spec:
            # KubeRay names a RayJob's cluster <rayjob>-raycluster-<5 random characters>
            # (ray-project/kuberay ray-operator/controllers/ray/utils/util.go, GenerateRayClusterName).
            found += _ray_groups(spec["rayClusterSpec"], f"{name}-raycluster-xxxxx")
        if "submitterPodTemplate" in spec:
            # The submitter runs as a Kubernetes Job named after the RayJob.
            found.append(("submitter", spec["submitterPodTemplate"], job))
        return found
    if kind == "RayService":
        # KubeRay labels a RayService's pods `ray.io/serve`: "true" on workers (their readiness probe decides),
        # on the head "true" once the operator finds its Serve proxy healthy (KubeRay v1.7.0
        # ray-operator/controllers/ray/common/pod.go BuildPod, rayservice_controller.go): the serving state.
        serving = {"ray.io/serve": "true"}
        groups = _ray_groups(spec["rayClusterConfig"], f"{name}-raycluster-xxxxx")
        return [(suffix, template, {**labels, **serving}) for suffix, template, labels in groups]
    return []


def _ray_groups(spec: dict[str, Any], cluster: str) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """KubeRay labels every pod `ray.io/cluster`, `ray.io/node-type`, `ray.io/group` and
    `ray.io/is-ray-node` (ray-project/kuberay ray-operator/controllers/ray/common/pod.go, labelPod)."""

    def labels(node_type: str, group: str) -> dict[str, str]:
        return {
            "ray.io/cluster": cluster,
            "ray.io/node-type": node_type,
            "ray.io/group": group,
            "ray.io/is-ray-node": "yes",
        }

    found = [("head", spec["headGroupSpec"]["template"], labels("head", "headgroup"))]
    for group in spec.get("workerGroupSpecs", []):
        found.append((group["groupName"], group["template"], labels("worker", group["groupName"])))
    return found


def _ray_params(obj: dict[str, Any], labels: dict[str, str]) -> dict[str, Any] | None:
    """The rayStartParams of the Ray group a lifted pod belongs to, None for a pod that is no Ray node."""
    if labels.get("ray.io/is-ray-node") != "yes":
        return None
    spec = obj.get("spec") or {}
    cluster = spec.get("rayClusterSpec") or spec.get("rayClusterConfig") or spec
    if labels["ray.io/node-type"] == "head":
        return dict(cluster["headGroupSpec"].get("rayStartParams") or {})
    group = next(g for g in cluster.get("workerGroupSpecs", []) if g["groupName"] == labels["ray.io/group"])
    return dict(group.get("rayStartParams") or {})


def _named_ports(template: dict[str, Any]) -> dict[str, tuple[int, str]]:
    spec = template.get("spec") or {}
    containers = [*spec.get("initContainers", []), *spec.get("containers", [])]
    return {
        port["name"]: (port["containerPort"], port.get("protocol", "TCP"))
        for container in containers
        for port in container.get("ports", [])
        if port.get("name")
    }


def workload_pods(objects: list[dict[str, Any]]) -> list[Pod]:
    """Every pod the stack's workload objects would create, REPLICAS of each template."""
    pods = []
    for obj in objects:
        namespace = obj["metadata"].get("namespace", "default")
        for suffix, template, added in _templates(obj):
            group = f"{obj['metadata']['name']}-{suffix}" if suffix else obj["metadata"]["name"]
            labels = {**((template.get("metadata") or {}).get("labels") or {}), **added}
            host = bool((template.get("spec") or {}).get("hostNetwork"))
            ports = _named_ports(template)
            params = _ray_params(obj, labels)
            pods += [
                Pod(namespace, group, f"{group}-{i}", labels, host, ports, template=template, ray_params=params)
                for i in range(REPLICAS)
            ]
    return pods


def platform_pods() -> list[Pod]:
    return [
        Pod(namespace, group, f"{group}-{i}", labels, platform=True)
        for namespace, group, labels in PLATFORM_PODS
        for i in range(REPLICAS)
    ]


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions); {} selects everything."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def namespace_labels(objects: list[dict[str, Any]], pods: list[Pod]) -> dict[str, dict[str, str]]:
    """Every namespace a pod or policy lives in, labelled `kubernetes.io/metadata.name` as the API
    server does (https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name)."""
    names = {p.namespace for p in pods} | {o["metadata"]["namespace"] for o in objects if o["kind"] == "NetworkPolicy"}
    declared = {o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in objects if o["kind"] == "Namespace"}
    return {
        name: {**declared.get(name, {}), "kubernetes.io/metadata.name": name} for name in sorted(names | set(declared))
    }


def policies(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "NetworkPolicy"]


def policy_types(policy: dict[str, Any]) -> list[str]:
    """policyTypes, or its default: Ingress, plus Egress when the policy has egress rules
    (https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/network-policy-v1/)."""
    spec = policy["spec"]
    return spec.get("policyTypes") or ["Ingress", *(["Egress"] if "egress" in spec else [])]


def policies_selecting(objects: list[dict[str, Any]], pod: Pod) -> list[dict[str, Any]]:
    return [
        p
        for p in policies(objects)
        if p["metadata"]["namespace"] == pod.namespace and selects(p["spec"].get("podSelector"), pod.labels)
    ]
