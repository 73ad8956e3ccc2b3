"""Kubernetes workloads as a program would declare them with pulumi-kubernetes (used inside
`capture`): the upstream tutorials' shapes, with tpu-stacks annotations where a test needs them."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import ACCELERATOR_LABEL, TOPOLOGY_LABEL, TPU_RESOURCE
from tpu_stacks.objects.annotations import for_serving, for_training
from tpu_stacks.sizing import ServingRequest, TrainingRequest

CustomResource = k8s.apiextensions.CustomResource
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
PINNED = "us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0"


def serving_notes(model: str, tp: int, engine: str = "vllm", context: int = 4096, batch: int = 1) -> dict[str, str]:
    return for_serving(ServingRequest(model=lookup_model(model), engine=engine, context=context, batch=batch), tp)


def training_notes(model: str, parallelism: dict[str, int], seq_len: int = 4096) -> dict[str, str]:
    return for_training(TrainingRequest(model=lookup_model(model), seq_len=seq_len), parallelism)


def pod(accelerator: str | None, topology: str | None, chips: int, image: str = PINNED, **extra: Any) -> dict[str, Any]:
    """A pod spec with one TPU container (limits and requests), selecting a slice."""
    container: dict[str, Any] = {
        "name": "server",
        "image": image,
        "resources": {"limits": {TPU_RESOURCE: chips}, "requests": {TPU_RESOURCE: chips}},
    }
    for key in ("args", "command", "env", "securityContext", "volumeMounts"):
        if key in extra:
            container[key] = extra.pop(key)
    selector = {k: v for k, v in ((ACCELERATOR_LABEL, accelerator), (TOPOLOGY_LABEL, topology)) if v}
    return {"nodeSelector": selector or None, "containers": [container], **extra}


def deployment(
    name: str,
    spec: dict[str, Any],
    notes: dict[str, str] | None = None,
    pod_notes: dict[str, str] | None = None,
    replicas: int = 1,
) -> k8s.apps.v1.Deployment:
    labels = {"app": name}
    return k8s.apps.v1.Deployment(
        name,
        metadata={"name": name, "namespace": "serving", "annotations": notes},
        spec={
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels, "annotations": pod_notes}, "spec": spec},
        },
    )


def jobset(name: str, spec: dict[str, Any], parallelism: int, notes: dict[str, str] | None = None) -> CustomResource:
    """The Saxml model-server JobSet shape: one replicated Job per slice, one pod per host."""
    job = {
        "parallelism": parallelism,
        "completions": parallelism,
        "backoffLimit": 0,
        "template": {"spec": {"restartPolicy": "Never", **spec}},
    }
    return CustomResource(
        name,
        api_version="jobset.x-k8s.io/v1alpha2",
        kind="JobSet",
        metadata={"name": name, "annotations": {EXCLUSIVE: "cloud.google.com/gke-nodepool", **(notes or {})}},
        spec={
            "failurePolicy": {"maxRestarts": 4},
            "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": job}}],
        },
    )


def ray_cluster_spec(worker: dict[str, Any], hosts: int) -> dict[str, Any]:
    """A RayCluster's spec: a CPU head and one TPU worker group `tpu-group` of `hosts` pods per slice."""
    head = {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.49.1-py312"}]}
    return {
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}},
        "workerGroupSpecs": [
            {
                "groupName": "tpu-group",
                "replicas": 1,
                "numOfHosts": hosts,
                "rayStartParams": {},
                "template": {"spec": worker},
            }
        ],
    }


def raycluster(name: str, worker: dict[str, Any], hosts: int, notes: dict[str, str] | None = None) -> CustomResource:
    return CustomResource(
        name,
        api_version="ray.io/v1",
        kind="RayCluster",
        metadata={"name": name, "annotations": notes},
        spec=ray_cluster_spec(worker, hosts),
    )


def rayservice(
    name: str, worker: dict[str, Any], hosts: int, serve: str, notes: dict[str, str] | None = None
) -> CustomResource:
    """A RayService: a RayCluster's spec under `rayClusterConfig`, and its Serve config as a YAML string."""
    return CustomResource(
        name,
        api_version="ray.io/v1",
        kind="RayService",
        metadata={"name": name, "namespace": "serving", "annotations": notes},
        spec={"serveConfigV2": serve, "rayClusterConfig": ray_cluster_spec(worker, hosts)},
    )


def rayjob(name: str, cluster: dict[str, Any], submitter: dict[str, Any] | None) -> CustomResource:
    """A RayJob that brings its own cluster (a RayCluster's spec) and, optionally, its submitter's pod spec."""
    spec: dict[str, Any] = {"entrypoint": "python3 train.py", "rayClusterSpec": cluster}
    if submitter is not None:
        spec["submitterPodTemplate"] = {"spec": {"restartPolicy": "Never", **submitter}}
    return CustomResource(name, api_version="ray.io/v1", kind="RayJob", metadata={"name": name}, spec=spec)


def leader_worker_set(
    name: str, worker: dict[str, Any], size: int, leader: dict[str, Any] | None = None
) -> CustomResource:
    group: dict[str, Any] = {"size": size, "workerTemplate": {"spec": worker}}
    if leader is not None:
        group["leaderTemplate"] = {"spec": leader}
    return CustomResource(
        name,
        api_version="leaderworkerset.x-k8s.io/v1",
        kind="LeaderWorkerSet",
        metadata={"name": name},
        spec={"replicas": 1, "leaderWorkerTemplate": group},
    )


def service(
    name: str, kind: str = "LoadBalancer", notes: dict[str, str] | None = None, **spec: Any
) -> k8s.core.v1.Service:
    return k8s.core.v1.Service(
        name,
        metadata={"name": name, "namespace": "serving", "annotations": notes},
        spec={"type": kind, "selector": {"app": name}, "ports": [{"port": 8000, "targetPort": 8000}], **spec},
    )
