"""Rule 7: workloads get storage access on their buckets only, and buckets are not public.

Tutorials grant a model server project-wide `roles/storage.admin` (Saxml guide) so one leaked
token reads and deletes every bucket in the project; buckets with per-object ACLs or without
public access prevention can be opened to the internet by a single ACL change.
"""

from __future__ import annotations

import json
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.settings import Setting, config_schema
from tpu_policies.values import UNKNOWN, as_list, as_str, is_true, plain
from tpu_stacks.errors import UserError
from tpu_stacks.names import check_bucket_name

DENIED_ROLES = ["roles/storage.admin", "roles/storage.objectAdmin", "roles/owner", "roles/editor"]
SCOPES = {"projects": "project", "folder": "folder", "organizations": "organization"}
IAM_TYPES = {
    f"gcp:{module}/iAM{kind}:IAM{kind}": scope
    for module, scope in SCOPES.items()
    for kind in ("Member", "Binding", "Policy")
}
HUMAN_PREFIXES = ("user:", "group:", "domain:", "deleted:")
BUCKET_TYPE = "gcp:storage/bucket:Bucket"


DENIED_ROLES_SETTING = Setting(
    "deniedRoles",
    DENIED_ROLES,
    "Roles a workload must not hold at project, folder or organization level.",
)


def is_workload(member: Any) -> bool:
    """Anything but a person: service accounts, Workload Identity principals (and, worse, allUsers).
    An unknown member is computed from a service account or principal in this program, so it
    counts as a workload too."""
    if member is UNKNOWN:
        return True
    return isinstance(member, str) and not member.startswith(HUMAN_PREFIXES)


def _grants(resource_type: str, props: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(role, member) pairs an IAM resource grants."""
    if resource_type.endswith(":IAMMember"):
        return [(props.get("role"), props.get("member"))]
    if resource_type.endswith(":IAMBinding"):
        return [(props.get("role"), member) for member in as_list(props.get("members"))]
    policy = as_str(props.get("policyData"))
    try:
        bindings = json.loads(policy).get("bindings", []) if policy else []
    except (ValueError, AttributeError):
        return []
    return [(b.get("role"), member) for b in bindings if isinstance(b, dict) for member in b.get("members", [])]


def _validate_iam(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    scope = IAM_TYPES.get(args.resource_type)
    if scope is None:
        return
    denied = set(DENIED_ROLES_SETTING.read(args))
    for role, member in _grants(args.resource_type, plain(args.props)):
        if role in denied and is_workload(member):
            shown = "a computed member" if member is UNKNOWN else member
            report_violation(
                f"grants {role} on the whole {scope} to {shown}; grant roles/storage.objectUser (or "
                "objectViewer) on the workload's bucket instead (gcp.storage.BucketIAMMember)",
                None,
            )


# A bucket without `name` is auto-named `<resource name>-<7 hex digits>`, not lowercased (pulumi/pulumi-gcp#126:
# "Invalid bucket name: 'newObject-f691b50'"; #698: 'auth.example.com-3da1b83'; #2164 is open).
AUTONAME_SUFFIX = "-0a1b2c3"


def _bucket_name_problem(name: Any, resource_name: str) -> str | None:
    """What Cloud Storage would refuse in the bucket's name (names.check_bucket_name, the rule the program's
    inputs follow): `name` as given, else the name Pulumi generates from the resource's."""
    if name is UNKNOWN:
        return None
    given = isinstance(name, str) and bool(name)
    try:
        check_bucket_name(name if given else resource_name + AUTONAME_SUFFIX)
    except UserError as error:
        shown = f"name '{name}'" if given else f"auto-generated name '{resource_name}-<7 hex digits>'"
        fix = "" if given else " (or rename the resource)"
        return f"{shown} {error.problem}; {error.fix}{fix}"
    return None


def _validate_bucket(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != BUCKET_TYPE:
        return
    props = plain(args.props)
    problem = _bucket_name_problem(props.get("name"), args.name)
    if problem:
        report_violation(problem, None)
    ubla = props.get("uniformBucketLevelAccess")
    if ubla is not UNKNOWN and not is_true(ubla):
        report_violation(
            "uniformBucketLevelAccess is not true; set uniformBucketLevelAccess: true so access is "
            "granted by IAM only, never by per-object ACLs",
            None,
        )
    prevention = props.get("publicAccessPrevention")
    if prevention is not UNKNOWN and prevention != "enforced":
        shown = f'is "{prevention}"' if prevention else "is not set (inherited)"
        report_violation(
            f'publicAccessPrevention {shown}; set publicAccessPrevention: "enforced" so no IAM or ACL '
            "change can make model weights or checkpoints public",
            None,
        )


IAM_POLICY = ResourceValidationPolicy(
    name="storage-least-privilege",
    description="No project-, folder- or organization-level storage admin, object admin, owner or editor role for "
    "workloads (service accounts and Workload Identity principals); grant roles on buckets instead.",
    validate=_validate_iam,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
    config_schema=config_schema(DENIED_ROLES_SETTING),
)

BUCKET_POLICY = ResourceValidationPolicy(
    name="bucket-hardened",
    description="Cloud Storage buckets use uniform bucket-level access, enforce public access prevention and have "
    "names Cloud Storage accepts (no reserved `goog` prefix).",
    validate=_validate_bucket,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
