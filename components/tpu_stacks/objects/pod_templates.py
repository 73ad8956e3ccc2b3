"""Where each Kubernetes kind keeps its pod templates, and how many pods of each form one group.

One walker for everyone who reads pods out of rendered objects: the policy pack judges every pod
template (fit, matching, images, secrets, privilege), and `scripts/security_scan.py` lifts the
templates of custom resources out as Pods, because checkov knows no custom resource. Before this
module each kept its own list of kinds, and the pack's and the scan's disagreed (the scan skipped
RayService and LeaderWorkerSet).

Where the templates are:

- Pod, Deployment, StatefulSet, ReplicaSet, DaemonSet, ReplicationController: `spec.template`
  (a PodTemplate object: `template`); Job: `spec.template`; CronJob: `spec.jobTemplate.spec.template`.
- JobSet: `spec.replicatedJobs[i].template.spec.template`, `parallelism` pods per replica
  (https://github.com/kubernetes-sigs/jobset/blob/main/api/jobset/v1alpha2/jobset_types.go).
- RayCluster: `spec.headGroupSpec.template` and `spec.workerGroupSpecs[i].template`, `numOfHosts`
  pods per worker replica; RayJob: its own cluster `spec.rayClusterSpec` and the submitter KubeRay
  starts from `spec.submitterPodTemplate` (K8sJobMode); RayService: `spec.rayClusterConfig`
  (https://github.com/ray-project/kuberay/tree/master/ray-operator/apis/ray/v1: raycluster_types.go,
  rayjob_types.go, rayservice_types.go).
- LeaderWorkerSet: `spec.leaderWorkerTemplate.workerTemplate` and `.leaderTemplate` (the leader uses
  the worker template unless it has its own), `size` pods per group
  (https://github.com/kubernetes-sigs/lws/blob/main/api/leaderworkerset/v1/leaderworkerset_types.go).

Kinds nobody listed are still searched for `spec.template.spec.containers`. Values may be anything a
preview hands over (an unknown marker instead of a dict or a number): what is not a dict is no
template, what is not a whole number is an unknown count. Pure: no provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CUSTOM_KINDS = ("JobSet", "RayCluster", "RayJob", "RayService", "LeaderWorkerSet")
"""Kinds from custom resource definitions: tools that know only built-in kinds never see their pods."""

_BUILT_IN = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ReplicationController", "PodTemplate")


@dataclass(frozen=True)
class Found:
    """One pod template found in an object."""

    where: str
    """Its path in the object, for messages (`spec.replicatedJobs[0].template.spec.template`)."""
    name: str
    """A short name for it (`head`, a worker group's or replicated Job's name, `submitter`, `leader`)."""
    template: dict[str, Any]
    """The template: `metadata` and a `spec` that is a dict."""
    pods: int | None
    """Pods of this template that form one group (a slice's hosts); None when unknown or not said."""
    group_field: str | None
    """The field that sets `pods` (`parallelism`, `numOfHosts`, `size`), when one does."""


def _get(data: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(data, dict):
            return None
        data = data.get(step)
    return data


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def count(value: Any) -> int | None:
    """A whole count from an int, a whole float or a digit string (`4`, `4.0`, `"4"`); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def _group(value: Any) -> int | None:
    """A group size field: 1 when absent (the API default), None when not a whole number."""
    return 1 if value is None else count(value)


def _found(where: str, name: str, template: Any, pods: int | None, field: str | None) -> Found | None:
    if not isinstance(_get(template, "spec"), dict):
        return None
    return Found(where, name, template, pods, field)


def _job(where: str, name: str, job_spec: Any) -> Found | None:
    indexed = _get(job_spec, "completionMode") == "Indexed"
    pods = (count(_get(job_spec, "parallelism")) or 1) if indexed else 1
    return _found(f"{where}.template", name, _get(job_spec, "template"), pods, "parallelism" if indexed else None)


def _ray(where: str, cluster_spec: Any) -> Iterator[Found | None]:
    yield _found(f"{where}.headGroupSpec.template", "head", _get(cluster_spec, "headGroupSpec", "template"), 1, None)
    for index, group in enumerate(_list(_get(cluster_spec, "workerGroupSpecs"))):
        name = _get(group, "groupName")
        yield _found(
            f"{where}.workerGroupSpecs[{index}].template",
            name if isinstance(name, str) and name else str(index),
            _get(group, "template"),
            _group(_get(group, "numOfHosts")),
            "numOfHosts",
        )


def _templates(kind: str, obj: dict[str, Any]) -> Iterator[Found | None]:
    spec = obj.get("spec")
    if kind == "Pod":
        yield _found("spec", "pod", obj, 1, None)
    elif kind in _BUILT_IN:
        source = obj.get("template") if kind == "PodTemplate" else _get(spec, "template")
        yield _found("spec.template", "template", source, 1, None)
    elif kind == "Job":
        yield _job("spec", "job", spec)
    elif kind == "CronJob":
        yield _job("spec.jobTemplate.spec", "job", _get(spec, "jobTemplate", "spec"))
    elif kind == "JobSet":
        for index, replicated in enumerate(_list(_get(spec, "replicatedJobs"))):
            name = _get(replicated, "name")
            where = f"spec.replicatedJobs[{index}].template.spec"
            job_spec = _get(replicated, "template", "spec")
            yield _found(
                f"{where}.template",
                name if isinstance(name, str) and name else str(index),
                _get(job_spec, "template"),
                _group(_get(job_spec, "parallelism")),
                f"{where}.parallelism",
            )
    elif kind == "RayCluster":
        yield from _ray("spec", spec)
    elif kind == "RayJob":
        yield _found("spec.submitterPodTemplate", "submitter", _get(spec, "submitterPodTemplate"), 1, None)
        yield from _ray("spec.rayClusterSpec", _get(spec, "rayClusterSpec"))
    elif kind == "RayService":
        yield from _ray("spec.rayClusterConfig", _get(spec, "rayClusterConfig"))
    elif kind == "LeaderWorkerSet":
        group = _get(spec, "leaderWorkerTemplate")
        for part in ("worker", "leader"):
            where = f"spec.leaderWorkerTemplate.{part}Template"
            yield _found(where, part, _get(group, f"{part}Template"), None, "size")
    elif isinstance(_get(spec, "template", "spec", "containers"), list):
        yield _found("spec.template", "template", _get(spec, "template"), None, None)


def pod_templates(kind: str, obj: Any) -> list[Found]:
    """Every pod template of a Kubernetes object of `kind`, in the order the object lists them."""
    if not isinstance(obj, dict):
        return []
    return [found for found in _templates(kind, obj) if found is not None]


def lws_group_size(obj: Any) -> int | None:
    """A LeaderWorkerSet's pods per group (`spec.leaderWorkerTemplate.size`, 1 when absent)."""
    return _group(_get(obj, "spec", "leaderWorkerTemplate", "size"))
