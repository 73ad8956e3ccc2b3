"""Saxml's CPU-side servers: the admin server and the HTTP server with its Service.

As upstream ([K-SAX] sax-admin-server.yaml, sax-http.yaml), minus its bad practices:
pinned images, CPU and memory requests and limits, probes on what each server answers (the admin
server's TCP port; the HTTP server's `GET /`), hardened pods (`k8s.security`: non-root, read-only
root filesystem, no capabilities, seccomp), and an internal load balancer by default
because the HTTP server's /publish, /unpublish and /update need no authentication.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.k8s.probes import liveness_probe, readiness_probe, tcp_probe
from tpu_stacks.k8s.security import harden
from tpu_stacks.saxml.engine import SAXML
from tpu_stacks.saxml.plan import SaxmlPlan
from tpu_stacks.saxml.spec import ADMIN_PORT, HTTP_PORT
from tpu_stacks.serving.exposure import INTERNAL_LB_ANNOTATION, external_traffic_policy, service_type

ADMIN_NAME = "sax-admin-server"
HTTP_NAME = "sax-http"
SERVICE_NAME = "sax-http-lb"  # the tutorial's name
MANAGED = {"app.kubernetes.io/managed-by": "tpu-stacks", "app.kubernetes.io/part-of": "saxml"}


USER = SAXML.image_user()


def pod_labels(name: str) -> dict[str, str]:
    """The labels of a CPU server's pods (its Deployment selector and its network policy's)."""
    return {"app": name}


def _resources(cpu: str, memory: str) -> k8s.core.v1.ResourceRequirementsArgs:
    """CPU-only servers: the CPU limit is the request (k8s.security: only TPU containers go without)."""
    return k8s.core.v1.ResourceRequirementsArgs(
        requests={"cpu": cpu, "memory": memory}, limits={"cpu": cpu, "memory": memory}
    )


def _deployment(
    resource: str,
    name: str,
    plan: SaxmlPlan,
    replicas: int,
    strategy: str,
    container: k8s.core.v1.ContainerArgs,
    opts: pulumi.ResourceOptions,
) -> k8s.apps.v1.Deployment:
    labels = pod_labels(name)
    return k8s.apps.v1.Deployment(
        resource,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=name, namespace=plan.spec.namespace, labels={**labels, **MANAGED}),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=replicas,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
            strategy=k8s.apps.v1.DeploymentStrategyArgs(type=strategy),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels),
                # No Kubernetes API token: they reach GCS through Workload Identity, never the API.
                spec=harden(
                    k8s.core.v1.PodSpecArgs(service_account_name=plan.spec.ksa_name, containers=[container]), USER
                ),
            ),
        ),
        opts=opts,
    )


def admin_server(
    resource: str, plan: SaxmlPlan, bucket: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> k8s.apps.v1.Deployment:
    """One admin server per sax root: `Recreate`, so two never run against the same bucket."""
    resources = plan.spec.resources.admin_server
    container = k8s.core.v1.ContainerArgs(
        name=ADMIN_NAME,
        image=plan.spec.images.admin_server,
        # The image runs admin_config and admin_server on gs://$GSBUCKET/sax-root and sax-fs-root ([SAX-IMAGES]).
        env=[k8s.core.v1.EnvVarArgs(name="GSBUCKET", value=bucket)],
        ports=[k8s.core.v1.ContainerPortArgs(name="admin", container_port=ADMIN_PORT)],
        resources=_resources(resources.cpu, resources.memory),
        startup_probe=tcp_probe(ADMIN_PORT, period=5, failures=60),  # admin_config first writes the cell config
        readiness_probe=tcp_probe(ADMIN_PORT, period=10, failures=3),
        liveness_probe=tcp_probe(ADMIN_PORT, period=20, failures=3),
    )
    return _deployment(resource, ADMIN_NAME, plan, 1, "Recreate", container, opts)


def http_server(
    resource: str, plan: SaxmlPlan, sax_root: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> k8s.apps.v1.Deployment:
    resources = plan.spec.resources.http_server
    container = k8s.core.v1.ContainerArgs(
        name=HTTP_NAME,
        image=plan.spec.images.http_server,
        env=[k8s.core.v1.EnvVarArgs(name="SAX_ROOT", value=sax_root)],
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=HTTP_PORT)],
        resources=_resources(resources.cpu, resources.memory),
        # Both HTTP server generations answer GET / with {"message": "HTTP Server for SAX Client"} ([SAX-HTTP]).
        readiness_probe=readiness_probe("/", HTTP_PORT),
        liveness_probe=liveness_probe("/", HTTP_PORT),
    )
    return _deployment(resource, HTTP_NAME, plan, plan.spec.http_replicas, "RollingUpdate", container, opts)


def http_service(resource: str, plan: SaxmlPlan, opts: pulumi.ResourceOptions) -> k8s.core.v1.Service:
    """Internal load balancer by default; public only with source ranges; or cluster-only."""
    spec = plan.spec
    return k8s.core.v1.Service(
        resource,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=SERVICE_NAME,
            namespace=spec.namespace,
            labels=MANAGED,
            annotations=INTERNAL_LB_ANNOTATION if spec.exposure == "internal" else None,
        ),
        spec=k8s.core.v1.ServiceSpecArgs(
            type=service_type(spec.exposure),
            external_traffic_policy=external_traffic_policy(spec.exposure),
            selector=pod_labels(HTTP_NAME),
            ports=[k8s.core.v1.ServicePortArgs(name="http", port=HTTP_PORT, target_port=HTTP_PORT, protocol="TCP")],
            load_balancer_source_ranges=spec.source_ranges or None,
        ),
        opts=opts,
    )


def in_cluster_url(plan: SaxmlPlan) -> str:
    return f"http://{SERVICE_NAME}.{plan.spec.namespace}.svc.cluster.local:{HTTP_PORT}"
