"""`JetStreamStack`: serve Gemma 7B-it or Llama 3 8B with JetStream-PyTorch on a single-host TPU v5e
slice, the tutorial [D-GKE-JETSTREAM] as one component. JetStream was archived upstream on
1 Feb 2026 (its features moved to vLLM `tpu-inference`): new deployments should use `VllmStack`
(docs/jetstream.md shows the move).

Every decision (the slice, the cluster with its one TPU pool, every refusal) is made once in
`jetstream.plan.plan_jetstream`, from the upstream facts in `jetstream.spec`; the pod is built in
`jetstream.pod`, the converter Job in `jetstream.converter`. This module only declares the
resources: cluster, checkpoint bucket, Workload Identity, Secret, converter Job, Deployment and
Service, and the outputs a user needs to call it.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from typing import Any, Optional, cast

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks import annotations, first_up
from tpu_stacks.awaits import pod_budget
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.component import declare_monitoring, declare_pod_monitoring
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan, plan_monitoring
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
from tpu_stacks.k8s.network_policy import declare_network_policies
from tpu_stacks.k8s.platform_flows import smoke_test_group
from tpu_stacks.k8s.smoke import smoke_test_job
from tpu_stacks.smoke_plan import SmokeTest, read_metrics, server_fingerprint
from tpu_stacks.validation import cluster_of, component_inputs, parse, parse_section
from tpu_stacks.workload import declare_foundation

TYPE = "tpu-stacks:index:JetStreamStack"
APP = "jetstream-pytorch-server"  # Deployment name and app label, as the tutorial
SECRET_NAME = "huggingface-secret"  # the name and key the images read ([K-JETSTREAM])
SAMPLE_REQUEST = {"prompt": "What are the top 5 programming languages", "max_tokens": 200}  # the tutorial's
SMOKE_MAX_TOKENS = 16  # the smoke test's request: the tutorial's prompt, a short answer


class JetStreamStack(pulumi.ComponentResource):
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
        args = cast(Any, component_inputs(JetStreamSpec, args))  # `hfToken` is `hf_token`, as in other languages
        plan = plan_jetstream(
            parse_section(JetStreamSpec, args, "jetstream"),
            parse(ClusterSpec, cluster_of(args), "cluster"),
            hf_token_given="hf_token" in args,
        )  # every refusal happens here, before the first resource
        monitoring = plan_monitoring(jetstream_target(plan, APP, APP, METRICS_PORT), "jetstream")
        smoke = smoke_test(plan, monitoring) if plan.spec.smoke_test else None  # its ports: network policies
        super().__init__(TYPE, name, {}, opts)
        self._plan = plan
        spec = plan.spec
        base = declare_foundation(
            self,
            name,
            plan.cluster,
            bucket_suffix="checkpoints",
            purpose="jetstream-checkpoints",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
            gsa_name=spec.gsa_name,
        )
        cluster, bucket, identity, depends = base.cluster, base.bucket, base.identity, base.namespace_ready
        pool = plan.pool
        ns_opts = base.kubernetes_options(self)
        secret = self._secret(name, args, plan, ns_opts)
        ready: list[pulumi.Resource] = [*depends, identity, *([secret] if secret else [])]
        job = None
        if plan.converter_flow:
            # After the pool it runs on: the jobs pool (not the TPU pool, whose nodes come only for the servers).
            placed_on = cluster.jobs_pools or cluster.pools
            job = converter_job(
                name,
                plan,
                pool,
                bucket.name,
                SECRET_NAME,
                pulumi.ResourceOptions(parent=self, provider=cluster.provider, depends_on=[*ready, *placed_on]),
            )
        labels = {"app": APP}
        template = pod_template(plan, pool, labels, bucket.name, SECRET_NAME if secret else None)
        # `pulumi up` waits for every replica to be ready: as long as the template's probes allow, after
        # a TPU node (the pool scales from 0 for these pods: NODE_PROVISIONING_MINUTES is in the budget) and the
        # image (k8s/probes.py); a rollout restarts the replicas one by one.
        budget = pod_budget(template, rollout_waves=spec.replicas)
        waits = [
            *([converter_wait(f"{name}-converter", plan)] if job else []),
            first_up.pod_wait(
                f"{name}-deployment",
                "every replica ready",
                template,
                tpu=True,
                rollout_waves=spec.replicas,
                download=not plan.converter_flow,  # the download flow's server fetches the model at start
            ),
        ]
        deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=APP,
                namespace=spec.namespace,
                labels=labels,
                annotations={
                    **annotations.for_serving(plan.request, plan.tensor_parallel_size),
                    **(plan.slo.annotations() if plan.slo else {}),
                },
            ),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=spec.replicas,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
                # Every TPU node already holds a replica: replace pods in place, never surge.
                strategy=k8s.apps.v1.DeploymentStrategyArgs(
                    type="RollingUpdate",
                    rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=0, max_unavailable=1),
                ),
                template=template,
            ),
            # The server starts only once the converted checkpoint exists (Pulumi waits for the Job),
            # and on the TPU pool (in the download flow nothing else orders it after the pool).
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[*ready, *cluster.pools, *([job] if job else [])],
                custom_timeouts=budget.custom_timeouts(),
            ),
        )
        service = self._service(name, plan, labels, ns_opts)
        groups = network(plan, labels, smoke.ports if smoke else ())
        if smoke is not None:  # the smoke-test pod's own contract: DNS and the server's ports
            groups = (*groups, smoke_test_group(spec.namespace, labels, smoke.ports))
        declare_network_policies(name, spec.namespace, groups, ns_opts)
        if smoke is not None:
            smoke_test_job(f"{name}-smoke-test", smoke, cluster.provider, self, [*ready, deployment, service])
            waits.append(first_up.job_wait(f"{name}-smoke-test", "the smoke test", smoke.active_deadline_seconds))
        self.service_name = pulumi.Output.from_input(SERVICE)
        self.port_forward = pulumi.Output.from_input(
            f"kubectl port-forward -n {spec.namespace} svc/{SERVICE} {HTTP_PORT}:{HTTP_PORT}"
        )
        self.curl = pulumi.Output.from_input(
            f'curl --request POST --header "Content-type: application/json" -s localhost:{HTTP_PORT}/generate '
            f"--data '{json.dumps(SAMPLE_REQUEST)}'"
        )
        self.checkpoint_path = (
            bucket.name.apply(lambda b: f"gs://{b}/{plan.checkpoint_prefix}")
            if plan.converter_flow
            else pulumi.Output.from_input(f"hf://{plan.names.hf_id}")
        )
        self.checkpoint_bucket = bucket.name
        self.converter_job = pulumi.Output.from_input(plan.converter_job_name if job else "")
        self.model_id = pulumi.Output.from_input(plan.model.id)
        self.served_slice = pulumi.Output.from_input(
            JetStreamSlice(
                generation=plan.shape.generation,
                topology=plan.shape.topology,
                machine_type=plan.shape.machine_type,
                chips=plan.shape.chips,
                nodes=spec.replicas,
            )
        )
        self.ready_replicas = deployment.status.apply(_ready_replicas)
        self.cluster = cluster
        declare_pod_monitoring(name, monitoring, labels, ns_opts)
        self.monitoring = declare_monitoring(self, name, monitoring, cluster.enabled_apis)
        # The cluster, for other languages' SDKs too (a TypeScript VllmStack user's kubectl or k8s provider).
        self.cluster_name, self.cluster_endpoint = cluster.cluster_name, cluster.endpoint
        self.kubeconfig = cluster.kubeconfig
        self.register_outputs(
            {
                "monitoring": self.monitoring,
                "cluster_name": self.cluster_name,
                "cluster_endpoint": self.cluster_endpoint,
                "kubeconfig": self.kubeconfig,
                "service_name": self.service_name,
                "port_forward": self.port_forward,
                "curl": self.curl,
                "checkpoint_path": self.checkpoint_path,
                "checkpoint_bucket": self.checkpoint_bucket,
                "converter_job": self.converter_job,
                "model_id": self.model_id,
                "served_slice": self.served_slice,
                "ready_replicas": self.ready_replicas,
                # not a typed output (the SDKs' schema does not list it): what `tpu-stacks plan` prints before `up`
                first_up.OUTPUT: first_up_record(plan, waits).document(),
            }
        )

    @property
    def plan(self) -> JetStreamPlan:
        return self._plan

    def _secret(
        self, name: str, args: JetStreamStackArgs, plan: JetStreamPlan, opts: pulumi.ResourceOptions
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
        # prometheus_client's server answers every path, /metrics included (catalog/engines/jetstream.py).
        metrics_url=f"http://{host}:{METRICS_PORT}/metrics" if metrics else None,
        metrics=read_metrics(monitoring) if metrics else (),
    )


def _ready_replicas(status: Any) -> int:
    """`status.readyReplicas` of the awaited Deployment (unknown in a preview: 0)."""
    return int(getattr(status, "ready_replicas", None) or 0) if status else 0
