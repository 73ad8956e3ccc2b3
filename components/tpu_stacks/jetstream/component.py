"""`JetStreamStack`: serve Gemma 7B-it or Llama 3 8B with JetStream-PyTorch on a single-host TPU v5e
slice, the tutorial [D-GKE-JETSTREAM] as one component. JetStream was archived upstream on
1 Feb 2026 (its features moved to vLLM `tpu-inference`): new deployments should use `VllmStack`
(docs/jetstream.md shows the move).

Every decision (the slice, the cluster with its one TPU pool, every refusal) is made once in
`jetstream.plan.plan_jetstream`, from the upstream facts in `jetstream.spec`; the pod is built in
`jetstream.pod`, the converter Job in `jetstream.converter`. This module implements the hooks of the
lifecycle every workload shares (lifecycle/component.py: cluster, checkpoint bucket, Workload Identity,
network policies, PodMonitoring, smoke test, dashboard): its own objects are the Secret, the converter
Job, the Deployment and the Service, and the outputs a user needs to call it.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.jetstream.args import JetStreamStackArgs
from tpu_stacks.jetstream.before_up import converter_wait, first_up_record
from tpu_stacks.jetstream.converter import HF_SECRET_KEY, converter_job
from tpu_stacks.jetstream.descriptor import WORKLOAD
from tpu_stacks.jetstream.monitoring import jetstream_target
from tpu_stacks.jetstream.network import SERVICE, network
from tpu_stacks.jetstream.outputs import JetStreamSlice
from tpu_stacks.jetstream.plan import JetStreamPlan, plan_jetstream
from tpu_stacks.jetstream.pod import exports_metrics, pod_template
from tpu_stacks.jetstream.spec import GRPC_PORT, HTTP_PORT, METRICS_PORT, JetStreamSpec
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.lifecycle.component import Declared, FoundationSettings, Scrape, WorkloadComponent
from tpu_stacks.objects import annotations
from tpu_stacks.objects.awaits import pod_budget
from tpu_stacks.serving.smoke_plan import SmokeTest, read_metrics, server_fingerprint
from tpu_stacks.workload import Foundation

TYPE = "tpu-stacks:index:JetStreamStack"
APP = "jetstream-pytorch-server"  # Deployment name and app label, as the tutorial
SECRET_NAME = "huggingface-secret"  # the name and key the images read ([K-JETSTREAM])
LABELS = {"app": APP}
SAMPLE_REQUEST = {"prompt": "What are the top 5 programming languages", "max_tokens": 200}  # the tutorial's
SMOKE_MAX_TOKENS = 16  # the smoke test's request: the tutorial's prompt, a short answer


class JetStreamStack(WorkloadComponent[JetStreamPlan], token=TYPE, workload=WORKLOAD):
    """JetStream-PyTorch on a single-host TPU slice, its checkpoint converted into GCS (or downloaded at start)."""

    service_name: pulumi.Output[str]
    """The ClusterIP Service (HTTP 8000, gRPC 9000; the engine's metrics 9090 in the converter flow)."""
    port_forward: pulumi.Output[str]
    """The tutorial's kubectl port-forward, for this namespace."""
    curl: pulumi.Output[str]
    """The tutorial's request to /generate through the port-forward."""
    checkpoint_path: pulumi.Output[str]
    """Where the converted checkpoint lives (gs://...), or the Hugging Face id the download flow fetches."""
    checkpoint_bucket: pulumi.Output[str]
    converter_job: pulumi.Output[str]
    """The converter Job's name (empty for the download flow)."""
    model_id: pulumi.Output[str]
    served_slice: pulumi.Output[JetStreamSlice]
    ready_replicas: pulumi.Output[int]
    """Server replicas ready when `pulumi up` finished waiting for the Deployment (it waits until all are)."""
    monitoring: pulumi.Output[MonitoringLinks]
    """The stack's Cloud Monitoring dashboard and the console pages to open first."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name (the one the stack created, or the existing one it runs on)."""
    cluster_endpoint: pulumi.Output[str]
    """The cluster's control-plane IP address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) for the cluster that authenticates with gke-gcloud-auth-plugin."""

    def __init__(self, name: str, args: JetStreamStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(name, args, opts)  # the lifecycle (lifecycle/component.py); this class implements its hooks

    def plan_workload(self, spec: JetStreamSpec, cluster: ClusterSpec, inputs: Mapping[str, Any]) -> JetStreamPlan:
        return plan_jetstream(spec, cluster, hf_token_given="hf_token" in inputs)

    def monitoring_target(self, plan: JetStreamPlan) -> Target:
        return jetstream_target(plan, APP, APP, METRICS_PORT)

    def smoke_test(self, plan: JetStreamPlan, monitoring: MonitoringPlan) -> Optional[SmokeTest]:
        return smoke_test(plan, monitoring) if plan.spec.smoke_test else None

    def foundation(self, plan: JetStreamPlan) -> FoundationSettings:
        spec = plan.spec
        return FoundationSettings(
            bucket_suffix="checkpoints",
            purpose="jetstream-checkpoints",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
            gsa_name=spec.gsa_name,
        )

    def network(self, plan: JetStreamPlan, smoke_ports: Sequence[int]) -> Sequence[Group]:
        return network(plan, LABELS, smoke_ports)

    def scrape(self, plan: JetStreamPlan, base: Foundation) -> Scrape:
        return Scrape(LABELS)

    def record_first_up(self, plan: JetStreamPlan, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        return first_up_record(plan, list(waits))

    def declare_objects(self, name: str, plan: JetStreamPlan, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """The Secret, the converter Job (converter flow), the Deployment and its Service."""
        spec, cluster, bucket = plan.spec, base.cluster, base.bucket
        ns_opts = base.kubernetes_options(self)
        secret = self._secret(name, inputs, plan, ns_opts)
        ready: list[pulumi.Resource] = [*base.namespace_ready, base.identity, *([secret] if secret else [])]
        job = None
        if plan.converter_flow:
            # After the pool it runs on: the jobs pool (not the TPU pool, whose nodes come only for the servers).
            placed_on = cluster.jobs_pools or cluster.pools
            job = converter_job(
                name,
                plan,
                plan.pool,
                bucket.name,
                SECRET_NAME,
                pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*ready, *placed_on]),
            )
        template = pod_template(plan, plan.pool, LABELS, bucket.name, SECRET_NAME if secret else None)
        waits = [
            *([converter_wait(f"{name}-converter", plan)] if job else []),
            first_up.pod_wait(
                f"{name}-deployment",
                "every replica ready",
                template,
                tpu=True,
                download=not plan.converter_flow,  # the download flow's server fetches the model at start
            ),
        ]
        deployment = self._deployment(name, plan, template, [*ready, *cluster.pools, *([job] if job else [])], base)
        service = self._service(name, plan, LABELS, ns_opts)
        outputs = {
            "service_name": pulumi.Output.from_input(SERVICE),
            "port_forward": pulumi.Output.from_input(
                f"kubectl port-forward -n {spec.namespace} svc/{SERVICE} {HTTP_PORT}:{HTTP_PORT}"
            ),
            "curl": pulumi.Output.from_input(
                f'curl --request POST --header "Content-type: application/json" -s localhost:{HTTP_PORT}/generate '
                f"--data '{json.dumps(SAMPLE_REQUEST)}'"
            ),
            "checkpoint_path": (
                bucket.name.apply(lambda b: f"gs://{b}/{plan.checkpoint_prefix}")
                if plan.converter_flow
                else pulumi.Output.from_input(f"hf://{plan.names.hf_id}")
            ),
            "checkpoint_bucket": bucket.name,
            "converter_job": pulumi.Output.from_input(plan.converter_job_name if job else ""),
            "model_id": pulumi.Output.from_input(plan.model.id),
            "served_slice": pulumi.Output.from_input(
                JetStreamSlice(
                    generation=plan.shape.generation,
                    topology=plan.shape.topology,
                    machine_type=plan.shape.machine_type,
                    chips=plan.shape.chips,
                    nodes=spec.replicas,
                )
            ),
            "ready_replicas": deployment.status.apply(_ready_replicas),
        }
        return Declared(outputs, waits, smoke_after=[*ready, deployment, service], smoke_pods=LABELS)

    def _deployment(
        self,
        name: str,
        plan: JetStreamPlan,
        template: k8s.core.v1.PodTemplateSpecArgs,
        depends_on: list[pulumi.Resource],
        base: Foundation,
    ) -> k8s.apps.v1.Deployment:
        """The servers, one per TPU node. The server starts only once the converted checkpoint exists (Pulumi
        waits for the Job), and on the TPU pool (in the download flow nothing else orders it after the pool)."""
        spec = plan.spec
        # `pulumi up` waits for every replica to be ready: as long as the template's probes allow, after
        # a TPU node (the pool scales from 0 for these pods: NODE_PROVISIONING_MINUTES is in the budget) and the
        # image (k8s/probes.py); a rollout restarts the replicas one by one.
        budget = pod_budget(template, rollout_waves=spec.replicas)
        return k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=APP,
                namespace=spec.namespace,
                labels=LABELS,
                annotations={
                    **annotations.for_serving(plan.request, plan.tensor_parallel_size),
                    **(plan.slo.annotations() if plan.slo else {}),
                },
            ),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=spec.replicas,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=LABELS),
                # Every TPU node already holds a replica: replace pods in place, never surge.
                strategy=k8s.apps.v1.DeploymentStrategyArgs(
                    type="RollingUpdate",
                    rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=0, max_unavailable=1),
                ),
                template=template,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=base.cluster.provider,
                depends_on=depends_on,
                custom_timeouts=budget.custom_timeouts(),
            ),
        )

    def _secret(
        self, name: str, args: Mapping[str, Any], plan: JetStreamPlan, opts: pulumi.ResourceOptions
    ) -> Optional[k8s.core.v1.Secret]:
        """The Hugging Face token, from a Pulumi secret only, under the key the images read."""
        if "hf_token" not in args:
            return None
        return k8s.core.v1.Secret(
            f"{name}-hf-secret",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SECRET_NAME, namespace=plan.spec.namespace),
            type="Opaque",
            string_data={HF_SECRET_KEY: pulumi.Output.secret(args["hf_token"])},
            opts=opts,
        )

    def _service(
        self, name: str, plan: JetStreamPlan, labels: dict[str, str], opts: pulumi.ResourceOptions
    ) -> k8s.core.v1.Service:
        """ClusterIP only, as the tutorial: reached with kubectl port-forward. It also carries the engine's
        metrics port where the engine serves one, for the smoke test's read of what the dashboard reads."""
        spec = plan.spec
        metrics = (
            [k8s.core.v1.ServicePortArgs(name="metrics", port=METRICS_PORT, target_port=METRICS_PORT, protocol="TCP")]
            if exports_metrics(plan)
            else []
        )
        return k8s.core.v1.Service(
            f"{name}-service",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE, namespace=spec.namespace),
            spec=k8s.core.v1.ServiceSpecArgs(
                type="ClusterIP",
                selector=labels,
                ports=[
                    k8s.core.v1.ServicePortArgs(
                        name="jetstream-http", port=HTTP_PORT, target_port=HTTP_PORT, protocol="TCP"
                    ),
                    k8s.core.v1.ServicePortArgs(
                        name="jetstream-grpc", port=GRPC_PORT, target_port=GRPC_PORT, protocol="TCP"
                    ),
                    *metrics,
                ],
            ),
            opts=opts,
        )


def smoke_test(plan: JetStreamPlan, monitoring: MonitoringPlan) -> SmokeTest:
    """The tutorial's /generate (a short answer) through the Service; then, where the engine serves metrics
    (the converter flow's `--prometheus_port`), its metrics port through the same Service."""
    host = f"{SERVICE}.{plan.spec.namespace}.svc.cluster.local"
    metrics = exports_metrics(plan)
    return SmokeTest(
        answer=WORKLOAD.smoke_answer or "",
        namespace=plan.spec.namespace,
        url=f"http://{host}:{HTTP_PORT}/generate",
        body=json.dumps({**SAMPLE_REQUEST, "max_tokens": SMOKE_MAX_TOKENS}, sort_keys=True),
        image=PYTHON_IMAGE,
        server=server_fingerprint(plan.spec),
        ports=(HTTP_PORT, METRICS_PORT) if metrics else (HTTP_PORT,),
        # prometheus_client's server answers every path, /metrics included (engine.py).
        metrics_url=f"http://{host}:{METRICS_PORT}/metrics" if metrics else None,
        metrics=read_metrics(monitoring) if metrics else (),
    )


def _ready_replicas(status: Any) -> int:
    """`status.readyReplicas` of the awaited Deployment (unknown in a preview: 0)."""
    return int(getattr(status, "ready_replicas", None) or 0) if status else 0
