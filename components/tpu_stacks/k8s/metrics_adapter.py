"""The Custom Metrics Stackdriver Adapter, declared object by object at a pinned version.

The tutorial applies the adapter's manifest from k8s-stackdriver `master` (unpinned, with
`imagePullPolicy: Always`). These are the same objects as that manifest at commit 0857364d
([ADAPTER]), written as typed resources: pinned image, bounded resources,
reviewable and validated offline. The adapter serves custom and external metrics to the HPA and
reads Cloud Monitoring as its Kubernetes ServiceAccount through Workload Identity
(`roles/monitoring.viewer`, a role that exists only at project level).
"""

from typing import NotRequired, Optional, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.image_users import METRICS_ADAPTER
from tpu_stacks.gcp.identity import WorkloadIdentity, WorkloadIdentityArgs, dependencies_of
from tpu_stacks.k8s.connectivity import Group
from tpu_stacks.k8s.namespace import pod_security_labels
from tpu_stacks.k8s.network_policy import declare_network_policies
from tpu_stacks.k8s.platform_flows import api_endpoint, api_server_calls, dns, metadata_server
from tpu_stacks.k8s.probes import tcp_probe
from tpu_stacks.k8s.security import API_TOKEN_REASON, harden

TYPE = "tpu-stacks:index:CustomMetricsAdapter"
NAMESPACE = "custom-metrics"
NAME = "custom-metrics-stackdriver-adapter"
IMAGE = "gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.15.1-gke.0"  # k8s-stackdriver @ 0857364d
SOURCE_COMMIT = "0857364d151373fb985599f4ddee6504166de939"
SECURE_PORT = 6443
"""Where the adapter serves (upstream: 443, which needs root or NET_BIND_SERVICE); the Service keeps 443.
`--secure-port` and `--cert-dir` are the generic API server serving flags of the custom-metrics
apiserver library it is built on (k8s.io/apiserver SecureServingOptions)."""
CERT_DIR = "/tmp/certificates"  # its self-signed certificate, written at start (the root is read-only)
APISERVICES = (
    ("v1beta1.custom.metrics.k8s.io", "custom.metrics.k8s.io", "v1beta1", 100),
    ("v1beta2.custom.metrics.k8s.io", "custom.metrics.k8s.io", "v1beta2", 200),
    ("v1beta1.external.metrics.k8s.io", "external.metrics.k8s.io", "v1beta1", 100),
)


def network(labels: dict[str, str]) -> tuple[Group, ...]:
    """The API server calls the adapter (the aggregated metrics APIs) through konnectivity-agent, or from the
    control plane on clusters without it. The adapter calls the Kubernetes API (the cluster's public or
    private endpoint) and Cloud Monitoring, both on 443, and the metadata server for its token."""
    flows = (*api_server_calls(SECURE_PORT), *dns(), *metadata_server(), *api_endpoint())
    return (Group("custom-metrics-adapter", NAMESPACE, dict(labels), flows),)


class CustomMetricsAdapterArgs(TypedDict):
    project: str
    """Project whose Cloud Monitoring metrics the adapter reads."""
    project_number: NotRequired[str]
    """For the Workload Identity principal (looked up when omitted)."""
    universe: NotRequired[str]


def _meta(name: str, namespace: Optional[str] = NAMESPACE) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name,
        namespace=namespace,
        labels={"app.kubernetes.io/name": NAME, "app.kubernetes.io/managed-by": "tpu-stacks"},
    )


def _subject() -> k8s.rbac.v1.SubjectArgs:
    return k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=NAME, namespace=NAMESPACE)


def _cluster_role_binding(resource: str, name: str, role: str, child: pulumi.ResourceOptions, subjects=None) -> None:
    k8s.rbac.v1.ClusterRoleBinding(
        resource,
        metadata=_meta(name, None),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role),
        subjects=subjects or [_subject()],
        opts=child,
    )


class CustomMetricsAdapter(pulumi.ComponentResource):
    """Serves Managed Prometheus metrics to HorizontalPodAutoscalers (pinned, least privilege)."""

    def __init__(
        self, name: str, args: CustomMetricsAdapterArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        super().__init__(TYPE, name, {}, opts)
        child = pulumi.ResourceOptions(parent=self)
        metadata = _meta(NAMESPACE, None)
        metadata.labels = {**(metadata.labels or {}), **pod_security_labels("restricted")}
        namespace = k8s.core.v1.Namespace(f"{name}-ns", metadata=metadata, opts=child)
        after_namespace = pulumi.ResourceOptions(parent=self, depends_on=[namespace, *dependencies_of(opts)])
        identity_args: WorkloadIdentityArgs = {
            "project": args["project"],
            "ksa_name": NAME,
            "namespace": NAMESPACE,
            "universe": args.get("universe", "google"),
            "project_roles": ["roles/monitoring.viewer"],
        }
        if args.get("project_number"):
            identity_args["project_number"] = args["project_number"]
        WorkloadIdentity(f"{name}-identity", identity_args, opts=after_namespace)
        _cluster_role_binding(
            f"{name}-auth-delegator", "custom-metrics:system:auth-delegator", "system:auth-delegator", child
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-auth-reader",
            metadata=_meta("custom-metrics-auth-reader", "kube-system"),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="Role", name="extension-apiserver-authentication-reader"
            ),
            subjects=[_subject()],
            opts=child,
        )
        k8s.rbac.v1.ClusterRole(
            f"{name}-resource-reader",
            metadata=_meta("custom-metrics-resource-reader", None),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""], resources=["pods", "nodes", "nodes/stats"], verbs=["get", "list", "watch"]
                )
            ],
            opts=child,
        )
        _cluster_role_binding(
            f"{name}-resource-reader-binding", "custom-metrics-resource-reader", "custom-metrics-resource-reader", child
        )
        labels = {"run": NAME, "k8s-app": NAME}
        k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=_meta(NAME),
            spec=k8s.apps.v1.DeploymentSpecArgs(
                replicas=1,
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(
                        labels=labels,
                        annotations={API_TOKEN_REASON: "serves the aggregated metrics APIs and reads pods and nodes"},
                    ),
                    # Hardened as every pod, as the distroless image allows; it keeps its API token:
                    # it serves an aggregated API and reads pods and nodes.
                    spec=harden(
                        k8s.core.v1.PodSpecArgs(
                            service_account_name=NAME,
                            containers=[
                                k8s.core.v1.ContainerArgs(
                                    name="pod-custom-metrics-stackdriver-adapter",
                                    image=IMAGE,
                                    # An HTTPS server with no health path of its own in upstream's manifest.
                                    readiness_probe=tcp_probe(SECURE_PORT, period=10, failures=3),
                                    liveness_probe=tcp_probe(SECURE_PORT, period=20, failures=3),
                                    command=[
                                        "/adapter",
                                        "--use-new-resource-model=true",
                                        "--fallback-for-container-metrics=true",
                                        f"--secure-port={SECURE_PORT}",
                                        f"--cert-dir={CERT_DIR}",
                                    ],
                                    ports=[k8s.core.v1.ContainerPortArgs(name="https", container_port=SECURE_PORT)],
                                    resources=k8s.core.v1.ResourceRequirementsArgs(
                                        requests={"cpu": "250m", "memory": "400Mi"},
                                        limits={"cpu": "250m", "memory": "400Mi"},
                                    ),
                                )
                            ],
                        ),
                        METRICS_ADAPTER,
                        api_token=True,
                    ),
                ),
            ),
            opts=after_namespace,
        )
        declare_network_policies(name, NAMESPACE, network(labels), after_namespace)
        service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=_meta(NAME),
            spec=k8s.core.v1.ServiceSpecArgs(
                ports=[k8s.core.v1.ServicePortArgs(port=443, protocol="TCP", target_port=SECURE_PORT)], selector=labels
            ),
            opts=after_namespace,
        )
        for api_name, group, version, priority in APISERVICES:
            k8s.apiregistration.v1.APIService(
                f"{name}-{version}-{group.split('.')[0]}",
                metadata=_meta(api_name, None),
                spec=k8s.apiregistration.v1.APIServiceSpecArgs(
                    group=group,
                    version=version,
                    group_priority_minimum=100,
                    version_priority=priority,
                    # As upstream: the adapter serves a self-signed certificate.
                    insecure_skip_tls_verify=True,
                    service=k8s.apiregistration.v1.ServiceReferenceArgs(name=NAME, namespace=NAMESPACE),
                ),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[service]),
            )
        k8s.rbac.v1.ClusterRole(
            f"{name}-external-metrics-reader",
            metadata=_meta("external-metrics-reader", None),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=["external.metrics.k8s.io"], resources=["*"], verbs=["list", "get", "watch"]
                )
            ],
            opts=child,
        )
        _cluster_role_binding(
            f"{name}-external-metrics-reader-binding",
            "external-metrics-reader",
            "external-metrics-reader",
            child,
            subjects=[
                k8s.rbac.v1.SubjectArgs(
                    kind="ServiceAccount", name="horizontal-pod-autoscaler", namespace="kube-system"
                )
            ],
        )
        self.register_outputs({})
