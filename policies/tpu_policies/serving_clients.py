"""Rule 9b (advisory): a load balancer in front of a model server names its clients.

A LoadBalancer Service answers more than the cluster: a public one the internet, an internal one (GKE's internal
passthrough Network Load Balancer) every address of the VPC and of the networks connected to it (ledger:
gke.internal-lb.clients), unless `spec.loadBalancerSourceRanges` narrows the firewall rule GKE writes for it
(gke.lb.source-ranges). No model server the pack knows closes that by itself: Ray Serve LLM's OpenAI app and Sax HTTP
authenticate nothing (Sax HTTP also publishes and unpublishes models), and vLLM's API key guards /v1, /v2, /inference
and /cohere only, while /invocations serves the same completions without it (ledger: vllm.api-key.guarded-prefixes,
vllm.api-key.invocations-unguarded). So a LoadBalancer Service, internal included, whose selector matches a
model-serving pod of its namespace and that names no source ranges (or ranges that together cover every address) is
reported, ours and hand-written alike; an API key on the pod is named in the message, never taken for a lock.
A model-serving pod: a Deployment, StatefulSet, LeaderWorkerSet or RayService pod (serving_pods.py) whose engine
serves models (the serving API catalogue: vLLM, JetStream, Saxml, Ray Serve; not MaxText or the endpoint picker),
or that runs an engine's HTTP front end (Sax HTTP). ClusterIP Services (the Inference Gateway's pool and picker
Services among them) are not load balancers and pass. Values unknown at preview are skipped, never guessed.

Advisory, like no-public-endpoint, for three reasons: the pack cannot see the controls that legitimately close the
VPC path from outside the stack (a hierarchical or network firewall policy, a VPC that holds only this cluster);
the graver case, a public endpoint, is itself advisory, and the pack would contradict itself by refusing the
lesser one; and this project's own stacks cannot produce it (tpu_stacks.serving.exposure.require_clients refuses such a
config in one line before any resource), so the advisory speaks only to programs the project does not check.
"""

from __future__ import annotations

import shlex
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from tpu_policies.serving_pods import ServingPod, namespace_of, same_namespace, serving_pods
from tpu_policies.settings import Setting, config_schema
from tpu_policies.stack import Item, read_stack
from tpu_policies.values import UNKNOWN, as_dict, as_list, as_str, dig
from tpu_policies.workloads import is_kubernetes, kind_of, name_of
from tpu_stacks.catalog.inference_gateway import front_end, serving_api
from tpu_stacks.catalog.upstream import fact
from tpu_stacks.serving.exposure import covers_whole_internet

API_KEY_FLAG = "--api-key"  # ledger: vllm.flag.api-key
API_KEY_ENV = str(fact("vllm.env.api-key").value)

ALLOWED_SERVICES = Setting(
    "allowedServices",
    [],
    "LoadBalancer Services meant to answer every client their load balancer reaches (name or namespace/name), e.g. "
    "behind a firewall policy this stack does not declare.",
)


def serves(pod: ServingPod) -> str | None:
    """What the pod serves when it is a model server ("vllm", "Ray Serve", "saxml front end"), else None."""
    if pod.kind == "RayService":
        return "Ray Serve"
    engine = pod.engine
    if engine is not None and serving_api(engine).serves_models:
        return engine.engine
    for container in pod.template.containers(init=False):
        image = as_str(container.get("image"))
        api = front_end(image) if image else None
        if api is not None:
            return f"{api.engine} front end"
    return None


def has_api_key(pod: ServingPod) -> bool:
    """vLLM's API key on one of the pod's containers: the `--api-key` flag or the VLLM_API_KEY variable."""
    for container in pod.template.containers(init=False):
        if any(dig(env, "name") == API_KEY_ENV for env in as_list(container.get("env"))):
            return True
        for part in [*as_list(container.get("command")), *as_list(container.get("args"))]:
            if not isinstance(part, str):
                continue
            try:
                tokens = shlex.split(part)
            except ValueError:
                tokens = part.split()
            if any(token == API_KEY_FLAG or token.startswith(f"{API_KEY_FLAG}=") for token in tokens):
                return True
    return False


def _open(service: dict[str, Any]) -> str | None:
    """Why the load balancer answers everyone its type reaches, or None when it names its clients or is unknown."""
    ranges = dig(service, "spec", "loadBalancerSourceRanges")
    if ranges is UNKNOWN or UNKNOWN in as_list(ranges):
        return None
    whole = covers_whole_internet([str(r) for r in as_list(ranges)])
    if as_list(ranges) and not whole:
        return None
    return f"source ranges that together cover {whole}" if whole else "no loadBalancerSourceRanges"


def _reach(service: dict[str, Any]) -> str:
    notes = as_dict(dig(service, "metadata", "annotations"))
    internal = (
        any(
            str(notes.get(key, "")).lower() == "internal"
            for key in ("networking.gke.io/load-balancer-type", "cloud.google.com/load-balancer-type")
        )
        or dig(service, "spec", "loadBalancerClass") == "networking.gke.io/l4-regional-internal"
    )
    return "every address of the VPC and of the networks connected to it" if internal else "the whole internet"


def problem(service: Item, pods: list[ServingPod]) -> str | None:
    """The one-line finding for a LoadBalancer Service in front of a model server that names no clients."""
    spec = as_dict(service.props.get("spec"))
    if spec.get("type") != "LoadBalancer":
        return None
    opened = _open(service.props)
    selector = spec.get("selector")
    if opened is None or not isinstance(selector, dict) or not selector or UNKNOWN in selector.values():
        return None
    namespace = namespace_of(service.props)
    matched = [
        (pod, what)
        for pod in pods
        if same_namespace(pod.namespace, namespace)
        and "*" not in pod.any_value
        and pod.matches(selector)
        and (what := serves(pod)) is not None
    ]
    if not matched:
        return None
    pod, what = matched[0]
    keyed = any(has_api_key(p) for p, _ in matched)
    key = (
        f"; its {API_KEY_FLAG}/{API_KEY_ENV} guards /v1, /v2, /inference and /cohere only, and /invocations answers "
        "without it"
        if keyed
        else ""
    )
    return (
        f"Service {name_of(service.props, service.name)} is a LoadBalancer in front of {pod.item.label} ({what}) with "
        f"{opened}: it answers {_reach(service.props)}, and the server authenticates nothing that closes that{key}; "
        "set spec.loadBalancerSourceRanges to your clients' ranges, or make it a ClusterIP Service (allow it "
        "deliberately with the allowedServices setting)"
    )


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = read_stack(args)
    pods = serving_pods(stack)
    allowed = set(ALLOWED_SERVICES.read(args))
    for item in stack.items:
        if not is_kubernetes(item.type) or kind_of(item.type, item.props) != "Service":
            continue
        name = name_of(item.props, item.name)
        if name in allowed or name.rsplit("/", 1)[-1] in allowed:
            continue
        found = problem(item, pods)
        if found:
            report_violation(found, item.urn)


POLICY = StackValidationPolicy(
    name="serving-clients-named",
    description="A LoadBalancer Service (internal included) in front of a model server names its clients in "
    "loadBalancerSourceRanges: an internal load balancer answers the whole VPC, and no model server here "
    "authenticates every path (vLLM's API key leaves /invocations open).",
    validate=_validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.HIGH,
    config_schema=config_schema(ALLOWED_SERVICES),
)
