"""Find the pod templates inside any Kubernetes workload, and how many pods form one slice.

Every policy about pods (fit, matching, images, secrets, privilege, GCS FUSE) needs the same two
facts: where a kind keeps its pod template(s), and how many of those pods share one TPU slice
(Deployment: 1; Job: parallelism when Indexed; JobSet: the replicated Job's parallelism;
RayCluster: a worker group's numOfHosts; LeaderWorkerSet: the group's TPU pods). A RayJob holds
two kinds of pods: its own cluster's (`spec.rayClusterSpec`) and the submitter KubeRay starts from
`spec.submitterPodTemplate` (K8sJobMode; ray-operator apis/ray/v1/rayjob_types.go), judged like any
other pod. Kinds nobody listed are still searched for `spec.template.spec.containers`, with an
unknown group size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tpu_policies.values import UNKNOWN, as_dict, as_int, as_list, as_str, dig
from tpu_stacks.catalog.tpu import ACCELERATOR_LABEL, TOPOLOGY_LABEL, TPU_RESOURCE


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


def _template(where: str, template: Any, pods: int | None, field: str | None) -> PodTemplate | None:
    spec = dig(template, "spec")
    if not isinstance(spec, dict):
        return None
    return PodTemplate(where, spec, as_dict(dig(template, "metadata", "annotations")), pods, field)


def _job(where: str, job_spec: Any) -> PodTemplate | None:
    indexed = dig(job_spec, "completionMode") == "Indexed"
    pods = (as_int(dig(job_spec, "parallelism")) or 1) if indexed else 1
    return _template(f"{where}.template", dig(job_spec, "template"), pods, "parallelism" if indexed else None)


def _ray(where: str, cluster_spec: Any) -> Iterator[PodTemplate | None]:
    yield _template(f"{where}.headGroupSpec.template", dig(cluster_spec, "headGroupSpec", "template"), 1, None)
    for index, group in enumerate(as_list(dig(cluster_spec, "workerGroupSpecs"))):
        hosts = dig(group, "numOfHosts")
        pods = 1 if hosts is None else as_int(hosts)
        yield _template(f"{where}.workerGroupSpecs[{index}].template", dig(group, "template"), pods, "numOfHosts")


def _lws(spec: Any) -> Iterator[PodTemplate | None]:
    """A LeaderWorkerSet group is `size` pods; the leader uses the worker template unless it has its own."""
    group = dig(spec, "leaderWorkerTemplate")
    size = dig(group, "size")
    size_value = 1 if size is None else as_int(size)
    worker = _template("spec.leaderWorkerTemplate.workerTemplate", dig(group, "workerTemplate"), None, "size")
    leader = _template("spec.leaderWorkerTemplate.leaderTemplate", dig(group, "leaderTemplate"), None, "size")
    if size_value is None or worker is None:
        yield from (worker, leader)
        return
    leader_chips = (leader or worker).chips
    tpu_pods = (size_value - 1 if worker.chips else 0) + (1 if leader_chips else 0)
    for template in (worker, leader):
        if template is not None:
            yield PodTemplate(template.where, template.spec, template.annotations, tpu_pods, "size")


def _templates(kind: str, props: dict[str, Any]) -> Iterator[PodTemplate | None]:
    spec = props.get("spec")
    if kind == "Pod":
        yield _template("spec", props, 1, None)
    elif kind in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ReplicationController", "PodTemplate"):
        source = props.get("template") if kind == "PodTemplate" else dig(spec, "template")
        yield _template("spec.template", source, 1, None)
    elif kind == "Job":
        yield _job("spec", spec)
    elif kind == "CronJob":
        yield _job("spec.jobTemplate.spec", dig(spec, "jobTemplate", "spec"))
    elif kind == "JobSet":
        for index, replicated in enumerate(as_list(dig(spec, "replicatedJobs"))):
            job_spec = dig(replicated, "template", "spec")
            parallelism = dig(job_spec, "parallelism")
            pods = 1 if parallelism is None else as_int(parallelism)
            where = f"spec.replicatedJobs[{index}].template.spec"
            yield _template(f"{where}.template", dig(job_spec, "template"), pods, f"{where}.parallelism")
    elif kind == "RayCluster":
        yield from _ray("spec", spec)
    elif kind == "RayJob":
        yield _template("spec.submitterPodTemplate", dig(spec, "submitterPodTemplate"), 1, None)
        yield from _ray("spec.rayClusterSpec", dig(spec, "rayClusterSpec"))
    elif kind == "RayService":
        yield from _ray("spec.rayClusterConfig", dig(spec, "rayClusterConfig"))
    elif kind == "LeaderWorkerSet":
        yield from _lws(spec)
    elif isinstance(dig(spec, "template", "spec", "containers"), list):
        yield _template("spec.template", dig(spec, "template"), None, None)


def pod_templates(resource_type: str, props: dict[str, Any]) -> list[PodTemplate]:
    """Every pod template of a Kubernetes object (none for other resources)."""
    if not is_kubernetes(resource_type) or not isinstance(props, dict):
        return []
    return [t for t in _templates(kind_of(resource_type, props), props) if t is not None]


def tpu_templates(resource_type: str, props: dict[str, Any]) -> list[PodTemplate]:
    """The pod templates that request TPU chips."""
    return [t for t in pod_templates(resource_type, props) if t.chips > 0]
