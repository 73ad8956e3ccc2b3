"""The flows every KubeRay cluster needs, shared by the Ray workloads (Ray Train, multi-host vLLM serving).

Ray's head and workers talk on many ports (GCS, raylets, object managers, worker processes, the TPU
slices' traffic): every TCP port between the pods of one Ray cluster, as KubeRay's own network policies
allow them (KubeRay v1.7.0 ray-operator/controllers/ray/networkpolicy_controller.go,
buildBaseIngressRules: "allow all ports from pods in the same RayCluster"). The KubeRay operator calls the
head's dashboard (job status, the RayService's Serve applications: rayservice_controller.go reads the
head Service's dashboard port): a pod labelled as KubeRay's own manifests label it, in any namespace, when
it is installed in the cluster; through konnectivity-agent when GKE hosts it, as the Ray add-on does.
"""

from __future__ import annotations

from tpu_stacks.k8s.connectivity import Flow, Pods, egress, ingress
from tpu_stacks.k8s.platform_flows import KONNECTIVITY_AGENT

KUBERAY_OPERATOR = Pods("*", {"app.kubernetes.io/component": "kuberay-operator"})
"""KubeRay's operator pods as its own manifests label them (github.com/ray-project/kuberay
ray-operator/config: the webhook Service selects `app.kubernetes.io/component: kuberay-operator`)."""


def within_cluster(ray: Pods) -> tuple[Flow, ...]:
    """Every port, both ways, between the pods of one Ray cluster."""
    why = "the pods of this Ray cluster, on every port"
    return (*ingress(ray, [None], why), *egress(ray, [None], why))


def operator_to_head(dashboard: int, what: str) -> tuple[Flow, ...]:
    """The KubeRay operator (installed in the cluster, or hosted by GKE) reading `what` on the head's dashboard."""
    return (
        *ingress(KUBERAY_OPERATOR, [dashboard], f"the KubeRay operator installed in the cluster: {what}"),
        *ingress(KONNECTIVITY_AGENT, [dashboard], "the KubeRay operator GKE hosts, through konnectivity-agent"),
    )
