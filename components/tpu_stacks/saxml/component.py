"""`SaxmlStack`: Saxml serving a large model on multi-host TPU slices, published declaratively.
The Saxml tutorial ([D-GKE-SAX], and its sovereign-cloud edition [D-S3NS-SAX]) as one component.

Decisions live in `saxml.plan.plan_saxml`, the cluster and its pools included (this module reads
them from the plan, declares them with `TpuCluster.from_plan` and re-derives nothing); the CPU
servers in `saxml.servers`, the model servers' JobSet in `saxml.jobset`, publishing in
`saxml.publisher`. This module implements the hooks of the lifecycle every workload shares
(lifecycle/component.py: the cluster with one TPU pool per slice, the admin bucket, the Google service
account with Workload Identity, network policies, smoke test, dashboard): its own objects are the
admin server, the JobSet controller and the model servers, the HTTP server and its Service, and the
publisher Job; then the outputs a user needs to call Saxml.
(No `from __future__ import annotations`: the schema inference reads these annotations.)
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks import first_up
from tpu_stacks.gcp.monitoring.outputs import MonitoringLinks
from tpu_stacks.gcp.monitoring.plan import MonitoringPlan
from tpu_stacks.gcp.monitoring.targets import Target
from tpu_stacks.gcp.universe import advisories, cluster_features
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.k8s.jobset import install_jobset_controller
from tpu_stacks.lifecycle.component import Declared, FoundationSettings, WorkloadComponent
from tpu_stacks.saxml.args import SaxmlStackArgs
from tpu_stacks.saxml.descriptor import WORKLOAD
from tpu_stacks.saxml.jobset import JOBSET_NAME, REPLICATED_JOB, model_server_set, server_wait
from tpu_stacks.saxml.monitoring import saxml_target
from tpu_stacks.saxml.network import network
from tpu_stacks.saxml.outputs import SaxmlCurl, SaxmlSlice
from tpu_stacks.saxml.plan import SaxmlPlan
from tpu_stacks.saxml.publisher import curl_commands, deadline_minutes, example_model, publisher_job, script_config
from tpu_stacks.saxml.servers import (
    HTTP_NAME,
    SERVICE_NAME,
    admin_server,
    http_server,
    http_service,
    in_cluster_url,
    pod_labels,
)
from tpu_stacks.saxml.spec import HTTP_PORT, SAMPLE_QUERY
from tpu_stacks.serving.smoke_plan import REQUEST_WINDOW_MINUTES, SmokeTest, server_fingerprint
from tpu_stacks.workload import READ_ROLE, Foundation

TYPE = "tpu-stacks:index:SaxmlStack"


class SaxmlStack(WorkloadComponent[SaxmlPlan], token=TYPE, workload=WORKLOAD):
    """Saxml on TPU slices sized for the model: admin, model servers (JobSet), HTTP server, published models."""

    http_endpoint: pulumi.Output[str]
    """The Sax HTTP server's URL (the load balancer, or the in-cluster name)."""
    admin_bucket: pulumi.Output[str]
    """The bucket holding sax-root and sax-fs-root."""
    gsa_email: pulumi.Output[str]
    """The Google service account the Saxml pods act as."""
    published_models: pulumi.Output[list[str]]
    """Saxml model names the publisher keeps published."""
    served_slice: pulumi.Output[SaxmlSlice]
    curl: pulumi.Output[SaxmlCurl]
    """The tutorial's /publish, /listcell, /generate and /unpublish requests, ready to paste."""
    monitoring: pulumi.Output[MonitoringLinks]
    """The stack's Cloud Monitoring dashboard and the console pages to open first."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name (the one the stack created, or the existing one it runs on)."""
    cluster_endpoint: pulumi.Output[str]
    """The cluster's control-plane IP address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) for the cluster that authenticates with gke-gcloud-auth-plugin."""

    def __init__(self, name: str, args: SaxmlStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(name, args, opts)  # the lifecycle (lifecycle/component.py); this class implements its hooks

    def monitoring_target(self, plan: SaxmlPlan) -> Target:
        return saxml_target(plan, JOBSET_NAME, REPLICATED_JOB)

    def smoke_test(self, plan: SaxmlPlan, monitoring: MonitoringPlan) -> Optional[SmokeTest]:
        return smoke_test(plan, monitoring)

    def advisories(self, plan: SaxmlPlan) -> list[str]:
        """What the universe documents as unavailable (S3NS: GKE Standard, machine series other than C3
        and A3): the tutorial's design is kept, one advisory line per limit (docs/sovereign.md)."""
        cluster_plan = plan.cluster
        own_system_pool = not (cluster_plan.autopilot or cluster_plan.spec.existing)
        planned = cluster_features(
            cluster_plan.spec.mode,
            machine_types=[pool.shape.machine_type for pool in cluster_plan.pools]
            + ([cluster_plan.spec.system_pool.machine_type] if own_system_pool else []),
            bucket_locations=[cluster_plan.region],
        )
        return list(advisories(cluster_plan.universe, planned))

    def foundation(self, plan: SaxmlPlan) -> FoundationSettings:
        spec = plan.spec
        return FoundationSettings(
            bucket_suffix="admin",
            purpose="saxml-admin",
            force_destroy=spec.force_destroy_bucket,
            namespace=spec.namespace,
            ksa_name=spec.ksa_name,
            gsa_name=spec.gsa_name,
            read_buckets=spec.checkpoint_buckets,
            # Host-network pods fail `baseline` already: only then does the namespace allow them.
            pod_security="privileged" if plan.host_network else "restricted",
        )

    def network(self, plan: SaxmlPlan, smoke_ports: Sequence[int]) -> Sequence[Group]:
        return network(plan, smoke_ports)

    def record_first_up(self, plan: SaxmlPlan, waits: Sequence[first_up.Wait]) -> first_up.FirstUp:
        return first_up.FirstUp("saxml", tuple(waits), first_up.slices(plan.cluster.pools_of(0)[0], plan.slices))

    def declare_objects(self, name: str, plan: SaxmlPlan, base: Foundation, inputs: Mapping[str, Any]) -> Declared:
        """The admin server, the JobSet controller and the model servers, the HTTP server and its Service, and the
        publisher Job."""
        spec, cluster, bucket, identity = plan.spec, base.cluster, base.bucket, base.identity
        provider, ready = cluster.provider, [*base.namespace_ready, identity]
        if plan.host_network and cluster.known_node_service_account is not None:
            self._node_read(name, bucket, cluster.known_node_service_account)
        k8s_opts = base.kubernetes_options(self, identity)
        sax_root = pulumi.Output.concat("gs://", bucket.name, "/sax-root")
        admin = admin_server(f"{name}-admin-server", plan, bucket.name, k8s_opts)
        controller = (
            [install_jobset_controller(f"{name}-jobset-controller", spec.jobset.version, provider, self)]
            if spec.jobset.install
            else []
        )
        model_servers = model_server_set(
            f"{name}-model-servers",
            plan,
            plan.cluster.pools_of(0),
            sax_root,
            provider,
            self,
            depends_on=[*ready, admin, *controller, *cluster.pools],
        )
        http = http_server(f"{name}-http-server", plan, sax_root, k8s_opts)
        service = http_service(f"{name}-http-service", plan, k8s_opts)
        script = script_config(f"{name}-publisher-script", plan, k8s_opts)
        publisher = publisher_job(
            f"{name}-publisher",
            plan,
            bucket.name,
            plan.cluster.universe,
            pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[*ready, model_servers, http, service, script]
            ),
        )
        waits = [
            server_wait(f"{name}-model-servers", plan, plan.cluster.pools_of(0), sax_root),
            first_up.job_wait(
                f"{name}-publisher", "the models published and loaded", deadline_minutes(plan) * 60, tpu=True
            ),
        ]
        address = self._address(service, plan)
        outputs = {
            "http_endpoint": address.apply(lambda host: f"http://{host}:{HTTP_PORT}"),
            "admin_bucket": bucket.name,
            "gsa_email": identity.gsa_email,
            "published_models": pulumi.Output.from_input([model.model for model in plan.models]),
            "served_slice": pulumi.Output.from_input(
                SaxmlSlice(
                    generation=plan.shape.generation,
                    topology=plan.shape.topology,
                    machine_type=plan.shape.machine_type,
                    chips=plan.shape.chips,
                    hosts=plan.hosts,
                    chips_per_vm=plan.chips_per_host,
                    slices=plan.slices,
                )
            ),
            "curl": address.apply(lambda host: curl_commands(f"{host}:{HTTP_PORT}", plan)),
        }
        return Declared(
            outputs,
            waits,
            smoke_after=[*ready, model_servers, http, service, publisher],
            smoke_pods=pod_labels(HTTP_NAME),  # the smoke test calls sax-http
            policies_after=[identity],
        )

    def _node_read(self, name: str, bucket: gcp.storage.Bucket, nodes: pulumi.Input[str]) -> None:
        """Host-network pods cannot use Workload Identity: their GCS calls carry the node's identity,
        which may read the admin bucket and nothing else of it."""
        gcp.storage.BucketIAMMember(
            f"{name}-node-read",
            gcp.storage.BucketIAMMemberArgs(
                bucket=bucket.name,
                role=READ_ROLE,
                member=pulumi.Output.from_input(nodes).apply(lambda e: f"serviceAccount:{e}"),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )

    @staticmethod
    def _address(service: k8s.core.v1.Service, plan: SaxmlPlan) -> pulumi.Output[str]:
        if plan.spec.exposure == "cluster":
            return pulumi.Output.from_input(f"{SERVICE_NAME}.{plan.spec.namespace}.svc.cluster.local")

        def ingress_ip(status: Any) -> str:
            ingress = getattr(getattr(status, "load_balancer", None), "ingress", None) if status else None
            return ingress[0].ip if ingress else "<pending load balancer>"

        return service.status.apply(ingress_ip)


def smoke_test(plan: SaxmlPlan, monitoring: MonitoringPlan) -> Optional[SmokeTest]:
    """The tutorial's /generate for the first published model, through the Service (Saxml exports no metrics);
    None when switched off or when nothing is published (there is no model to ask).

    The publisher Job runs first; when it does not wait for the models to load (`publishWaitMinutes: 0`),
    the request is retried for as long as a model server may take to load (the dashboard's startup budget)."""
    if not (plan.spec.smoke_test and plan.models):
        return None
    window = REQUEST_WINDOW_MINUTES if plan.spec.publish_wait_minutes else monitoring.target.startup_minutes
    return SmokeTest(
        answer=WORKLOAD.smoke_answer or "",
        namespace=plan.spec.namespace,
        url=f"{in_cluster_url(plan)}/generate",
        body=json.dumps({"model": example_model(plan).model, "query": SAMPLE_QUERY}, sort_keys=True),
        image=plan.spec.images.publisher,  # the stack's pinned Python image (a mirror where Docker Hub is out of reach)
        server=server_fingerprint(plan.spec),
        ports=(HTTP_PORT,),
        window_minutes=window,
    )
