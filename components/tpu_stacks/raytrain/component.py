"""`RayTrainStack`: train a model with MaxText under Ray Train's JaxTrainer on multi-host TPU
slices. The Ray Train + MaxText tutorial ([D-GKE-RAY]) as one component.

Decisions live in `raytrain.plan.plan_raytrain` (the cluster's included), the image's repository
and build in `raytrain.image`, the pods in `raytrain.pods`; this module implements the hooks of the
lifecycle every workload shares (lifecycle/component.py: the cluster as planned, with the Ray operator
and GCS FUSE add-ons and one pool per slice, the checkpoint bucket and its Workload Identity grant,
network policies, Ray's PodMonitoring, dashboard): its own objects are the image repository, the
RayCluster and the RayJob that runs the training, and the commands a person needs.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.catalog.upstream import text
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.lifecycle.component import Declared, FoundationSettings, Scrape, WorkloadComponent
from tpu_stacks.objects import annotations
from tpu_stacks.objects.awaits import WAIT_FOR_ANNOTATION, AwaitBudget, pod_budget
from tpu_stacks.ray.ports import TRAIN_HEAD_PORTS
from tpu_stacks.raytrain.args import RayTrainStackArgs
from tpu_stacks.raytrain.descriptor import WORKLOAD
from tpu_stacks.raytrain.image import declare_image
from tpu_stacks.raytrain.monitoring import raytrain_target
from tpu_stacks.raytrain.network import network
from tpu_stacks.raytrain.outputs import TrainingSlice
from tpu_stacks.raytrain.plan import RayTrainPlan
from tpu_stacks.raytrain.pods import head_template, submitter_template, worker_template
from tpu_stacks.raytrain.spec import DATA_MOUNT, RAY_VERSION
from tpu_stacks.workload import Foundation

TYPE = "tpu-stacks:index:RayTrainStack"
WORKER_GROUP = "tpu-group"  # the tutorial's group name
CLUSTER_SELECTOR = text("kuberay.label.rayjob-cluster-selector")  # KubeRay's RayJobClusterSelectorKey
# pulumi-kubernetes reports a custom resource ready at once unless it names what to wait for
# (k8s/probes.py). KubeRay sets `status.state: ready` once every Ray pod runs and is ready (every
# KubeRay version; v1.3+ also sets the RayClusterProvisioned condition, which older ones lack), and a
# RayJob's `jobDeploymentStatus` is Running once its submitter has submitted the run (the run itself
# takes hours: `pulumi up` does not wait for it to finish). A run that fails before Running keeps
# `pulumi up` waiting until the budget runs out, then reports the RayJob as not ready.
CLUSTER_READY = {WAIT_FOR_ANNOTATION: "jsonpath={.status.state}=ready"}
JOB_RUNNING = {WAIT_FOR_ANNOTATION: "jsonpath={.status.jobDeploymentStatus}=Running"}


class RayTrainStack(WorkloadComponent[RayTrainPlan], token=TYPE, workload=WORKLOAD):
    """MaxText training under Ray Train on TPU slices sized from the catalogue, checkpoints on GCS."""

    ray_cluster_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    ray_job_name: pulumi.Output[str]
    """The RayJob that runs the training (empty when submit_job is false)."""
    image: pulumi.Output[str]
    """The training image the RayCluster pulls."""
    image_build_command: pulumi.Output[str]
    """The command that builds and pushes that image."""
    checkpoint_bucket: pulumi.Output[str]
    checkpoint_path: pulumi.Output[str]
    """Where MaxText writes this run's checkpoints."""
    dashboard_port_forward: pulumi.Output[str]
    """kubectl port-forward to the Ray dashboard (http://localhost:8265)."""
    job_submit_command: pulumi.Output[str]
    """The interactive path: ray job submit of the same training run."""
    training_slice: pulumi.Output[TrainingSlice]
    maxtext_args: pulumi.Output[list[str]]
    monitoring: pulumi.Output[MonitoringLinks]
    """The stack's Cloud Monitoring dashboard and the console pages to open first."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name (the one the stack created, or the existing one it runs on)."""
    cluster_endpoint: pulumi.Output[str]
    """The cluster's control-plane IP address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) for the cluster that authenticates with gke-gcloud-auth-plugin."""

    def __init__(self, name: str, args: RayTrainStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(name, args, opts)  # the lifecycle (lifecycle/component.py); this class implements its hooks

    def monitoring_target(self, plan: RayTrainPlan) -> Target:
        return raytrain_target(plan, "ray-worker")

    def foundation(self, plan: RayTrainPlan) -> FoundationSettings:
        spec = plan.spec
        return FoundationSettings(
            bucket_suffix="checkpoints",
            purpose="checkpoints",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
        )

    def network(self, plan: RayTrainPlan, smoke_ports: Sequence[int]) -> Sequence[Group]:
        return network(plan)

    def scrape(self, plan: RayTrainPlan, base: Foundation) -> Scrape:
        """Ray's metrics (every Ray pod, KubeRay's default port 8080, ledger: kuberay.port.metrics): Ray Train's
        controller state and timings."""
        return Scrape({CLUSTER_SELECTOR: plan.spec.ray_cluster_name})

    def record_first_up(self, plan: RayTrainPlan, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        """The RayCluster's TPU pods (the slices' pools have a fixed size: their nodes exist from the pools'
        creation), then the RayJob running (the same budget); training starts at its end."""
        return first_up.FirstUp(
            "raytrain", tuple(waits), first_up.slices(plan.pool, plan.spec.slices), ready="training"
        )

    def declare_objects(self, name: str, plan: RayTrainPlan, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """The training image's repository, the RayCluster and the RayJob of the run."""
        spec, cluster, bucket = plan.spec, base.cluster, base.bucket
        cluster_spec = plan.cluster.spec
        image, build_command = declare_image(
            spec.image,
            name,
            cluster_spec.project,
            plan.cluster.region,
            plan.cluster.universe,
            self,
            cluster.known_node_service_account,
            storage_api=base.storage_api,
        )
        notes = annotations.for_training(plan.request, plan.parallelism)
        workers = worker_template(plan, plan.pool, bucket.name, image)
        # `pulumi up` waits for every Ray pod (a TPU node, the training image, what the pods' probes
        # allow); then for the RayJob to run, with the same budget (k8s/probes.py).
        budget = pod_budget(workers)
        ray_cluster = k8s.apiextensions.CustomResource(
            f"{name}-ray-cluster",
            api_version="ray.io/v1",
            kind="RayCluster",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=spec.ray_cluster_name, namespace=spec.namespace, annotations={**notes, **CLUSTER_READY}
            ),
            spec={
                "rayVersion": RAY_VERSION,
                "enableInTreeAutoscaling": False,
                "headGroupSpec": {"rayStartParams": {}, "template": head_template(plan, bucket.name, image)},
                "workerGroupSpecs": [
                    {
                        "groupName": WORKER_GROUP,
                        "replicas": spec.slices,  # one replica per slice ...
                        "minReplicas": spec.slices,
                        "maxReplicas": spec.slices,
                        "numOfHosts": plan.hosts,  # ... of one pod per TPU VM
                        "rayStartParams": {},
                        "template": workers,
                    }
                ],
            },
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[*base.namespace_ready, base.identity, *cluster.pools],  # the slices' pools first
                custom_timeouts=budget.custom_timeouts(),
            ),
        )
        outputs = {
            "ray_cluster_name": pulumi.Output.from_input(spec.ray_cluster_name),
            "namespace": pulumi.Output.from_input(spec.namespace),
            "ray_job_name": pulumi.Output.from_input(
                self._job(name, plan, notes, ray_cluster, cluster.provider, budget, image)
            ),
            "image": image,
            "image_build_command": build_command,
            "checkpoint_bucket": bucket.name,
            "checkpoint_path": bucket.name.apply(lambda bucket_name: checkpoint_path(plan, bucket_name)),
            "dashboard_port_forward": pulumi.Output.from_input(port_forward(plan)),
            "job_submit_command": pulumi.Output.from_input(job_submit(plan)),
            "training_slice": pulumi.Output.from_input(training_slice(plan)),
            "maxtext_args": pulumi.Output.from_input(plan.maxtext_args()),
        }
        waits = [
            first_up.pod_wait(
                f"{name}-ray-cluster", "every Ray pod ready (the image built meanwhile)", workers, tpu=True
            )
        ]
        if spec.submit_job:
            waits.append(first_up.pod_wait(f"{name}-ray-job", "the training run started", workers, tpu=True))
        return Declared(outputs, waits)

    def _job(
        self,
        name: str,
        plan: RayTrainPlan,
        notes: dict[str, str],
        ray_cluster: pulumi.Resource,
        provider: k8s.Provider,
        budget: AwaitBudget,
        image: pulumi.Input[str] = "",
    ) -> str:
        """The training run as a RayJob on the RayCluster above. KubeRay refuses retries (backoffLimit)
        for a RayJob on an existing cluster, so recovery is Ray Train's (max_failures, resuming from
        MaxText's last checkpoint of the run); the deadline frees the TPUs of a run that hangs.
        Any change of the run replaces the RayJob: the old Ray job is stopped, the new one submitted."""
        spec = plan.spec
        if not spec.submit_job:
            return ""
        k8s.apiextensions.CustomResource(
            f"{name}-ray-job",
            api_version="ray.io/v1",
            kind="RayJob",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=plan.run_name, namespace=spec.namespace, annotations={**notes, **JOB_RUNNING}
            ),
            spec={
                "entrypoint": plan.entrypoint(),
                "clusterSelector": {CLUSTER_SELECTOR: spec.ray_cluster_name},
                "submissionMode": "K8sJobMode",
                "shutdownAfterJobFinishes": False,  # the cluster is this stack's, not the job's
                "activeDeadlineSeconds": spec.deadline_minutes * 60,
                "submitterPodTemplate": submitter_template(plan, image),  # hardened (raytrain.pods)
            },
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=provider,
                depends_on=[ray_cluster],
                replace_on_changes=["spec"],
                delete_before_replace=True,
                custom_timeouts=budget.custom_timeouts(),
            ),
        )
        return plan.run_name


def port_forward(plan: RayTrainPlan) -> str:
    """The tutorial's port-forward to the head service KubeRay creates (<cluster>-head-svc)."""
    port = TRAIN_HEAD_PORTS["dashboard"]
    return f"kubectl port-forward -n {plan.spec.namespace} svc/{plan.spec.ray_cluster_name}-head-svc {port}:{port}"


def job_submit(plan: RayTrainPlan) -> str:
    """The tutorial's `ray job submit` through that port-forward, with this run's command."""
    return f"ray job submit --address http://localhost:{TRAIN_HEAD_PORTS['dashboard']} -- {plan.entrypoint()}"


def checkpoint_path(plan: RayTrainPlan, bucket: str) -> str:
    """MaxText writes <base_output_directory>/<run_name>/checkpoints; /data is the bucket."""
    base = plan.spec.output_directory.rstrip("/")
    root = base if base.startswith("gs://") else f"gs://{bucket}{base.removeprefix(DATA_MOUNT)}"
    return f"{root}/{plan.run_name}/checkpoints"


def training_slice(plan: RayTrainPlan) -> TrainingSlice:
    shape = plan.shape
    return TrainingSlice(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        chips=shape.chips,
        hosts=plan.hosts,
        chips_per_host=shape.chips_per_vm,
        slices=plan.spec.slices,
        ray_accelerator_type=plan.accelerator_type,
        parallelism=",".join(f"{axis}={size}" for axis, size in plan.parallelism.items()),
        memory_needed_gib=round(plan.verdict.memory.total_bytes / 1024**3, 1),
        memory_usable_gib=round(plan.verdict.usable_bytes / 1024**3, 1),
    )
