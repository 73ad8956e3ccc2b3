"""The flows every KubeRay cluster needs, shared by the Ray workloads (Ray Train, multi-host vLLM serving).

Ray's head and workers talk on many ports (GCS, raylets, object managers, worker processes, the TPU
slices' traffic): every TCP port between the pods of one Ray cluster, as KubeRay's own network policies
allow them (KubeRay v1.7.0 ray-operator/controllers/ray/networkpolicy_controller.go,
buildBaseIngressRules: "allow all ports from pods in the same RayCluster"). The KubeRay operator calls the
head's dashboard (job status, the RayService's Serve applications: rayservice_controller.go reads the
head Service's dashboard port) from one place only:
- GKE's Ray add-on: GKE hosts the operator and reaches the head through konnectivity-agent in kube-system
  (ledger: gke.ray-addon.operator-path);
- a KubeRay the user installed (`cluster.kuberay.namespace`): its pods, by the label KubeRay's chart and
  manifests give them, in that one namespace (ledger: kuberay.operator.component-label,
  kuberay.operator.helm-namespace, kuberay.operator.kustomize-namespace). A label alone is no identity: any
  pod in any namespace may carry it, and the job API runs code as the workload's service account, so the
  namespace is always named.
"""

from __future__ import annotations

from tpu_stacks.catalog.upstream import fact
from tpu_stacks.k8s.connectivity import Flow, Pods, egress, ingress
from tpu_stacks.k8s.platform_flows import KONNECTIVITY_AGENT

OPERATOR_LABEL = {"app.kubernetes.io/component": str(fact("kuberay.operator.component-label").value)}
"""The one label both KubeRay installs put on the operator's pods (the chart's name label differs from the
kustomize manifests'); its value comes from the ledger row that read it."""


def kuberay_operator(namespace: str) -> Pods:
    """The operator pods of a KubeRay installed in `namespace`."""
    return Pods(namespace, dict(OPERATOR_LABEL))


def within_cluster(ray: Pods) -> tuple[Flow, ...]:
    """Every port, both ways, between the pods of one Ray cluster."""
    why = "the pods of this Ray cluster, on every port"
    return (*ingress(ray, [None], why), *egress(ray, [None], why))


def operator_to_head(port: int, what: str, operator_namespace: str | None) -> tuple[Flow, ...]:
    """The KubeRay operator reading `what` on the head's `port`: through konnectivity-agent when GKE's Ray add-on
    hosts it (`operator_namespace` None), else from the operator's pods in `operator_namespace` only."""
    if operator_namespace is None:
        return ingress(KONNECTIVITY_AGENT, [port], f"the KubeRay operator GKE's Ray add-on hosts: {what}")
    operator = kuberay_operator(operator_namespace)
    return ingress(operator, [port], f"the KubeRay operator installed in {operator_namespace}: {what}")
