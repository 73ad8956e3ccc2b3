"""The model-server pods a stack will run, with the labels, ports and engine an InferencePool is judged by.

An InferencePool selects pods by label and sends traffic to a port on them; whether that works depends on
what the controllers make of the pod templates: the labels they add, the ports the containers listen on, the
engine that answers. The templates come from the one walker (`tpu_stacks.objects.pod_templates`); this module adds
what each serving kind's controller puts on its pods:

- Deployment, StatefulSet: the template's labels; `pod-template-hash`, `controller-revision-hash`,
  `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index` values are only known on the cluster.
- LeaderWorkerSet: `leaderworkerset.sigs.k8s.io/name` is the set's name, `worker-index` is `0` on the leader;
  group index, group key and revision hash are only known on the cluster (kubernetes-sigs/lws
  api/leaderworkerset/v1/leaderworkerset_types.go: SetNameLabelKey, WorkerIndexLabelKey, GroupIndexLabelKey,
  GroupUniqueHashLabelKey, TemplateRevisionHashKey).
- RayService: KubeRay labels every Ray pod `ray.io/is-ray-node=yes`, `ray.io/node-type` (head|worker),
  `ray.io/group` (`headgroup` or the worker group's name), `app.kubernetes.io/name=kuberay`,
  `app.kubernetes.io/created-by=kuberay-operator`, and the generated cluster's `ray.io/cluster` and
  `ray.io/identifier`; the template's labels override all but node-type, group and cluster; `ray.io/serve`
  follows the Serve proxy's health (ray-project/kuberay v1.7.0 ray-operator/controllers/ray/common/pod.go
  `labelPod`, utils/constant.go). Every Ray pod of a RayService runs a Serve HTTP proxy on its container port
  named `serve`, 8000 without one (the same pod.go probes workers' proxies there: `FindContainerPort(...,
  ServingPortName, DefaultServingPort)`; ledger: kuberay.port-name.serve, kuberay.port.serving).

A label whose value is only known on the cluster (or unknown at preview) matches any selector value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tpu_policies.engine_args import engine_of_template
from tpu_policies.stack import Item, Stack
from tpu_policies.values import UNKNOWN, as_dict, as_int, as_list, as_str, dig
from tpu_policies.workloads import PodTemplate, kind_of, pod_templates
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.inference_gateway import serving_api
from tpu_stacks.catalog.upstream import text
from tpu_stacks.objects.pod_templates import pod_templates as walk
from tpu_stacks.serving.engine_flags import flag_values, split_argument

SERVING_KINDS = ("Deployment", "StatefulSet", "LeaderWorkerSet", "RayService")
DEFAULT_NAMESPACE = "default"
"""Where an object without `metadata.namespace` lands (the provider's default namespace)."""

_CLUSTER_ONLY = {
    "Deployment": ("pod-template-hash",),
    "StatefulSet": ("controller-revision-hash", "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index"),
    "LeaderWorkerSet": (
        "leaderworkerset.sigs.k8s.io/group-index",
        "leaderworkerset.sigs.k8s.io/group-key",
        "leaderworkerset.sigs.k8s.io/template-revision-hash",
        "controller-revision-hash",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
    ),
    "RayService": (text("kuberay.label.cluster"), text("kuberay.label.identifier"), text("kuberay.label.serve")),
}
_RAY_KEPT = (text("kuberay.label.node-type"), text("kuberay.label.group"))
"""KubeRay's labels a template cannot override (and the cluster's, which it sets; ledger:
kuberay.label.template-keeps)."""
_LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"


@dataclass
class ServingPod:
    """One pod template of a serving workload, as its controller will label it."""

    item: Item
    kind: str
    template: PodTemplate
    namespace: Any
    labels: dict[str, Any]
    any_value: set[str] = field(default_factory=set)
    """Label keys whose value is only known on the cluster: they match any value."""

    @property
    def label(self) -> str:
        return f"{self.item.label} {self.template.where}"

    def matches(self, selector: dict[str, Any]) -> bool:
        if "*" in self.any_value:  # the template's labels are unknown at preview
            return True
        return all(
            key in self.any_value or self.labels.get(key) is UNKNOWN or self.labels.get(key) == value
            for key, value in selector.items()
        )

    def shown_labels(self) -> str:
        known = {k: v for k, v in self.labels.items() if isinstance(v, str) and k not in self.any_value}
        return ", ".join(f"{k}={v}" for k, v in sorted(known.items())) or "no labels"

    @property
    def engine(self) -> EngineVersion | None:
        return engine_of_template(self.template)

    def ports(self) -> set[int] | None:
        """Ports its containers listen on: declared container ports and the engine's HTTP port (its port flag,
        else the catalogue's default); None when some of it is unknown at preview."""
        ports: set[int] = set()
        for container in self.template.containers(init=False):
            declared = container.get("ports")
            if declared is UNKNOWN:
                return None
            for port in as_list(declared):
                number = dig(port, "containerPort")
                if number is UNKNOWN:
                    return None
                if as_int(number) is not None:
                    ports.add(as_int(number))
        if self.kind == "RayService":
            named = [dig(p, "name") for c in self.template.containers(init=False) for p in as_list(c.get("ports"))]
            if "serve" not in named:
                ports.add(serving_api("ray").default_port or 0)
        engine = self.engine
        if engine is not None:
            api = serving_api(engine)
            tokens = pod_tokens(self.template)
            if tokens is None:
                return None
            given = as_int(flag_values(tokens, engine).get(api.port_flag)) if api.port_flag else None
            if given is not None:
                ports.add(given)
            elif api.default_port is not None:
                ports.add(api.default_port)
        return ports


def pod_tokens(template: PodTemplate) -> list[str] | None:
    """The main containers' command and argument tokens (shell strings split); None when some are unknown."""
    tokens: list[str] = []
    for container in template.containers(init=False):
        for key in ("command", "args"):
            if container.get(key) is UNKNOWN or UNKNOWN in as_list(container.get(key)):
                return None
            for part in as_list(container.get(key)):
                tokens += split_argument(part)
    return tokens


def namespace_of(props: dict[str, Any]) -> Any:
    """The object's namespace (the default one when it names none; UNKNOWN when not known at preview)."""
    namespace = dig(props, "metadata", "namespace")
    return namespace if namespace is UNKNOWN else (as_str(namespace) or DEFAULT_NAMESPACE)


def same_namespace(left: Any, right: Any) -> bool:
    return left is UNKNOWN or right is UNKNOWN or left == right


def _controller_labels(kind: str, props: dict[str, Any], name: str) -> dict[str, Any]:
    if kind == "LeaderWorkerSet":
        return {"leaderworkerset.sigs.k8s.io/name": dig(props, "metadata", "name")}
    if kind == "RayService":
        head = name == "head"
        return {
            text("kuberay.label.is-ray-node"): text("kuberay.label.is-ray-node-value"),
            text("kuberay.label.node-type"): text("kuberay.node-type.head")
            if head
            else text("kuberay.node-type.worker"),
            text("kuberay.label.group"): text("kuberay.label.head-group") if head else name,
            "app.kubernetes.io/name": text("kuberay.label.app-name"),
            "app.kubernetes.io/created-by": text("kuberay.label.created-by"),
        }
    return {}


def serving_pods(stack: Stack) -> list[ServingPod]:
    """Every pod template of the stack's Deployments, StatefulSets, LeaderWorkerSets and RayServices."""
    pods: list[ServingPod] = []
    for item, _ in stack.workloads:
        kind = kind_of(item.type, item.props)
        if kind not in SERVING_KINDS:
            continue
        found = walk(kind, item.props)
        for lifted, template in zip(found, pod_templates(item.type, item.props), strict=True):
            own = dig(lifted.template, "metadata", "labels")
            labels = _controller_labels(kind, item.props, lifted.name)
            fixed = {k: v for k, v in labels.items() if k in _RAY_KEPT}
            labels = {**labels, **as_dict(own), **fixed}
            any_value = set(_CLUSTER_ONLY.get(kind, ()))
            if kind == "LeaderWorkerSet":
                labels[_LWS_WORKER_INDEX] = "0" if lifted.name == "leader" else None
                if lifted.name == "worker":
                    any_value.add(_LWS_WORKER_INDEX)  # 1..size-1, and 0 too when no leader template is given
            if own is UNKNOWN:
                any_value |= {"*"}
            pods.append(ServingPod(item, kind, template, namespace_of(item.props), labels, any_value))
    return pods
