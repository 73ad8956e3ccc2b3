"""`VllmStack`: serve a model with vLLM on a TPU slice sized from the catalogue, autoscaled on
vLLM's own queue metric. The tutorial ([D-GKE-VLLM]) as one component.

Decisions live in `vllm.spec.plan_vllm`; the pod template in `vllm.pod`; this module declares the
resources: cluster, weights bucket, Workload Identity, Secret, Deployment, Service, PodMonitoring,
the metrics adapter and the HPA, and the outputs a user needs to call the API.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from typing import Any, Optional, cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.awaits import pod_budget
from tpu_stacks.catalog.inference_gateway import METRICS_PORT as PICKER_METRICS_PORT
from tpu_stacks.catalog.inference_gateway import SCHEDULED_STATUS
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.exposure import INTERNAL_LB_ANNOTATION, external_traffic_policy, service_type
from tpu_stacks.gcp.monitoring.component import declare_monitoring
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan, plan_monitoring
from tpu_stacks.gcp.registry import docker_repository, image_reference
from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.k8s.metrics_adapter import CustomMetricsAdapter
from tpu_stacks.k8s.network_policy import declare_network_policies
from tpu_stacks.k8s.platform_flows import smoke_test_group
from tpu_stacks.k8s.pod_monitoring import pod_monitoring
from tpu_stacks.k8s.smoke import smoke_test_job
from tpu_stacks.smoke_plan import SmokeTest, flag_value, read_metrics, server_fingerprint
from tpu_stacks.validation import cluster_of, component_inputs, parse, parse_section
from tpu_stacks.vllm.args import VllmStackArgs
from tpu_stacks.vllm.before_up import first_up_record, multihost_waits
from tpu_stacks.vllm.descriptor import WORKLOAD
from tpu_stacks.vllm.download_plan import writer_ksa
from tpu_stacks.vllm.gateway import declare_gateway
from tpu_stacks.vllm.gateway_network import smoke_test_flows
from tpu_stacks.vllm.gateway_plan import GATEWAY_NAME, LISTENER_PORT, PICKER_NAME
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.monitoring_multihost import multihost_target
from tpu_stacks.vllm.multihost_plan import APP_NAME, SERVE_PORT
from tpu_stacks.vllm.network import SERVICE, network
from tpu_stacks.vllm.outputs import ServedSlice
from tpu_stacks.vllm.plan import VllmPlan, plan_vllm
from tpu_stacks.vllm.pod import API_KEY_SECRET_KEY, HF_SECRET_KEY, pod_template, workload_annotations
from tpu_stacks.vllm.rayservice import WORKER_CONTAINER, declare_ray_service, pod_labels
from tpu_stacks.vllm.rayservice import budget as ray_service_budget
from tpu_stacks.vllm.spec import HPA_METRICS, PORT, VllmSpec
from tpu_stacks.vllm.weights_download import server_grants, weights_bytes, weights_download_job, writer_grants
from tpu_stacks.workload import declare_foundation, declare_identity

TYPE = "tpu-stacks:index:VllmStack"
APP = "vllm-tpu"
SECRET_NAME = "hf-secret"
HPA_NAME = "vllm-hpa"
SAMPLE_PROMPT = {"prompt": "San Francisco is a", "max_tokens": 7, "temperature": 0}  # the tutorial's request


def _image(
    plan: VllmPlan, project: str, region: str, parent: pulumi.Resource, nodes_account: Optional[pulumi.Input[str]]
) -> pulumi.Input[str]:
    """The upstream pinned image, or the same image through Artifact Registry (which the nodes may read)."""
    registry = plan.spec.registry
    if registry.mode == "none":
        return plan.spec.image
    remote = registry.mode == "remote"
    repository = docker_repository(
        parent._name,
        gcp.artifactregistry.RepositoryArgs(
            repository_id=registry.repository,
            project=project,
            location=region,
            format="DOCKER",
            mode="REMOTE_REPOSITORY" if remote else "STANDARD_REPOSITORY",
            description="vLLM images for tpu-stacks",
            remote_repository_config=gcp.artifactregistry.RepositoryRemoteRepositoryConfigArgs(
                description="Docker Hub",
                docker_repository=gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryArgs(
                    public_repository="DOCKER_HUB"
                ),
            )
            if remote
            else None,
        ),
        nodes_account,
        parent,
        enable_api=plan.cluster.universe.is_default,
    )
    path = plan.spec.image.removeprefix("docker.io/") if remote else registry.image
    return image_reference(region, project, repository, path or "")


class VllmStack(pulumi.ComponentResource):
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
        args = cast(Any, component_inputs(VllmSpec, args))  # `hfToken` is `hf_token`, as in other languages
        plan = plan_vllm(
            parse_section(VllmSpec, args, "vllm"),
            parse(ClusterSpec, cluster_of(args), "cluster"),
            hf_token_given="hf_token" in args,
            api_key_given="api_key_secret" in args,
        )  # every refusal happens here, before the first resource
        target = (
            multihost_target(
                plan, WORKER_CONTAINER, application=APP_NAME, target_ongoing_requests=plan.spec.max_num_seqs
            )
            if plan.multi_host  # watched through Ray's metrics (vllm/monitoring_multihost.py)
            else vllm_target(plan, HPA_NAME, APP, APP)
        )
        monitoring = plan_monitoring(target, "vllm")
        smoke = smoke_test(plan, monitoring) if plan.spec.smoke_test else None  # its ports: network policies
        super().__init__(TYPE, name, {}, opts)
        self._plan = plan
        cluster_spec = plan.cluster.spec
        spec, project, region = plan.spec, cluster_spec.project, plan.cluster.region
        base = declare_foundation(
            self,
            name,
            plan.cluster,
            bucket_suffix="weights",
            purpose="model-weights",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
            # across hosts the servers only read, but for their compile cache; the download Job writes (below)
            bucket_grants=server_grants(plan) if plan.multi_host else None,
        )
        cluster, bucket, identity, depends = base.cluster, base.bucket, base.identity, base.namespace_ready
        pool = plan.pool
        ns_opts = base.kubernetes_options(self)
        secret_name = self._secret(name, args, plan, ns_opts)
        image = _image(plan, project, region, self, cluster.known_node_service_account)
        labels = {"app": APP}
        selector = labels
        if plan.multi_host:  # the slice decides the object: a RayService over whole multi-host slices
            # The weights first, once, by one Job: the slice's hosts then only read them (vllm/download_plan.py).
            # It runs the pinned upstream vLLM image (published, with vLLM's own huggingface_hub), not the Ray
            # Serve image the user builds during the first `up`: the download does not wait for that build.
            writer = declare_identity(
                self,
                f"{name}-weights-writer-identity",
                plan.cluster,
                cluster,
                depends,
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
                labels,
                bucket.name,
                image,
                pulumi.ResourceOptions(
                    parent=self,
                    provider=cluster.provider,
                    depends_on=[*depends, identity, *cluster.pools, download],
                ),
                pulumi.ResourceOptions.merge(ns_opts, pulumi.ResourceOptions(depends_on=cluster.pool_ready)),
            )
            waits = multihost_waits(name, plan, weights_bytes(plan), ray_service_budget(plan))
        else:
            workload, server_wait = self._deployment(
                name, plan, pool, labels, bucket.name, secret_name, image, cluster, depends, identity
            )
            waits = [server_wait]
        service = self._service(name, plan, selector, SERVE_PORT if plan.multi_host else PORT, ns_opts)
        behind: list[pulumi.Resource] = []  # what the smoke test's request also goes through
        if plan.gateway is not None:  # GKE Inference Gateway in front of the replicas (vllm/gateway.py)
            gateway = declare_gateway(
                name, plan.gateway, labels, PORT, ns_opts, pulumi.ResourceOptions(parent=self), project, region
            )
            behind = [gateway.gateway, gateway.route, gateway.pool, gateway.picker]
        groups = network(plan, labels, smoke.ports if smoke else ())
        if smoke is not None:  # the smoke-test pod's own contract: DNS, the server's ports (and the gateway's)
            # (on a multi-host slice the Service's pod is the Ray head, vllm/rayservice.py)
            server = pod_labels(labels, "head") if plan.multi_host else labels
            more = smoke_test_flows(plan.gateway) if plan.gateway is not None and plan.gateway.smoke_through else ()
            groups = (*groups, smoke_test_group(spec.namespace, server, smoke.ports, more))
        declare_network_policies(name, spec.namespace, groups, ns_opts)
        if not plan.multi_host:
            self._monitoring(name, plan, labels, workload, cluster_spec, ns_opts, cluster.pool_ready)
        if smoke is not None:
            smoke_test_job(f"{name}-smoke-test", smoke, cluster.provider, self, [*depends, workload, service, *behind])
            waits.append(first_up.job_wait(f"{name}-smoke-test", "the smoke test", smoke.active_deadline_seconds))
        address = self._address(service, plan)
        self.service_address = address
        port = LISTENER_PORT if plan.gateway else PORT
        self.base_url = address.apply(lambda host: f"http://{host}:{port}/v1")
        self.model_id = pulumi.Output.from_input(plan.model.id)
        self.served_slice = pulumi.Output.from_input(
            ServedSlice(
                generation=plan.shape.generation,
                topology=plan.shape.topology,
                machine_type=plan.shape.machine_type,
                chips=plan.shape.chips,
                tensor_parallel_size=plan.tensor_parallel_size,
            )
        )
        self.weights_bucket = bucket.name
        self.curl = self.base_url.apply(lambda url: _curl(url, plan))
        # A RayService reports no replica count Pulumi reads: the slices it started once Ready (awaited).
        self.ready_replicas = (
            workload.id.apply(lambda _: spec.replicas.min)
            if plan.multi_host
            else cast(k8s.apps.v1.Deployment, workload).status.apply(_ready_replicas)
        )
        self.cluster = cluster
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
                "service_address": self.service_address,
                "base_url": self.base_url,
                "model_id": self.model_id,
                "served_slice": self.served_slice,
                "weights_bucket": self.weights_bucket,
                "curl": self.curl,
                "ready_replicas": self.ready_replicas,
                # not a typed output (the SDKs' schema does not list it): what `tpu-stacks plan` prints before `up`
                first_up.OUTPUT: first_up_record(plan, waits, weights_bytes(plan)).document(),
            }
        )

    @property
    def plan(self) -> VllmPlan:
        return self._plan

    def _deployment(
        self,
        name: str,
        plan: VllmPlan,
        pool: PoolPlan,
        labels: dict[str, str],
        bucket: pulumi.Input[str],
        secret_name: Optional[str],
        image: pulumi.Input[str],
        cluster: Any,
        depends: list[pulumi.Resource],
        identity: pulumi.Resource,
    ) -> tuple[k8s.apps.v1.Deployment, first_up.Wait]:
        """The single-host server: one pod per TPU node, awaited until every replica is ready; and that wait as
        the first `up` sees it (the pool's minimum nodes exist from its creation: TPU hours from the first minute)."""
        spec = plan.spec
        template = pod_template(plan, pool, labels, bucket, spec.ksa_name, secret_name, image)
        # `pulumi up` waits for every replica to be ready: as long as the template's probes allow, after
        # a TPU node and the image (k8s/probes.py); a rollout restarts up to replicas.max one by one.
        budget = pod_budget(template, rollout_waves=spec.replicas.max)
        wait = first_up.pod_wait(
            f"{name}-deployment",
            "every replica ready (the first start downloads the weights, then compiles)",
            template,
            tpu=True,
            rollout_waves=spec.replicas.max,
            download=True,  # the engine downloads the weights on its first start (a cached copy later)
        )
        deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=APP, namespace=spec.namespace, labels=labels, annotations=workload_annotations(plan)
            ),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                # With an HPA the replica count is its to own: declaring it would scale a serving
                # replica down on every template change (server-side apply owns what it sets).
                replicas=None if plan.autoscales else spec.replicas.min,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
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
                depends_on=[*depends, identity, *cluster.pools],
                custom_timeouts=budget.custom_timeouts(),
            ),
        )
        return deployment, wait

    def _secret(self, name: str, args: VllmStackArgs, plan: VllmPlan, opts: pulumi.ResourceOptions) -> Optional[str]:
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

    def _monitoring(
        self,
        name: str,
        plan: VllmPlan,
        labels: dict[str, str],
        deployment: k8s.apps.v1.Deployment,
        cluster_spec: ClusterSpec,
        opts: pulumi.ResourceOptions,
        pool_ready: list[pulumi.Resource],
    ) -> None:
        """Managed Prometheus scrapes /metrics; the HPA scales on vLLM's queue through the adapter
        (neither the HPA nor the adapter when the replica count is fixed: there is nothing to scale)."""
        spec = plan.spec
        pod_monitoring(f"{name}-pod-monitoring", "vllm-pod-monitoring", spec.namespace, labels, PORT, opts)
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


def in_cluster_host(spec: VllmSpec) -> str:
    return f"{SERVICE}.{spec.namespace}.svc.cluster.local"


def served_model_name(plan: VllmPlan) -> str:
    """The model name the API answers to: `--served-model-name` when the extra arguments set it, else `--model`
    (ledger: vllm.flag.served-model-name)."""
    return flag_value(plan.engine_args(), "--served-model-name") or plan.model.id


def smoke_test(plan: VllmPlan, monitoring: MonitoringPlan) -> SmokeTest:
    """One short completion (the tutorial's prompt) through the Service, then /metrics on the same port. Behind
    GKE Inference Gateway the completion goes through the Gateway's address instead, and the picker's count of
    successful picks must rise across it (k8s/smoke_check.py): `up` then proves the route, the pool and the picker."""
    base = f"http://{in_cluster_host(plan.spec)}:{PORT}"
    if plan.multi_host:
        # Through the same Service to Ray Serve LLM's OpenAI app, which serves /v1/completions
        # (ray.serve.llm build_openai_app, docs.ray.io serve/llm "Serving LLMs": the endpoints it supports).
        # No /metrics there: Ray exports them per pod on its metrics port, which Managed Prometheus scrapes.
        return SmokeTest(
            answer=WORKLOAD.smoke_answer or "",
            namespace=plan.spec.namespace,
            url=f"{base}/v1/completions",
            body=json.dumps({"model": plan.model.id, **SAMPLE_PROMPT}, sort_keys=True),
            image=PYTHON_IMAGE,
            server=server_fingerprint(plan.spec),
            ports=(SERVE_PORT,),
        )
    gateway: dict[str, Any] = {}
    if plan.gateway is not None and plan.gateway.smoke_through:
        namespace = plan.spec.namespace
        counter = {"name": plan.gateway.picker.metrics.picks, "labels": {"status": SCHEDULED_STATUS}}
        gateway = {
            "url": f"http://{{gateway}}:{LISTENER_PORT}/v1/completions",  # the script reads the Gateway's address
            "gateway": (namespace, GATEWAY_NAME),
            "picker_metrics_url": f"http://{PICKER_NAME}.{namespace}.svc.cluster.local:{PICKER_METRICS_PORT}/metrics",
            "picker_counter": json.dumps(counter, sort_keys=True),
        }
    return SmokeTest(
        answer=WORKLOAD.smoke_answer or "",
        namespace=plan.spec.namespace,
        url=gateway.pop("url", f"{base}/v1/completions"),
        body=json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT}, sort_keys=True),
        image=PYTHON_IMAGE,
        server=server_fingerprint(plan.spec),
        ports=(PORT,),
        metrics_url=f"{base}/metrics",  # the API server serves /metrics on its own port (vllm/monitoring.py)
        metrics=read_metrics(monitoring),
        api_key=(SECRET_NAME, API_KEY_SECRET_KEY) if plan.spec.api_key else None,
        **gateway,
    )


def _ready_replicas(status: Any) -> int:
    """`status.readyReplicas` of the awaited Deployment (unknown in a preview: 0)."""
    return int(getattr(status, "ready_replicas", None) or 0) if status else 0


def _curl(base_url: str, plan: VllmPlan) -> str:
    body = json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT})  # the name vLLM answers to
    auth = ' -H "Authorization: Bearer $VLLM_API_KEY"' if plan.spec.api_key else ""
    return f"curl {base_url}/completions -H 'Content-Type: application/json'{auth} -d '{body}'"
