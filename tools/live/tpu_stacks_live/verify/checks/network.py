"""Load balancer clients: a LoadBalancer Service's `loadBalancerSourceRanges` become the source ranges of the VPC
firewall rule GKE writes for it (https://cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters,
ledger gke.lb.source-ranges), and `externalTrafficPolicy: Local` keeps the client's address so the pods' NetworkPolicy
matches the same ranges. GKE's rule names the Service in its description (`"kubernetes.io/service-name":
"NAMESPACE/NAME"`), which is how it is found among the project's firewall rules (firewalls.list, read-only).
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.gcp.universe import UNIVERSES
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import read_object, ref
from tpu_stacks_live.verify.plan import StackPlan, name_of, namespace_of
from tpu_stacks_live.verify.registry import Check, Context, check

HEALTH_CHECK_RANGES = {cidr for universe in UNIVERSES for cidr in universe.health_check_ranges}
"""Google's health-check ranges (gcp/universe.py): a rule admitting only these is the health check's, not the
clients'."""


def _load_balancers(plan: StackPlan) -> list[dict[str, Any]]:
    return [
        s
        for s in plan.of_kind("Service", "")
        if (s.get("spec") or {}).get("type") == "LoadBalancer" and s["spec"].get("loadBalancerSourceRanges")
    ]


@check(
    "lb-source-ranges",
    "each load balancer admits only its sourceRanges and keeps the client's address",
    lambda plan: bool(_load_balancers(plan)),
)
def lb_source_ranges(ctx: Context, this: Check):
    rules = ctx.google.compute("firewalls.list")
    for service in _load_balancers(ctx.plan):
        wanted = sorted(service["spec"]["loadBalancerSourceRanges"])
        live = read_object(ctx.cluster, service)
        if live is None:
            return this.answer(Verdict.UNKNOWN, f"{ref(service)} not found", "pulumi up, then verify again")
        spec = live.get("spec") or {}
        if spec.get("externalTrafficPolicy") != "Local":
            return this.answer(
                Verdict.FAIL,
                f"{ref(service)} has externalTrafficPolicy {spec.get('externalTrafficPolicy')}",
                "pulumi up restores Local (exposure.py); with Cluster the pods see node addresses",
            )
        key = f"{namespace_of(service)}/{name_of(service)}"
        mine = [
            r
            for r in rules
            if key in str(r.get("description", ""))
            and r.get("direction", "INGRESS") == "INGRESS"
            and not set(r.get("sourceRanges") or []) <= HEALTH_CHECK_RANGES  # the load balancer's own probe rule
        ]
        if not mine:
            return this.answer(Verdict.UNKNOWN, f"no firewall rule names {key} yet", "wait for GKE to sync, retry")
        wide = [r["name"] for r in mine if sorted(r.get("sourceRanges") or []) != wanted]
        if wide:
            return this.answer(
                Verdict.FAIL,
                f"firewall rule(s) {', '.join(wide)} of {key} do not admit exactly {wanted}",
                "keep sourceRanges; the pods' NetworkPolicy still drops other clients; report the GKE version",
            )
    return this.answer(Verdict.PASS, f"{len(_load_balancers(ctx.plan))} load balancer(s) admit only their ranges")
