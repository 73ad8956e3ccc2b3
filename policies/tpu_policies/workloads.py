"""The pod templates inside any Kubernetes workload, and how many pods form one slice.

Every policy about pods (fit, matching, images, secrets, privilege, GCS FUSE) needs the same two
facts: where a kind keeps its pod template(s), and how many of those pods share one TPU slice
(Deployment: 1; Job: parallelism when Indexed; JobSet: the replicated Job's parallelism;
RayCluster: a worker group's numOfHosts; LeaderWorkerSet: the group's TPU pods). Where they are is
`tpu_stacks.objects.pod_templates`, the walker the security scan uses too; this module adds what the
policies read of a template (chips, node selectors, arguments).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpu_policies.values import UNKNOWN, as_dict, as_int, as_list, as_str, dig
from tpu_stacks.catalog.tpu import ACCELERATOR_LABEL, TOPOLOGY_LABEL, TPU_RESOURCE
from tpu_stacks.objects.pod_templates import Found, lws_group_size
from tpu_stacks.objects.pod_templates import pod_templates as walk


@dataclass(frozen=True)
class PodTemplate:
    """One pod template of a workload."""

    where: str
    """Path of the template in the object, for messages (`spec.replicatedJobs[0]`)."""
    spec: dict[str, Any]
    annotations: dict[str, Any]
    pods_per_slice: int | None
    """Pods of this template that together use one slice; None when the kind does not say."""
    group_field: str | None
    """The field that sets `pods_per_slice` (`parallelism`, `numOfHosts`, `size`)."""
    name: str = ""
    """The walker's short name for it: a Ray worker group's `groupName`, `head`, a replicated Job's name."""

    def containers(self, init: bool = True) -> list[dict[str, Any]]:
        keys = ("containers", "initContainers", "ephemeralContainers") if init else ("containers",)
        return [c for key in keys for c in as_list(self.spec.get(key)) if isinstance(c, dict)]

    @property
    def chips(self) -> int:
        """`google.com/tpu` the pod takes: limits (or requests) summed over its containers."""
        total = 0
        for container in self.containers(init=False):
            resources = as_dict(container.get("resources"))
            value = dig(resources, "limits", TPU_RESOURCE)
            if value is None:
                value = dig(resources, "requests", TPU_RESOURCE)
            total += as_int(value) or 0
        return total

    @property
    def chips_known(self) -> bool:
        """False when a container's TPU request is unknown at preview or not a whole number."""
        for container in self.containers(init=False):
            for side in ("limits", "requests"):
                value = dig(container, "resources", side, TPU_RESOURCE)
                if value is not None and as_int(value) is None:
                    return False
        return True

    def selector(self, label: str) -> Any:
        """The value a pod requires for a node label (nodeSelector, else a one-value required
        affinity); None when it requires none, UNKNOWN when the value is not known at preview."""
        value = dig(self.spec, "nodeSelector", label)
        if value is UNKNOWN or (isinstance(value, str) and value):
            return value
        terms = dig(
            self.spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"
        )
        for term in as_list(terms):
            for expression in as_list(dig(term, "matchExpressions")):
                values = as_list(dig(expression, "values"))
                if dig(expression, "key") == label and dig(expression, "operator") == "In" and len(values) == 1:
                    return as_str(values[0])
        return None

    @property
    def accelerator(self) -> Any:
        return self.selector(ACCELERATOR_LABEL)

    @property
    def topology(self) -> Any:
        return self.selector(TOPOLOGY_LABEL)

    def arg_text(self) -> str:
        """Command and args of the TPU containers, joined, for flag searches."""
        parts: list[str] = []
        for container in self.containers(init=False):
            for key in ("command", "args"):
                parts.extend(p for p in as_list(container.get(key)) if isinstance(p, str))
        return " ".join(parts)


def kind_of(resource_type: str, props: dict[str, Any]) -> str:
    """The Kubernetes kind: the object's own `kind`, else the type token's last part."""
    kind = as_str(props.get("kind"))
    return kind or resource_type.rsplit(":", 1)[-1].removesuffix("Patch")


def is_kubernetes(resource_type: str) -> bool:
    return resource_type.startswith("kubernetes:") and not resource_type.startswith("kubernetes:yaml")


def workload_annotations(props: dict[str, Any]) -> dict[str, Any]:
    """The object's own metadata annotations (where components put the tpu-stacks.dev/* keys)."""
    return as_dict(dig(props, "metadata", "annotations"))


def name_of(props: dict[str, Any], fallback: str) -> str:
    name = as_str(dig(props, "metadata", "name"))
    namespace = as_str(dig(props, "metadata", "namespace"))
    shown = name or fallback
    return f"{namespace}/{shown}" if namespace else shown


def _adopted(found: Found, pods: int | None = None) -> PodTemplate:
    pods = found.pods if pods is None else pods
    annotations = as_dict(dig(found.template, "metadata", "annotations"))
    return PodTemplate(found.where, found.template["spec"], annotations, pods, found.group_field, found.name)


def _lws(props: dict[str, Any], found: list[Found]) -> list[PodTemplate]:
    """A LeaderWorkerSet group is `size` pods, of which those with TPU chips share the slice: the
    leader uses the worker template unless it has its own."""
    templates = [_adopted(f) for f in found]
    worker = next((t for f, t in zip(found, templates, strict=True) if f.name == "worker"), None)
    leader = next((t for f, t in zip(found, templates, strict=True) if f.name == "leader"), None)
    size = lws_group_size(props)
    if size is None or worker is None:
        return templates
    tpu_pods = (size - 1 if worker.chips else 0) + (1 if (leader or worker).chips else 0)
    return [_adopted(f, tpu_pods) for f in found]


def pod_templates(resource_type: str, props: dict[str, Any]) -> list[PodTemplate]:
    """Every pod template of a Kubernetes object (none for other resources)."""
    if not is_kubernetes(resource_type) or not isinstance(props, dict):
        return []
    kind = kind_of(resource_type, props)
    found = walk(kind, props)
    return _lws(props, found) if kind == "LeaderWorkerSet" else [_adopted(f) for f in found]


def tpu_templates(resource_type: str, props: dict[str, Any]) -> list[PodTemplate]:
    """The pod templates that request TPU chips."""
    return [t for t in pod_templates(resource_type, props) if t.chips > 0]
