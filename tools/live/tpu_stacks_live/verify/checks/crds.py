"""The API versions and controllers the cluster serves, against the objects the plan declares.

A kind the cluster does not serve at the plan's version is found by discovery (`kube.served_resource`); a served
kind nobody reconciles shows as an object without status. The fix names what installs each group: KubeRay by
GKE's Ray add-on (https://cloud.google.com/kubernetes-engine/docs/add-on/ray-on-gke/concepts/overview), the Gateway
API and InferencePool by GKE's Gateway controller
(https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway), JobSet by its release
manifests (https://jobset.sigs.k8s.io/docs/installation/).
"""

from __future__ import annotations

from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import read_object, ref, served_resource
from tpu_stacks_live.verify.plan import StackPlan, api_group, kinds
from tpu_stacks_live.verify.registry import Check, Context, check

INSTALLED_BY = {
    "ray.io": "enable GKE's Ray Operator add-on (KubeRay) on the cluster",
    "jobset.x-k8s.io": "install JobSet (https://jobset.sigs.k8s.io/docs/installation/)",
    "gateway.networking.k8s.io": "gcloud container clusters update CLUSTER --gateway-api=standard",
    "inference.networking.k8s.io": "use a GKE version with GKE Inference Gateway and the Gateway API enabled",
    "networking.gke.io": "enable the Gateway API on the cluster (its policy CRDs come with it)",
    "monitoring.googleapis.com": "enable Managed Service for Prometheus on the cluster",
    "cloud.google.com": "use a GKE version that serves ComputeClass (1.30.3 or later)",
}
RECONCILED = ("ray.io", "jobset.x-k8s.io", "gateway.networking.k8s.io", "inference.networking.k8s.io")
"""Groups whose objects a controller writes status on: an object without status has no controller acting on it."""


def _fix(groups: list[str]) -> str:
    return "; ".join(INSTALLED_BY.get(group, f"install the API group {group or 'core'}") for group in groups)


@check(
    "api-versions-served",
    "the cluster serves every apiVersion and kind the plan declares",
    lambda plan: bool(plan.objects),
)
def api_versions_served(ctx: Context, this: Check):
    missing = [
        (version, kind)
        for version, kind in kinds(ctx.plan.objects)
        if served_resource(ctx.cluster, version, kind) is None
    ]
    if not missing:
        return this.answer(Verdict.PASS, f"all {len(kinds(ctx.plan.objects))} kinds served")
    groups = sorted({version.split("/")[0] if "/" in version else "" for version, _ in missing})
    shown = ", ".join(f"{kind} {version}" for version, kind in missing)
    return this.answer(Verdict.FAIL, f"not served: {shown}", _fix(groups))


def _reconciled(plan: StackPlan) -> list[dict]:
    return [o for o in plan.objects if api_group(o) in RECONCILED and o.get("kind") != "HTTPRoute"]


@check(
    "controllers-reconcile",
    "a controller writes status on each KubeRay, JobSet, Gateway and InferencePool object",
    lambda plan: bool(_reconciled(plan)),
)
def controllers_reconcile(ctx: Context, this: Check):
    absent, silent = [], []
    for obj in _reconciled(ctx.plan):
        live = read_object(ctx.cluster, obj)
        if live is None:
            absent.append(ref(obj))
        elif not live.get("status"):
            silent.append((ref(obj), api_group(obj)))
    if silent:
        shown = ", ".join(name for name, _ in silent)
        return this.answer(Verdict.FAIL, f"no status written on {shown}", _fix(sorted({g for _, g in silent})))
    if absent:
        return this.answer(Verdict.UNKNOWN, f"not deployed: {', '.join(absent)}", "pulumi up, then verify again")
    return this.answer(Verdict.PASS, f"{len(_reconciled(ctx.plan))} objects have status")
