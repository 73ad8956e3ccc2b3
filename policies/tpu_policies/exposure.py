"""Rule 9 (advisory): no model server on a public, unauthenticated load balancer.

The vLLM and Saxml tutorials expose the OpenAI API (and Saxml's mutating /publish and /update)
on an external LoadBalancer with no authentication: anyone who finds the IP can use, or for
Saxml replace, the model. An internal load balancer or source ranges keep it private.
"""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import UNKNOWN, as_list, dig, plain
from tpu_policies.workloads import is_kubernetes, kind_of, name_of, workload_annotations
from tpu_stacks.serving.exposure import covers_whole_internet

INTERNAL_ANNOTATIONS = ("networking.gke.io/load-balancer-type", "cloud.google.com/load-balancer-type")


ALLOWED_SERVICES = Setting(
    "allowedServices",
    [],
    "Services meant to be public (name or namespace/name), e.g. behind their own auth.",
)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    props = plain(args.props)
    if not is_kubernetes(args.resource_type) or kind_of(args.resource_type, props) != "Service":
        return
    if dig(props, "spec", "type") != "LoadBalancer":
        return
    notes = workload_annotations(props)
    if any(notes.get(key) is UNKNOWN or str(notes.get(key, "")).lower() == "internal" for key in INTERNAL_ANNOTATIONS):
        return
    ranges = dig(props, "spec", "loadBalancerSourceRanges")
    if ranges is UNKNOWN:
        return
    whole = covers_whole_internet([str(r) for r in as_list(ranges)])  # the program's own rule
    if as_list(ranges) and not whole:
        return
    name = name_of(props, args.name)
    allowed = set(ALLOWED_SERVICES.read(args))
    if name in allowed or name.rsplit("/", 1)[-1] in allowed:
        return
    opened = f"source ranges that together cover {whole}" if whole else "no source ranges"
    report_violation(
        f"Service {name} is a public LoadBalancer with {opened}: open to the whole internet with no authentication; "
        'annotate it networking.gke.io/load-balancer-type: "Internal", or set '
        "spec.loadBalancerSourceRanges, or put an authenticating proxy (IAP, API gateway) in front "
        "(allow it deliberately with the allowedServices setting)",
        None,
    )


POLICY = ResourceValidationPolicy(
    name="no-public-endpoint",
    description="LoadBalancer Services are internal or restricted to source ranges, not open to the internet "
    "without authentication.",
    validate=_validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.HIGH,
    config_schema=config_schema(ALLOWED_SERVICES),
)
