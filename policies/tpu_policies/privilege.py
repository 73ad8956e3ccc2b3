"""Rule 11: no privileged or host-network pods without a stated reason (mandatory by default).

Upstream TPU manifests run privileged (needed only before GKE 1.28) and on the host network
(Saxml's model servers), which hands the container the node. Where a workload truly needs it,
an annotation on the workload records why, and the rule accepts it. Mandatory by default: a pod
that owns its node is a decision someone states, not a default copied from a manifest; a team that
wants it as a warning sets `"no-privileged-pods": "advisory"` in the pack config.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity

from tpu_policies.values import as_str, dig, is_true, plain
from tpu_policies.workloads import pod_templates, workload_annotations
from tpu_stacks.catalog.tpu import PRIVILEGED_NOT_NEEDED_SINCE
from tpu_stacks.objects.annotations import HOST_NETWORK_REASON, PRIVILEGED_REASON


def _reason(key: str, *sources: dict) -> bool:
    return any((as_str(source.get(key)) or "").strip() for source in sources)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.startswith("kubernetes:"):
        return
    props = plain(args.props)
    notes = workload_annotations(props)
    for template in pod_templates(args.resource_type, props):
        privileged = [
            c.get("name") or "?" for c in template.containers() if is_true(dig(c, "securityContext", "privileged"))
        ]
        if privileged and not _reason(PRIVILEGED_REASON, notes, template.annotations):
            report_violation(
                f"{template.where}: container(s) {', '.join(privileged)} run privileged, which gives them the "
                f"whole node; TPU access needs no privilege since GKE {PRIVILEGED_NOT_NEEDED_SINCE}: remove "
                f"securityContext.privileged, or annotate the workload {PRIVILEGED_REASON}: <why>",
                None,
            )
        if is_true(template.spec.get("hostNetwork")) and not _reason(HOST_NETWORK_REASON, notes, template.annotations):
            report_violation(
                f"{template.where}: hostNetwork is true, so the pod binds ports on the node and sees its "
                "traffic; remove it (use a headless Service for worker discovery), or annotate the workload "
                f"{HOST_NETWORK_REASON}: <why>",
                None,
            )


POLICY = ResourceValidationPolicy(
    name="no-privileged-pods",
    description="Pods do not run privileged or on the host network unless the workload carries a "
    "tpu-stacks.dev/privileged-reason or tpu-stacks.dev/host-network-reason annotation.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
)
