"""Rules 14-16: hardened pods, least privilege inside them, a guarded control plane.

- `pods-hardened` (mandatory): every container of a pod that is not on the host network runs with
  `allowPrivilegeEscalation: false` and a seccomp profile (`RuntimeDefault` or `Localhost`, on the pod
  or the container). These are what Pod Security `restricted` checks first and what costs nothing:
  a setuid binary cannot raise privileges, and the kernel's syscall surface is the runtime's filtered
  one. Privileged containers are rule 11's (with a stated reason); host-network pods are rule 11's too
  and run in a `privileged` namespace, so they are only advised here.
- `pods-least-privilege` (advisory): non-root, all capabilities dropped (NET_BIND_SERVICE the only one
  added back), a read-only root filesystem, no Kubernetes API token unless the pod states why
  (`tpu-stacks.dev/api-token-reason` on the pod template), and a CPU limit on containers that take no
  TPU (TPU hosts go without: components/tpu_stacks/k8s/security.py says why; a pod template annotated
  `tpu-stacks.dev/no-cpu-limit-reason` states why its containers go without). Advisory: images that
  need root or a writable root exist, and the finding is the start of a decision, not a bug.
- `control-plane-restricted` (advisory): a GKE cluster whose endpoint is open to the whole internet
  (no authorized networks, or 0.0.0.0/0 among them, and no private endpoint).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.values import UNKNOWN, as_dict, as_list, as_str, dig, is_true, plain
from tpu_policies.workloads import PodTemplate, pod_templates
from tpu_stacks.catalog.tpu import TPU_RESOURCE
from tpu_stacks.objects.annotations import API_TOKEN_REASON, NO_CPU_LIMIT_REASON
from tpu_stacks.serving.exposure import covers_whole_internet

SECCOMP_OK = ("RuntimeDefault", "Localhost")
ALLOWED_ADDED_CAPABILITIES = ("NET_BIND_SERVICE",)  # the one Pod Security `restricted` allows


def _names(containers: list[dict[str, Any]]) -> str:
    return ", ".join(str(c.get("name") or "?") for c in containers)


def _seccomp(template: PodTemplate, container: dict[str, Any]) -> Any:
    own = dig(container, "securityContext", "seccompProfile", "type")
    return own if own is not None else dig(template.spec, "securityContext", "seccompProfile", "type")


def _escalates(container: dict[str, Any]) -> bool:
    value = dig(container, "securityContext", "allowPrivilegeEscalation")
    return value is not UNKNOWN and value is not False


def hardening_problems(template: PodTemplate) -> list[str]:
    """What `pods-hardened` finds in one pod template (host-network pods and privileged containers excluded)."""
    if is_true(template.spec.get("hostNetwork")):
        return []
    containers = [c for c in template.containers() if not is_true(dig(c, "securityContext", "privileged"))]
    problems = []
    escalating = [c for c in containers if _escalates(c)]
    if escalating:
        problems.append(
            f"container(s) {_names(escalating)} may gain privileges (setuid binaries): set "
            "securityContext.allowPrivilegeEscalation: false"
        )
    unfiltered = [
        c for c in containers if _seccomp(template, c) is not UNKNOWN and _seccomp(template, c) not in SECCOMP_OK
    ]
    if unfiltered:
        problems.append(
            f"container(s) {_names(unfiltered)} run without a seccomp profile: set "
            "securityContext.seccompProfile.type: RuntimeDefault on the pod"
        )
    return problems


def _runs_as_non_root(template: PodTemplate, container: dict[str, Any]) -> bool:
    for source in (as_dict(container.get("securityContext")), as_dict(template.spec.get("securityContext"))):
        if source.get("runAsNonRoot") is not None or source.get("runAsUser") is not None:
            user = source.get("runAsUser")
            return is_true(source.get("runAsNonRoot")) or (user is not None and user != 0)
    return False


def _takes_tpu(container: dict[str, Any]) -> bool:
    resources = as_dict(container.get("resources"))
    return any(dig(resources, side, TPU_RESOURCE) is not None for side in ("limits", "requests"))


def least_privilege_problems(template: PodTemplate) -> list[str]:
    """What `pods-least-privilege` advises for one pod template."""
    containers = template.containers()
    checks = [
        (
            "run as root: set runAsNonRoot and a numeric runAsUser",
            [c for c in containers if not _runs_as_non_root(template, c)],
        ),
        (
            "keep capabilities: drop ALL (add back only NET_BIND_SERVICE)",
            [
                c
                for c in containers
                if "ALL" not in (as_list(dig(c, "securityContext", "capabilities", "drop")))
                or set(map(str, as_list(dig(c, "securityContext", "capabilities", "add"))))
                - set(ALLOWED_ADDED_CAPABILITIES)
            ],
        ),
        (
            "have a writable root filesystem: set readOnlyRootFilesystem and mount an emptyDir where they write",
            [c for c in containers if not is_true(dig(c, "securityContext", "readOnlyRootFilesystem"))],
        ),
        (
            "take no TPU and have no CPU limit",
            [
                c
                for c in template.containers(init=False)
                if not _takes_tpu(c) and dig(c, "resources", "limits", "cpu") is None
            ]
            if not as_str(template.annotations.get(NO_CPU_LIMIT_REASON))
            else [],
        ),
    ]
    problems = [f"container(s) {_names(found)} {what}" for what, found in checks if found]
    if template.spec.get("automountServiceAccountToken") is not False and not as_str(
        template.annotations.get(API_TOKEN_REASON)
    ):
        problems.append(
            "the pod mounts a Kubernetes API token: set automountServiceAccountToken: false, or annotate the "
            f"pod template {API_TOKEN_REASON}: <why>"
        )
    return problems


def _validate_pods(problems_of: Any) -> Any:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for template in pod_templates(args.resource_type, plain(args.props)):
            for problem in problems_of(template):
                report_violation(f"{template.where}: {problem}", None)

    return validate


def _open_to_internet(props: dict[str, Any]) -> bool:
    if is_true(dig(props, "privateClusterConfig", "enablePrivateEndpoint")):
        return False
    authorized = dig(props, "masterAuthorizedNetworksConfig")
    if not isinstance(authorized, dict):
        return authorized is not UNKNOWN
    blocks = as_list(authorized.get("cidrBlocks"))
    # the union, as for load balancers: 0.0.0.0/1 + 128.0.0.0/1 is the whole internet too
    return bool(covers_whole_internet([as_str(dig(block, "cidrBlock")) or "" for block in blocks]))


def _validate_control_plane(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != "gcp:container/cluster:Cluster":
        return
    if _open_to_internet(plain(args.props)):
        report_violation(
            "control plane open to the whole internet: set cluster.controlPlane.authorizedNetworks or "
            "privateEndpoint: true (README: Deploy)",
            None,
        )


HARDENED_POLICY = ResourceValidationPolicy(
    name="pods-hardened",
    description="Containers of pods not on the host network run with allowPrivilegeEscalation: false and a "
    "RuntimeDefault (or Localhost) seccomp profile.",
    validate=_validate_pods(hardening_problems),
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
LEAST_PRIVILEGE_POLICY = ResourceValidationPolicy(
    name="pods-least-privilege",
    description="Containers run as non-root with all capabilities dropped and a read-only root filesystem; pods "
    "mount no API token unless they state why; containers without TPUs have CPU limits.",
    validate=_validate_pods(least_privilege_problems),
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
)
CONTROL_PLANE_POLICY = ResourceValidationPolicy(
    name="control-plane-restricted",
    description="A GKE cluster's control plane is not open to the whole internet (authorized networks or a "
    "private endpoint).",
    validate=_validate_control_plane,
    enforcement_level=EnforcementLevel.ADVISORY,
    severity=Severity.MEDIUM,
)
