"""Ray Train's connectivity contract.

Ray's head and workers talk on many ports (GCS, raylets, object managers, worker processes, JAX's
coordinator, the TPU slices' DCN traffic): every TCP port between the pods of this Ray cluster. From
other pods only the dashboard/job API on the head, and only from its callers: the RayJob's submitter and
the KubeRay operator (through konnectivity-agent when GKE's Ray add-on hosts it; from the operator's pods in
the namespace `cluster.kuberay` names when the user installed it: ray.flows). That API runs code as
this namespace's service account without authentication (Ray 2.49.1 has no token authentication, 2.52.0 is
the first with it: docs/security.md, "Ray"), so no other pod may call it
(docs.ray.io/en/latest/cluster/running-applications/job-submission/index.html; `kubectl port-forward`
needs no allow). Managed Prometheus scrapes Ray's metrics.
Egress: DNS, the metadata server, HTTPS outside the cluster; the TPU workers reach the TPU runtime on
their node.
"""

from __future__ import annotations

from tpu_stacks.cluster.spec import operator_namespace
from tpu_stacks.k8s.connectivity import Group, Pods, egress, ingress
from tpu_stacks.k8s.platform_flows import scrape, tpu_device_plugin_metrics, workload_egress
from tpu_stacks.ray.flows import operator_to_head, within_cluster
from tpu_stacks.ray.ports import TRAIN_HEAD_PORTS
from tpu_stacks.raytrain.plan import RayTrainPlan
from tpu_stacks.raytrain.pods import RAY_METRICS_PORT, pod_labels, submitter_labels


def network(plan: RayTrainPlan) -> tuple[Group, ...]:
    namespace = plan.spec.namespace
    ray = Pods(namespace, pod_labels(plan))
    cluster = within_cluster(ray)
    dashboard = TRAIN_HEAD_PORTS["dashboard"]
    head_api = (
        *ingress(Pods(namespace, submitter_labels(plan)), [dashboard], "the RayJob's submitter: `ray job submit`"),
        *operator_to_head(dashboard, "job status", operator_namespace(plan.cluster.spec)),
    )
    metrics = scrape([RAY_METRICS_PORT])
    head = (*cluster, *head_api, *metrics, *workload_egress(tpu=False))
    submit = egress(Pods(namespace, pod_labels(plan, "head")), [dashboard], "`ray job submit` to the head")
    # The TPU webhook points each TPU host's dashboard agent at the node's TPU device plugin (ledger:
    # ray-train.tpu.device-plugin-metrics, kuberay-tpu-webhook.device-plugin-addr).
    worker = (*cluster, *metrics, *workload_egress(tpu=True), *tpu_device_plugin_metrics())
    return (
        Group("ray-head", namespace, pod_labels(plan, "head"), head),
        Group("ray-worker", namespace, pod_labels(plan, "worker"), worker),
        Group("ray-job-submitter", namespace, submitter_labels(plan), (*workload_egress(tpu=False), *submit)),
    )
