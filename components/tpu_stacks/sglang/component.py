"""`SglangStack`: serve a model with SGLang-JAX's OpenAI-compatible server on a single-host TPU slice sized from the
catalogue, with the radix prefix cache on. The image is built from the pinned wheel into the stack's registry
(`image/`, one `gcloud builds submit` the stack prints), or a pinned image the user names.

Decisions live in `sglang.plan.plan_sglang`; the pod template in `sglang.pod`; the lifecycle every workload shares
(cluster, namespace, bucket, identity, network policies, smoke test, monitoring, outputs) in
`lifecycle/component.py`. This class implements its hooks: the registry, the Secret, the Deployment and the Service.
No `scrape` hook: SGLang-JAX exports no metrics (sglang/monitoring.py).
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.image_build import submitted_build
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.gcp.registry import docker_repository, image_reference
from tpu_stacks.images import PYTHON_IMAGE
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.lifecycle.component import Declared, FoundationSettings, WorkloadComponent
from tpu_stacks.objects.awaits import pod_budget
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.serving.exposure import INTERNAL_LB_ANNOTATION, external_traffic_policy, service_type
from tpu_stacks.serving.smoke_plan import SmokeTest, server_fingerprint
from tpu_stacks.sglang.args import SglangStackArgs
from tpu_stacks.sglang.descriptor import WORKLOAD
from tpu_stacks.sglang.engine import SGLANG
from tpu_stacks.sglang.monitoring import sglang_target
from tpu_stacks.sglang.network import SERVICE, network
from tpu_stacks.sglang.outputs import SglangSlice
from tpu_stacks.sglang.plan import SglangPlan, plan_sglang
from tpu_stacks.sglang.pod import CONTAINER, HF_SECRET_KEY, pod_template, workload_annotations
from tpu_stacks.sglang.spec import PORT, SglangSpec
from tpu_stacks.workload import Foundation

TYPE = "tpu-stacks:index:SglangStack"
APP = "sglang-jax"
LABELS = {"app": APP}
SECRET_NAME = "hf-secret"
SAMPLE_PROMPT = {"prompt": "San Francisco is a", "max_tokens": 7, "temperature": 0}


class SglangStack(WorkloadComponent[SglangPlan], token=TYPE, workload=WORKLOAD):
    """SGLang-JAX on a single-host TPU slice sized for the model: weights cached on GCS, radix cache on."""

    service_address: pulumi.Output[str]
    """The Service's address (the load balancer IP, or the in-cluster DNS name)."""
    base_url: pulumi.Output[str]
    """The OpenAI-compatible API base URL."""
    model_id: pulumi.Output[str]
    served_slice: pulumi.Output[SglangSlice]
    image: pulumi.Output[str]
    """The server image the Deployment runs."""
    image_build: pulumi.Output[str]
    """The command that builds that image from the pinned wheel (empty when `sglang.image` names one)."""
    weights_bucket: pulumi.Output[str]
    curl: pulumi.Output[str]
    """A ready-to-paste request to /v1/completions."""
    monitoring: pulumi.Output[MonitoringLinks]
    """The stack's Cloud Monitoring dashboard and the console pages to open first."""
    cluster_name: pulumi.Output[str]
    """The GKE cluster's name (the one the stack created, or the existing one it runs on)."""
    cluster_endpoint: pulumi.Output[str]
    """The cluster's control-plane IP address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) for the cluster that authenticates with gke-gcloud-auth-plugin."""

    def __init__(self, name: str, args: SglangStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(name, args, opts)  # the lifecycle (lifecycle/component.py); this class implements its hooks

    def plan_workload(self, spec: SglangSpec, cluster: ClusterSpec, inputs: Mapping[str, Any]) -> SglangPlan:
        return plan_sglang(spec, cluster, hf_token_given="hf_token" in inputs)

    def monitoring_target(self, plan: SglangPlan) -> Target:
        return sglang_target(plan, APP, CONTAINER)

    def smoke_test(self, plan: SglangPlan, monitoring: MonitoringPlan) -> Optional[SmokeTest]:
        return smoke_test(plan) if plan.spec.smoke_test else None

    def foundation(self, plan: SglangPlan) -> FoundationSettings:
        spec = plan.spec
        return FoundationSettings(
            bucket_suffix="weights",
            purpose="model-weights",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
        )

    def network(self, plan: SglangPlan, smoke_ports: Sequence[int]) -> Sequence[Group]:
        return network(plan, LABELS, smoke_ports)

    def record_first_up(self, plan: SglangPlan, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        return first_up.FirstUp(
            workload="sglang", waits=tuple(waits), tpu=first_up.slices(plan.pool, plan.spec.replicas)
        )

    def declare_objects(self, name: str, plan: SglangPlan, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """The image's registry, the Secret (a gated model), the Deployment and its Service."""
        cluster = base.cluster
        ns_opts = base.kubernetes_options(self)
        secret_name = self._secret(name, inputs, plan, ns_opts)
        image, build = self._image(name, plan, cluster.known_node_service_account, base.storage_api)
        template = pod_template(plan, plan.pool, LABELS, base.bucket.name, secret_name, image)
        deployment = self._deployment(
            name, plan, template, [*base.namespace_ready, base.identity, *cluster.pools], base
        )
        service = self._service(name, plan, ns_opts)
        wait = first_up.pod_wait(
            f"{name}-deployment",
            "every replica ready (the first start downloads the weights, then compiles)",
            template,
            tpu=True,
            download=True,  # the server downloads the weights on its first start (from the bucket later)
        )
        address = self._address(service, plan)
        base_url = address.apply(lambda host: f"http://{host}:{PORT}/v1")
        outputs = {
            "service_address": address,
            "base_url": base_url,
            "model_id": pulumi.Output.from_input(plan.model.id),
            "served_slice": pulumi.Output.from_input(served_slice(plan)),
            "image": image,
            "image_build": build,
            "weights_bucket": base.bucket.name,
            "curl": base_url.apply(lambda url: _curl(url, plan)),
        }
        return Declared(outputs, [wait], smoke_after=[*base.namespace_ready, deployment, service], smoke_pods=LABELS)

    def _deployment(
        self,
        name: str,
        plan: SglangPlan,
        template: k8s.core.v1.PodTemplateSpecArgs,
        depends_on: list[pulumi.Resource],
        base: Foundation,
    ) -> k8s.apps.v1.Deployment:
        """A fixed count of servers, one per TPU node; `pulumi up` waits until every replica is ready."""
        spec = plan.spec
        return k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=APP, namespace=spec.namespace, labels=LABELS, annotations=workload_annotations(plan)
            ),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=spec.replicas,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=LABELS),
                # one TPU node per replica: a surge pod would wait for a node that never comes
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
                custom_timeouts=pod_budget(template, rollout_waves=spec.replicas).custom_timeouts(),
            ),
        )

    def _image(
        self,
        name: str,
        plan: SglangPlan,
        nodes_account: Optional[pulumi.Input[str]],
        storage_api: Sequence[pulumi.Resource],
    ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        """The image the user named, or the stack's registry and the image the printed command builds into it."""
        if not plan.builds_image:
            return pulumi.Output.from_input(plan.spec.image or ""), pulumi.Output.from_input("")
        project, region = plan.cluster.spec.project, plan.cluster.region
        repository = docker_repository(
            name,
            gcp.artifactregistry.RepositoryArgs(
                repository_id=plan.repository,
                project=project,
                location=region,
                format="DOCKER",
                mode="STANDARD_REPOSITORY",
                description="SGLang-JAX server images for tpu-stacks",
            ),
            nodes_account,
            self,
            enable_api=plan.cluster.universe.is_default,
        )
        image = image_reference(region, project, repository, plan.image_path())
        # the build runs as the stack's own builder account: push here, write logs (gcp/image_build.py)
        build = submitted_build(
            name,
            project,
            region,
            repository,
            image,
            plan.builder_account,
            "Builds the SGLang-JAX image",
            self,
            plan.build_command,
            enable_api=plan.cluster.universe.is_default,
            storage_api=storage_api,
        )
        build.apply(lambda command: pulumi.log.info(f"the SGLang-JAX server image: {command}", self))
        return image, build

    def _secret(self, name: str, args: Any, plan: SglangPlan, opts: pulumi.ResourceOptions) -> Optional[str]:
        """The Hugging Face token, for a gated model only, from the Pulumi secret."""
        if not plan.model.architecture.gated:
            return None
        k8s.core.v1.Secret(
            f"{name}-secret",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SECRET_NAME, namespace=plan.spec.namespace),
            type="Opaque",
            string_data={HF_SECRET_KEY: pulumi.Output.secret(args["hf_token"])},
            opts=opts,
        )
        return SECRET_NAME

    @staticmethod
    def _service(name: str, plan: SglangPlan, opts: pulumi.ResourceOptions) -> k8s.core.v1.Service:
        """Internal load balancer by default; public only on request and then only to source ranges."""
        spec = plan.spec
        return k8s.core.v1.Service(
            f"{name}-service",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=SERVICE,
                namespace=spec.namespace,
                annotations=INTERNAL_LB_ANNOTATION if spec.exposure == "internal" else None,
            ),
            spec=k8s.core.v1.ServiceSpecArgs(
                type=service_type(spec.exposure),
                external_traffic_policy=external_traffic_policy(spec.exposure),
                selector=LABELS,
                ports=[k8s.core.v1.ServicePortArgs(name="http", port=PORT, target_port=PORT, protocol="TCP")],
                load_balancer_source_ranges=(spec.source_ranges or None) if spec.exposure != "cluster" else None,
            ),
            opts=opts,
        )

    @staticmethod
    def _address(service: k8s.core.v1.Service, plan: SglangPlan) -> pulumi.Output[str]:
        if plan.spec.exposure == "cluster":
            return pulumi.Output.from_input(in_cluster_host(plan.spec))

        def ingress_ip(status: Any) -> str:
            ingress = getattr(getattr(status, "load_balancer", None), "ingress", None) if status else None
            return ingress[0].ip if ingress else "<pending load balancer>"

        return service.status.apply(ingress_ip)


def served_slice(plan: SglangPlan) -> SglangSlice:
    shape = plan.shape
    return SglangSlice(
        generation=shape.generation,
        topology=shape.topology,
        machine_type=shape.machine_type,
        chips=shape.chips,
        tensor_parallel_size=plan.tensor_parallel_size,
    )


def in_cluster_host(spec: SglangSpec) -> str:
    return f"{SERVICE}.{spec.namespace}.svc.cluster.local"


def served_model_name(plan: SglangPlan) -> str:
    """The name the API answers to: `--served-model-name` when extraArgs set it, else `--model-path` (ServerArgs
    sets served_model_name to model_path when none is given; ledger: sglang.flag.model-path)."""
    return flag_value(plan.engine_args(), "--served-model-name", SGLANG) or plan.model.id


def smoke_test(plan: SglangPlan) -> SmokeTest:
    """One short completion through the Service to the OpenAI-compatible route (ledger: sglang.route.completions),
    judged as any OpenAI completion (the descriptor's `smoke_answer`). No metrics read: the server exports none."""
    return SmokeTest(
        answer=WORKLOAD.smoke_answer or "",
        namespace=plan.spec.namespace,
        url=f"http://{in_cluster_host(plan.spec)}:{PORT}/v1/completions",
        body=json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT}, sort_keys=True),
        image=PYTHON_IMAGE,
        server=server_fingerprint(plan.spec),
        ports=(PORT,),
    )


def _curl(base_url: str, plan: SglangPlan) -> str:
    body = json.dumps({"model": served_model_name(plan), **SAMPLE_PROMPT})
    return f"curl {base_url}/completions -H 'Content-Type: application/json' -d '{body}'"
