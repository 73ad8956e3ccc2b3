"""The cluster itself: the control plane's version against the floor the plan asks for (`minMasterVersion`, from
`cluster.minVersion` or a feature's floor such as INFERENCE_GATEWAY_CRDS_FLOOR), and Managed Prometheus's
collectors where the NetworkPolicies' scrape allow expects them.

The API server answers its version at GET /version (`gitVersion`, `v1.35.0-gke.2398000` on GKE). The scrape allow
selects the collector pods by label in gmp-system and relies on them running on the pod network (no hostNetwork:
https://github.com/GoogleCloudPlatform/prometheus-engine manifests/operator.yaml, k8s/platform_flows.py
MANAGED_PROMETHEUS); a collector on the host network would scrape from node addresses no selector matches.
"""

from __future__ import annotations

from tpu_stacks.catalog.gke_versions import gke_version
from tpu_stacks.errors import UserError
from tpu_stacks.k8s.platform_flows import MANAGED_PROMETHEUS
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import pods, selector
from tpu_stacks_live.verify.plan import CLUSTER, StackPlan
from tpu_stacks_live.verify.registry import Check, Context, check


def _floor(plan: StackPlan) -> str | None:
    for cluster in plan.of_type(CLUSTER):
        floor = cluster.inputs.get("minMasterVersion")
        if isinstance(floor, str) and floor:
            return floor
    return None


@check(
    "cluster-version",
    "the control plane runs at or above the version the plan asks for (minMasterVersion)",
    lambda plan: _floor(plan) is not None,
)
def cluster_version(ctx: Context, this: Check):
    floor = str(_floor(ctx.plan))
    answer = ctx.cluster.get("/version") or {}
    running = str(answer.get("gitVersion", "")).lstrip("v")
    try:
        below = gke_version(running) < gke_version(floor)
    except UserError:
        return this.answer(Verdict.UNKNOWN, f"the API server's version {running!r} is not a GKE version", "")
    if below:
        return this.answer(
            Verdict.FAIL,
            f"the control plane runs {running}, below {floor}",
            f"upgrade it: gcloud container clusters upgrade CLUSTER --master --cluster-version {floor}",
        )
    return this.answer(Verdict.PASS, f"{running} >= {floor}")


@check(
    "managed-prometheus-collectors",
    "Managed Prometheus's collectors run where the scrape allow selects them (labelled, on the pod network)",
    lambda plan: bool(plan.of_kind("PodMonitoring")),
)
def collectors(ctx: Context, this: Check):
    found = pods(ctx.cluster, MANAGED_PROMETHEUS.namespace, selector(MANAGED_PROMETHEUS.labels))
    where = f"{MANAGED_PROMETHEUS.namespace} {selector(MANAGED_PROMETHEUS.labels)}"
    if not found:
        return this.answer(
            Verdict.FAIL,
            f"no collector pod matches {where}",
            "read the collectors' labels (kubectl -n gmp-system get pods --show-labels) and correct MANAGED_PROMETHEUS",
        )
    host = [p["metadata"]["name"] for p in found if (p.get("spec") or {}).get("hostNetwork")]
    if host:
        return this.answer(
            Verdict.FAIL,
            f"collectors on the host network: {', '.join(host[:3])}",
            "the scrape allow must become port-only (scrape() in k8s/platform_flows.py)",
        )
    return this.answer(Verdict.PASS, f"{len(found)} collector pods on the pod network")
