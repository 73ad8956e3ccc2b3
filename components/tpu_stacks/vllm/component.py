"""`VllmStack`: serve a model with vLLM on a TPU slice sized from the catalogue, autoscaled on
vLLM's own queue metric. The tutorial ([D-GKE-VLLM]) as one component.

Decisions live in `vllm.plan.plan_vllm`; the pod template in `vllm.pod`, the image in `vllm.image`, the smoke
test in `vllm.smoke`. The lifecycle every workload shares (lifecycle/component.py: the cluster, weights bucket,
Workload Identity, network policies, PodMonitoring, smoke test, dashboard, outputs) runs this module's hooks:
its own objects are the Secret, the Deployment with the metrics adapter and the HPA (or, across hosts, the
weights download Job and the RayService), the Service and the gateway in front, and the outputs a user needs
to call the API.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional, cast

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.k8s.metrics_adapter import CustomMetricsAdapter
from tpu_stacks.lifecycle.component import Declared, FoundationSettings, Scrape, WorkloadComponent
from tpu_stacks.objects.awaits import pod_budget
from tpu_stacks.serving.exposure import INTERNAL_LB_ANNOTATION, external_traffic_policy, service_type
from tpu_stacks.serving.smoke_plan import SmokeTest
from tpu_stacks.vllm.args import VllmStackArgs
from tpu_stacks.vllm.before_up import first_up_record, multihost_waits
from tpu_stacks.vllm.descriptor import WORKLOAD
from tpu_stacks.vllm.download_plan import writer_ksa
from tpu_stacks.vllm.gateway import declare_gateway
from tpu_stacks.vllm.gateway_network import smoke_test_flows
from tpu_stacks.vllm.gateway_plan import GATEWAY_NAME, LISTENER_PORT
from tpu_stacks.vllm.image import server_image
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.monitoring_multihost import multihost_target
from tpu_stacks.vllm.multihost_plan import APP_NAME, SERVE_PORT
from tpu_stacks.vllm.network import SERVICE, network
from tpu_stacks.vllm.outputs import ServedSlice
from tpu_stacks.vllm.plan import VllmPlan, plan_vllm
from tpu_stacks.vllm.pod import API_KEY_SECRET_KEY, HF_SECRET_KEY, SECRET_NAME, pod_template, workload_annotations
from tpu_stacks.vllm.rayservice import WORKER_CONTAINER, declare_ray_service, pod_labels
from tpu_stacks.vllm.rayservice import budget as ray_service_budget
from tpu_stacks.vllm.smoke import SAMPLE_PROMPT, in_cluster_host, served_model_name, smoke_test
from tpu_stacks.vllm.spec import HPA_METRICS, PORT, VllmSpec
from tpu_stacks.vllm.weights_download import server_grants, weights_bytes, weights_download_job, writer_grants
from tpu_stacks.workload import Foundation, declare_identity

TYPE = "tpu-stacks:index:VllmStack"
APP = "vllm-tpu"
HPA_NAME = "vllm-hpa"
IMAGE_BUILD_LOG = "the multi-host server image: "
"""What `pulumi up` logs before the Ray Serve image's build command (Pulumi.vllm-405b.yaml names it)."""
LABELS = {"app": APP}


class VllmStack(WorkloadComponent[VllmPlan], token=TYPE, workload=WORKLOAD):
    """vLLM on a TPU slice sized for the model: weights cached on GCS, autoscaled on vLLM's queue."""

    service_address: pulumi.Output[str]
    """The Service's address (the load balancer IP, or the in-cluster DNS name)."""
    base_url: pulumi.Output[str]
    """The OpenAI-compatible API base URL."""
    model_id: pulumi.Output[str]
    served_slice: pulumi.Output[ServedSlice]
    weights_bucket: pulumi.Output[str]
    curl: pulumi.Output[str]
    """A ready-to-paste request to /v1/completions."""
    image_build: pulumi.Output[str]
    """Multi-host only: the `gcloud builds submit` that builds the Ray Serve image into the stack's registry, as the
    stack's builder account (run it while `pulumi up` waits for the RayService); unset on one host."""
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

    def __init__(self, name: str, args: VllmStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(name, args, opts)  # the lifecycle (lifecycle/component.py); this class implements its hooks

    def plan_workload(self, spec: VllmSpec, cluster: ClusterSpec, inputs: Mapping[str, Any]) -> VllmPlan:
        return plan_vllm(spec, cluster, hf_token_given="hf_token" in inputs, api_key_given="api_key_secret" in inputs)

    def monitoring_target(self, plan: VllmPlan) -> Target:
        if plan.multi_host:  # watched through Ray's metrics (vllm/monitoring_multihost.py)
            return multihost_target(
                plan, WORKER_CONTAINER, application=APP_NAME, target_ongoing_requests=plan.spec.max_num_seqs
            )
        return vllm_target(plan, HPA_NAME, APP, APP)

    def smoke_test(self, plan: VllmPlan, monitoring: MonitoringPlan) -> Optional[SmokeTest]:
        return smoke_test(plan, monitoring) if plan.spec.smoke_test else None

    def foundation(self, plan: VllmPlan) -> FoundationSettings:
        spec = plan.spec
        return FoundationSettings(
            bucket_suffix="weights",
            purpose="model-weights",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
            # across hosts the servers only read, but for their compile cache; the download Job writes
            bucket_grants=server_grants(plan) if plan.multi_host else None,
        )

    def network(self, plan: VllmPlan, smoke_ports: Sequence[int]) -> Sequence[Group]:
        return network(plan, LABELS, smoke_ports)

    def scrape(self, plan: VllmPlan, base: Foundation) -> Scrape:
        """vLLM's /metrics on its API port; across hosts Ray's metrics port on every Ray pod (Ray Serve's and vLLM's
        engine metrics), after the TPU pools. Always: the HPA scales on these metrics."""
        return Scrape(LABELS, interval="15s", always=True, after=base.cluster.pool_ready if plan.multi_host else ())

    def record_first_up(self, plan: VllmPlan, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        return first_up_record(plan, list(waits), weights_bytes(plan))

    def declare_objects(self, name: str, plan: VllmPlan, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """The Secret, the image (through Artifact Registry on request), the servers (a Deployment and its HPA on
        one host; across hosts the weights download Job, then a RayService over whole slices), the Service and the
        GKE Inference Gateway in front of it (vllm/gateway.py)."""
        cluster, ns_opts = base.cluster, base.kubernetes_options(self)
        secret_name = self._secret(name, inputs, plan, ns_opts)
        image, build = server_image(
            plan,
            plan.cluster.spec.project,
            plan.cluster.region,
            self,
            cluster.known_node_service_account,
            base.storage_api,
        )
        if build is not None:  # run it while `up` waits for the RayService (Pulumi.vllm-405b.yaml)
            build.apply(lambda command: pulumi.log.info(f"{IMAGE_BUILD_LOG}{command}", self))
        if plan.multi_host:  # the slice decides the object: a RayService over whole multi-host slices
            workload, selector, waits = self._ray_service(name, plan, base, secret_name, image)
        else:
            workload, server_wait = self._deployment(name, plan, base, secret_name, image)
            selector, waits = LABELS, [server_wait]
            self._autoscaler(name, plan, workload, ns_opts, cluster.pool_ready)
        service = self._service(name, plan, selector, SERVE_PORT if plan.multi_host else PORT, ns_opts)
        behind: list[pulumi.Resource] = []  # what the smoke test's request also goes through
        if plan.gateway is not None:  # GKE Inference Gateway in front of the replicas (vllm/gateway.py)
            project, region = plan.cluster.spec.project, plan.cluster.region
            gateway = declare_gateway(
                name, plan.gateway, LABELS, PORT, ns_opts, pulumi.ResourceOptions(parent=self), project, region
            )
            behind = [gateway.gateway, gateway.route, gateway.pool, gateway.picker]
        outputs = self._outputs(plan, base, service, workload)
        if build is not None:
            outputs["image_build"] = build
        return Declared(
            outputs,
            waits,
            smoke_after=[*base.namespace_ready, workload, service, *behind],
            # on a multi-host slice the Service's pod is the Ray head (vllm/rayservice.py)
            smoke_pods=pod_labels(LABELS, "head") if plan.multi_host else LABELS,
            smoke_flows=smoke_test_flows(plan.gateway)
            if plan.gateway is not None and plan.gateway.smoke_through
            else (),
        )

    def _outputs(
        self, plan: VllmPlan, base: Foundation, service: k8s.core.v1.Service, workload: pulumi.Resource
    ) -> dict[str, Any]:
        address = self._address(service, plan)
        port = LISTENER_PORT if plan.gateway else PORT
        base_url = address.apply(lambda host: f"http://{host}:{port}/v1")
        return {
            "service_address": address,
            "base_url": base_url,
            "model_id": pulumi.Output.from_input(plan.model.id),
            "served_slice": pulumi.Output.from_input(
                ServedSlice(
                    generation=plan.shape.generation,
                    topology=plan.shape.topology,
                    machine_type=plan.shape.machine_type,
                    chips=plan.shape.chips,
                    tensor_parallel_size=plan.tensor_parallel_size,
                )
            ),
            "weights_bucket": base.bucket.name,
            "curl": base_url.apply(lambda url: _curl(url, plan)),
            # A RayService reports no replica count Pulumi reads: the slices it started once Ready (awaited).
            "ready_replicas": (
                workload.id.apply(lambda _: plan.spec.replicas.min)
                if plan.multi_host
                else cast(k8s.apps.v1.Deployment, workload).status.apply(_ready_replicas)
            ),
        }

    def _ray_service(
        self, name: str, plan: VllmPlan, base: Foundation, secret_name: Optional[str], image: pulumi.Input[str]
    ) -> tuple[pulumi.Resource, dict[str, str], list[first_up.Wait]]:
        """The weights first, once, by one Job: the slice's hosts then only read them (vllm/download_plan.py).
        It runs the pinned upstream vLLM image (published, with vLLM's own huggingface_hub), not the Ray
        Serve image the user builds during the first `up`: the download does not wait for that build.
        Then the RayService; returns it, the Service's selector and the first `up`'s waits."""
        spec, cluster, bucket = plan.spec, base.cluster, base.bucket
        writer = declare_identity(
            self,
            f"{name}-weights-writer-identity",
            plan.cluster,
            cluster,
            base.namespace_ready,
            spec.namespace,
            writer_ksa(spec.ksa_name),
            writer_grants(bucket.name),
        )
        download = weights_download_job(
            name, plan, bucket.name, secret_name, plan.spec.image, base.kubernetes_options(self, writer)
        )
        workload, selector = declare_ray_service(
            name,
            plan,
            LABELS,
            bucket.name,
            image,
            pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                depends_on=[*base.namespace_ready, base.identity, *cluster.pools, download],
            ),
        )
        return workload, selector, multihost_waits(name, plan, weights_bytes(plan), ray_service_budget(plan))

    def _deployment(
        self, name: str, plan: VllmPlan, base: Foundation, secret_name: Optional[str], image: pulumi.Input[str]
    ) -> tuple[k8s.apps.v1.Deployment, first_up.Wait]:
        """The single-host server: one pod per TPU node, awaited until every replica is ready; and that wait as
        the first `up` sees it (the pool's minimum nodes exist from its creation: TPU hours from the first minute)."""
        spec, cluster = plan.spec, base.cluster
        template = pod_template(plan, plan.pool, LABELS, base.bucket.name, spec.ksa_name, secret_name, image)
        # `pulumi up` waits for every replica to be ready: as long as the template's probes allow, after
        # a TPU node and the image (k8s/probes.py); a rollout restarts up to replicas.max one by one.
        budget = pod_budget(template, rollout_waves=spec.replicas.max)
        wait = first_up.pod_wait(
            f"{name}-deployment",
            "every replica ready (the first start downloads the weights, then compiles)",
            template,
            tpu=True,
            download=True,  # the engine downloads the weights on its first start (a cached copy later)
        )
        deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=APP, namespace=spec.namespace, labels=LABELS, annotations=workload_annotations(plan)
            ),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                # With an HPA the replica count is its to own: declaring it would scale a serving
                # replica down on every template change (server-side apply owns what it sets).
                replicas=None if plan.autoscales else spec.replicas.min,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=LABELS),
                strategy=k8s.apps.v1.DeploymentStrategyArgs(
                    # The pool has one TPU node per replica up to replicas.max: a surge pod could wait
                    # forever for a node, so a rollout replaces one replica at a time instead.
                    type="RollingUpdate",
                    rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_surge=0, max_unavailable=1),
                ),
                template=template,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=cluster.provider,
                # The TPU pool first: its nodes are then up when the await starts.
                depends_on=[*base.namespace_ready, base.identity, *cluster.pools],
                custom_timeouts=budget.custom_timeouts(),
            ),
        )
        return deployment, wait

    def _secret(
        self, name: str, args: Mapping[str, Any], plan: VllmPlan, opts: pulumi.ResourceOptions
    ) -> Optional[str]:
        """One Secret with the Hugging Face token and vLLM's API key, from Pulumi secrets only."""
        data: dict[str, pulumi.Input[str]] = {}
        if plan.model.architecture.gated:
            data[HF_SECRET_KEY] = pulumi.Output.secret(args["hf_token"])
        if plan.spec.api_key:
            data[API_KEY_SECRET_KEY] = pulumi.Output.secret(args["api_key_secret"])
        if not data:
            return None
        k8s.core.v1.Secret(
            f"{name}-secret",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SECRET_NAME, namespace=plan.spec.namespace),
            type="Opaque",
            string_data=data,
            opts=opts,
        )
        return SECRET_NAME

    def _service(
        self, name: str, plan: VllmPlan, labels: dict[str, str], target_port: int, opts: pulumi.ResourceOptions
    ) -> k8s.core.v1.Service:
        """Internal load balancer by default; public only on request and then only to source ranges. Behind the
        gateway the Service is ClusterIP: the Gateway is the load balancer (the smoke test still calls the Service)."""
        spec = plan.spec
        exposure = plan.service_exposure
        return k8s.core.v1.Service(
            f"{name}-service",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=SERVICE,
                namespace=spec.namespace,
                annotations=INTERNAL_LB_ANNOTATION if exposure == "internal" else None,
            ),
            spec=k8s.core.v1.ServiceSpecArgs(
                type=service_type(exposure),
                external_traffic_policy=external_traffic_policy(exposure),
                selector=labels,
                # One URL either way: to vLLM's API server, or to Ray Serve's proxy on a multi-host slice.
                ports=[k8s.core.v1.ServicePortArgs(name="http", port=PORT, target_port=target_port, protocol="TCP")],
                load_balancer_source_ranges=(spec.source_ranges or None) if exposure != "cluster" else None,
            ),
            opts=opts,
        )

    def _autoscaler(
        self,
        name: str,
        plan: VllmPlan,
        deployment: k8s.apps.v1.Deployment,
        opts: pulumi.ResourceOptions,
        pool_ready: list[pulumi.Resource],
    ) -> None:
        """The HPA scales on vLLM's queue through the adapter, from what Managed Prometheus scrapes (`scrape`);
        neither the HPA nor the adapter when the replica count is fixed: there is nothing to scale."""
        spec, cluster_spec = plan.spec, plan.cluster.spec
        if not plan.autoscales:
            return
        adapter: list[pulumi.Resource] = []
        if spec.install_metrics_adapter:
            adapter.append(
                CustomMetricsAdapter(
                    f"{name}-metrics-adapter",
                    {"project": cluster_spec.project, "universe": cluster_spec.universe},
                    opts=pulumi.ResourceOptions(
                        parent=self, providers=[opts.provider] if opts.provider else None, depends_on=pool_ready
                    ),
                )
            )
        k8s.autoscaling.v2.HorizontalPodAutoscaler(
            f"{name}-hpa",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=HPA_NAME, namespace=spec.namespace),
            spec=k8s.autoscaling.v2.HorizontalPodAutoscalerSpecArgs(
                scale_target_ref=k8s.autoscaling.v2.CrossVersionObjectReferenceArgs(
                    api_version="apps/v1", kind="Deployment", name=APP
                ),
                min_replicas=spec.replicas.min,
                max_replicas=spec.replicas.max,
                metrics=[
                    k8s.autoscaling.v2.MetricSpecArgs(
                        type="Pods",
                        pods=k8s.autoscaling.v2.PodsMetricSourceArgs(
                            metric=k8s.autoscaling.v2.MetricIdentifierArgs(name=HPA_METRICS[spec.autoscaling.metric]),
                            target=k8s.autoscaling.v2.MetricTargetArgs(
                                type="AverageValue", average_value=str(spec.autoscaling.target).removesuffix(".0")
                            ),
                        ),
                    )
                ],
                behavior=k8s.autoscaling.v2.HorizontalPodAutoscalerBehaviorArgs(
                    # A new replica takes minutes (a TPU node, then the model): scale up at once, down slowly.
                    scale_up=k8s.autoscaling.v2.HPAScalingRulesArgs(
                        stabilization_window_seconds=0,
                        policies=[k8s.autoscaling.v2.HPAScalingPolicyArgs(type="Pods", value=1, period_seconds=60)],
                    ),
                    scale_down=k8s.autoscaling.v2.HPAScalingRulesArgs(
                        stabilization_window_seconds=600,
                        policies=[k8s.autoscaling.v2.HPAScalingPolicyArgs(type="Pods", value=1, period_seconds=300)],
                    ),
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=opts.provider, depends_on=[deployment, *adapter]),
        )

    @staticmethod
    def _address(service: k8s.core.v1.Service, plan: VllmPlan) -> pulumi.Output[str]:
        spec = plan.spec
        if plan.gateway is not None:
            # GKE writes the load balancer's address to the Gateway's status (ledger: gke.gateway-status-address),
            # which a CustomResource does not read back: the output says where to find it, and the smoke test reads
            # it there. A reserved static address named in spec.addresses would make it a known output, but GKE's
            # page on static addresses for gke-l7-rilb could not be read to confirm the form it takes.
            status = "{.status.addresses[0].value}"
            return pulumi.Output.from_input(
                f"$(kubectl get gateway {GATEWAY_NAME} -n {spec.namespace} -o jsonpath='{status}')"
            )
        if plan.service_exposure == "cluster":
            return pulumi.Output.from_input(in_cluster_host(spec))

        def ingress_ip(status: Any) -> str:
            ingress = getattr(getattr(status, "load_balancer", None), "ingress", None) if status else None
            return ingress[0].ip if ingress else "<pending load balancer>"

        return service.status.apply(ingress_ip)


def _ready_replicas(status: Any) -> int:
    """`status.readyReplicas` of the awaited Deployment (unknown in a preview: 0)."""
    return int(getattr(status, "ready_replicas", None) or 0) if status else 0


def _curl(base_url: str, plan: VllmPlan) -> str:
    body = json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT})  # the name vLLM answers to
    auth = ' -H "Authorization: Bearer $VLLM_API_KEY"' if plan.spec.api_key else ""
    return f"curl {base_url}/completions -H 'Content-Type: application/json'{auth} -d '{body}'"
