"""GKE Inference Gateway: the load balancer's backends for the pool's servers and for the endpoint picker, the
regional Cloud Armor policy of a public gateway, the region's proxy-only subnet.

The backends are read with Compute Engine's regionBackendServices.list and .getHealth (read-only; each backend
group's `healthStatus[].healthState` is HEALTHY or UNHEALTHY:
https://cloud.google.com/compute/docs/reference/rest/v1/regionBackendServices/getHealth). GKE names a Gateway's
backend service after the namespace and the backend's name, so a backend service is the pool's or the picker's when
its name holds `<namespace>-<name>`. One active REGIONAL_MANAGED_PROXY subnet per network and region:
https://cloud.google.com/load-balancing/docs/proxy-only-subnets (ledger gke.proxy-only-subnet-one-active).
"""

from __future__ import annotations

from typing import Any

from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks.kube import is_true, read_object, ref
from tpu_stacks_live.verify.plan import StackPlan, name_of, namespace_of
from tpu_stacks_live.verify.readers import Unreadable
from tpu_stacks_live.verify.registry import Check, Context, check

REGIONAL_CLASSES = ("gke-l7-rilb", "gke-l7-regional-external-managed")
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"


def _region(ctx: Context) -> str:
    if not ctx.plan.region:
        raise Unreadable("no region in the plan", "set the cluster's location in the stack")
    return ctx.plan.region


def made_for(service: dict[str, Any], namespace: str, name: str) -> bool:
    """Whether GKE's Gateway controller made backend service `service` for `namespace/name`.

    GKE names them `gkegw1-<4 chars>-<namespace>-<name>-<port>-<hash>`, trimming a long namespace and name to a
    prefix each (public examples: `gkegw1-qm6k-secure-app-secure-demo-8080-wqi4f7l2fh2l` for
    secure-app/secure-demo; `gkegw1-jgyx-kalchem-access-advisor-middleware-8000-78qnvyiusmha` for the namespace
    kalchemy). So: some split of the part between the prefix and `-<port>-<hash>` into a prefix of the namespace and
    a prefix of the name. The naming is observed, not documented: a backend found by none is UNKNOWN, not FAIL."""
    if f"{namespace}/{name}" in str(service.get("description", "")):
        return True
    parts = str(service.get("name", "")).split("-", 2)
    if len(parts) < 3 or not parts[0].startswith("gkegw"):
        return False
    described = parts[2].rsplit("-", 2)[0]
    return any(
        described[index] == "-" and namespace.startswith(described[:index]) and name.startswith(described[index + 1 :])
        for index in range(1, len(described) - 1)
    )


def backends_of(ctx: Context, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The regional backend services GKE made for `obj` (an InferencePool or the picker's Service)."""
    services = ctx.google.compute("regionBackendServices.list", region=_region(ctx))
    found = [s for s in services if made_for(s, namespace_of(obj), name_of(obj))]
    if not found:
        raise Unreadable(
            f"no backend service of region {_region(ctx)} is named for {namespace_of(obj)}/{name_of(obj)}",
            f"gcloud compute backend-services list --regions {_region(ctx)} (GKE may still be creating it)",
        )
    return found


def unhealthy(ctx: Context, service: dict[str, Any]) -> list[str]:
    """`instance or endpoint: state` for each backend endpoint of `service` that is not HEALTHY."""
    bad: list[str] = []
    for backend in service.get("backends") or []:
        health = ctx.google.compute(
            "regionBackendServices.getHealth",
            region=_region(ctx),
            backendService=str(service["name"]),
            group=str(backend.get("group", "")),
        )
        statuses = (health or {}).get("healthStatus") or []
        if not statuses:
            bad.append(f"{service['name']}: no endpoint")
        for status in statuses:
            if status.get("healthState") != "HEALTHY":
                where = status.get("ipAddress") or status.get("instance") or "endpoint"
                bad.append(f"{service['name']} {where}: {status.get('healthState', 'UNKNOWN')}")
    return bad


def _gateways(plan: StackPlan) -> list[dict[str, Any]]:
    return plan.of_kind("Gateway", "gateway.networking.k8s.io")


@check(
    "gateway-backend-health",
    "the Gateway programmed, the InferencePool accepted, its servers healthy",
    lambda plan: bool(_gateways(plan)) and bool(plan.of_kind("InferencePool")),
)
def gateway_backend_health(ctx: Context, this: Check):
    gateway = read_object(ctx.cluster, _gateways(ctx.plan)[0])
    pool_obj = ctx.plan.of_kind("InferencePool")[0]
    if gateway is None:
        return this.answer(Verdict.UNKNOWN, "the Gateway is not deployed", "pulumi up, then verify again")
    if not is_true(gateway, "Programmed") or not (gateway.get("status") or {}).get("addresses"):
        return this.answer(
            Verdict.FAIL,
            f"{ref(gateway)} is not Programmed with an address",
            f"kubectl -n {namespace_of(gateway)} describe gateway {name_of(gateway)}: its conditions name the cause",
        )
    pool = read_object(ctx.cluster, pool_obj) or {}
    parents = (pool.get("status") or {}).get("parents") or []
    accepted = [c for parent in parents for c in parent.get("conditions") or [] if c.get("type") == "Accepted"]
    if not any(c.get("status") == "True" for c in accepted):  # InferencePoolStatus: parents[].conditions
        return this.answer(
            Verdict.FAIL, f"{ref(pool_obj)} is not Accepted by the Gateway", "check the HTTPRoute's backendRef names it"
        )
    services = backends_of(ctx, pool_obj)
    bad = [entry for service in services for entry in unhealthy(ctx, service)]
    if bad:
        ports = [str(p.get("number")) for p in (pool_obj.get("spec") or {}).get("targetPorts") or []]
        return this.answer(
            Verdict.FAIL,
            f"servers unhealthy behind the load balancer: {'; '.join(bad[:3])}",
            f"the servers' policy must admit the health-check ranges on {', '.join(ports) or 'their port'} "
            "(vllm/gateway_network.py)",
        )
    return this.answer(Verdict.PASS, f"{len(services)} backend service(s), every endpoint HEALTHY")


def _picker_policy(plan: StackPlan) -> dict[str, Any] | None:
    for policy in plan.of_kind("HealthCheckPolicy"):
        if ((policy.get("spec") or {}).get("targetRef") or {}).get("kind") == "Service":
            return policy
    return None


@check(
    "gateway-picker-health-check",
    "the load balancer checks the picker on the pinned port and finds it healthy",
    lambda plan: _picker_policy(plan) is not None,
)
def gateway_picker_health_check(ctx: Context, this: Check):
    policy = _picker_policy(ctx.plan)
    assert policy is not None
    target = dict(policy["spec"]["targetRef"])
    grpc = policy["spec"]["default"]["config"].get("grpcHealthCheck") or {}
    live = read_object(ctx.cluster, policy)
    if live is None:
        return this.answer(Verdict.UNKNOWN, f"{ref(policy)} is not deployed", "pulumi up, then verify again")
    if not is_true(live, "Attached"):
        return this.answer(
            Verdict.FAIL,
            f"{ref(policy)} is not Attached",
            f"kubectl -n {namespace_of(policy)} describe healthcheckpolicy {name_of(policy)}",
        )
    picker = {"kind": "Service", "metadata": {"name": target["name"], "namespace": namespace_of(policy)}}
    services = backends_of(ctx, picker)
    ports = []
    for service in services:
        for url in service.get("healthChecks") or []:
            found = ctx.google.compute(
                "regionHealthChecks.get", region=_region(ctx), healthCheck=url.rsplit("/", 1)[-1]
            )
            ports.append(((found or {}).get("grpcHealthCheck") or {}).get("port"))
    if grpc.get("port") not in ports:
        return this.answer(
            Verdict.FAIL,
            f"the picker's health check is on port(s) {ports}, not {grpc.get('port')}",
            "the HealthCheckPolicy did not take effect: describe it, or recreate it with pulumi up",
        )
    bad = [entry for service in services for entry in unhealthy(ctx, service)]
    if bad:
        return this.answer(
            Verdict.FAIL,
            f"the picker is unhealthy: {'; '.join(bad[:3])}",
            f"the picker's policy must admit the health-check ranges on {grpc.get('port')} (vllm/gateway_network.py)",
        )
    return this.answer(Verdict.PASS, f"GRPC health check on {grpc.get('port')}, picker HEALTHY")


def _armor(plan: StackPlan) -> dict[str, Any] | None:
    for policy in plan.of_kind("GCPBackendPolicy"):
        if ((policy.get("spec") or {}).get("default") or {}).get("securityPolicy"):
            return policy
    return None


@check(
    "gateway-regional-cloud-armor",
    "the public gateway's backend carries the regional Cloud Armor policy that enforces sourceRanges",
    lambda plan: _armor(plan) is not None,
)
def gateway_regional_cloud_armor(ctx: Context, this: Check):
    policy = _armor(ctx.plan)
    assert policy is not None
    wanted = str(policy["spec"]["default"]["securityPolicy"])
    live = read_object(ctx.cluster, policy)
    if live is None:
        return this.answer(Verdict.UNKNOWN, f"{ref(policy)} is not deployed", "pulumi up, then verify again")
    use_internal = "use exposure: internal until GKE wires regional Cloud Armor on this class"
    if not is_true(live, "Attached"):
        return this.answer(Verdict.FAIL, f"{ref(policy)} is not Attached", use_internal)
    target = {
        "kind": "InferencePool",
        "metadata": {"name": policy["spec"]["targetRef"]["name"], "namespace": namespace_of(policy)},
    }
    services = backends_of(ctx, target)
    without = [s["name"] for s in services if not str(s.get("securityPolicy", "")).endswith(f"/{wanted}")]
    if without:
        return this.answer(Verdict.FAIL, f"backend service(s) without {wanted}: {', '.join(without)}", use_internal)
    return this.answer(Verdict.PASS, f"{len(services)} backend service(s) carry {wanted}")


def _proxy_network(plan: StackPlan) -> str | None:
    if not any(g.get("spec", {}).get("gatewayClassName") in REGIONAL_CLASSES for g in _gateways(plan)):
        return None
    for subnet in plan.of_type(SUBNETWORK):
        if subnet.inputs.get("purpose") == "REGIONAL_MANAGED_PROXY":
            return str(subnet.inputs.get("network") or "default")
    return "default"


@check(
    "gateway-proxy-only-subnet",
    "one ACTIVE proxy-only subnet in the cluster's network and region, for the regional gateway",
    lambda plan: _proxy_network(plan) is not None,
)
def gateway_proxy_only_subnet(ctx: Context, this: Check):
    network = str(_proxy_network(ctx.plan))
    subnets = ctx.google.compute("subnetworks.list", region=_region(ctx), filter='purpose="REGIONAL_MANAGED_PROXY"')
    mine = [s for s in subnets if str(s.get("network", "")).rsplit("/", 1)[-1] == network.rsplit("/", 1)[-1]]
    active = [s for s in mine if s.get("role") == "ACTIVE"]
    if len(active) == 1:
        return this.answer(Verdict.PASS, f"{active[0].get('name')} {active[0].get('ipCidrRange')} is ACTIVE")
    if not active:
        return this.answer(
            Verdict.FAIL,
            f"no ACTIVE proxy-only subnet in network {network}, region {_region(ctx)}",
            "set cluster.gatewayApi.proxyOnlySubnet and pulumi up (the stack creates it)",
        )
    names = ", ".join(str(s.get("name")) for s in active)
    return this.answer(Verdict.FAIL, f"{len(active)} ACTIVE proxy-only subnets: {names}", "keep one; delete the others")
