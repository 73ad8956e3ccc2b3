"""The Google Cloud APIs a stack calls, enabled by the program itself and never disabled on destroy.

A fresh project has the Kubernetes Engine, Artifact Registry, Cloud Build... APIs off: the first
`pulumi up` would fail at the first resource of each. Every resource therefore depends on the API it
needs. `disable_on_destroy=False`: disabling an API on `pulumi destroy` would break whatever else in the
project uses it (terraform-provider-google#18058, which made false the provider's default in v6; the
Pulumi example for `gcp.projects.Service` sets it explicitly). `disable_dependent_services` stays unset
for the same reason.
"""

from __future__ import annotations

from collections.abc import Iterable

import pulumi
import pulumi_gcp as gcp

# What each part of a stack calls (service names without the universe's domain).
CLUSTER_APIS = ("container", "compute", "iam", "iamcredentials", "cloudresourcemanager")
"""GKE and its node pools (Compute Engine), service accounts and Workload Identity token exchange
(IAM, IAM Credentials), and project IAM bindings (Resource Manager)."""
STORAGE_APIS = ("storage",)
REGISTRY_APIS = ("artifactregistry",)
MONITORING_APIS = ("monitoring",)
"""Managed Service for Prometheus, the custom-metrics adapter the HPA reads, dashboards and alert policies."""
LOGGING_APIS = ("logging",)
"""Log-based metrics (`gcp.logging.Metric`): Ray Train's step time from MaxText's log line."""
BUILD_APIS = ("cloudbuild",)
GATEWAY_APIS = ("networkservices",)
"""GKE Inference Gateway's Service Extensions (the load balancer's call to the endpoint picker) are Network Services
API objects; Compute Engine (load balancers, the proxy-only subnet) is already a cluster API
(https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway, "Before you begin")."""


def service_name(api: str, domain: str = "googleapis.com") -> str:
    """`container.googleapis.com`; another universe's domain where it names its services so (S3NS
    service names are not verified here: docs/saxml.md, sovereign edition)."""
    return f"{api}.{domain}"


def enable_apis(
    name: str, project: str, apis: Iterable[str], parent: pulumi.Resource, domain: str = "googleapis.com"
) -> list[gcp.projects.Service]:
    """One `gcp.projects.Service` per API (`{name}-api-<api>`), kept enabled on destroy."""
    return list(enable_apis_by_name(name, project, apis, parent, domain).values())


def enable_apis_by_name(
    name: str, project: str, apis: Iterable[str], parent: pulumi.Resource, domain: str = "googleapis.com"
) -> dict[str, gcp.projects.Service]:
    """`enable_apis`, keyed by API: what later resources of the stack wait on (and do not declare twice)."""
    return {
        api: gcp.projects.Service(
            f"{name}-api-{api}",
            gcp.projects.ServiceArgs(project=project, service=service_name(api, domain), disable_on_destroy=False),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for api in dict.fromkeys(apis)
    }
