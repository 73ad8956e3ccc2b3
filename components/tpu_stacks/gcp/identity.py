"""`WorkloadIdentity`: a Kubernetes ServiceAccount with Google Cloud access, least privilege.

Two forms, as the tutorials use them:
- `principal`: IAM grants name the KSA directly (`principal://iam.googleapis.com/projects/NUMBER/
  locations/global/workloadIdentityPools/POOL/subject/ns/NS/sa/KSA`); no Google service account.
- `service-account`: a Google service account with `roles/iam.workloadIdentityUser` for
  `serviceAccount:POOL[NS/KSA]`, and the KSA annotated `iam.gke.io/gcp-service-account`.
  The account's e-mail (annotation, grants, output) is the Account's own `email` output, never
  formatted here: the provider knows the universe's domain, and S3NS's pages disagree on it
  (`PROJECT.s3ns.iam...` and `PROJECT.s3ns-system.iam...`, gcp/universe.py SERVICE_ACCOUNTS).
The pool and principal members use the bare project id (`s3ns:PROJECT` -> `PROJECT`,
`Universe.bare_project`); resources get the project as the user wrote it.
Grants are scoped to buckets. A project-level role is accepted only where the role exists only at
project level (monitoring, logging), never an admin, owner or editor role.
(No `from __future__ import annotations` here: Pulumi's schema inference reads the annotations.)
"""

from typing import NotRequired, Optional, TypedDict, cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import Universe, universe
from tpu_stacks.names import K8S_NAME, SERVICE_ACCOUNT_ID

TYPE = "tpu-stacks:index:WorkloadIdentity"
GSA_ANNOTATION = "iam.gke.io/gcp-service-account"
# Roles that exist only at project level and grant no administration of data. (Storage roles,
# insightsCollectorService included, are granted on the bucket; GCS FUSE no longer needs that one,
# see docs/jetstream.md.)
PROJECT_ONLY_ROLES = frozenset({"roles/monitoring.viewer", "roles/monitoring.metricWriter", "roles/logging.logWriter"})


class BucketGrantArgs(TypedDict):
    bucket: pulumi.Input[str]
    """Bucket name."""
    role: NotRequired[str]
    """Bucket-level role (default roles/storage.objectUser: read and write objects, nothing else)."""
    condition: NotRequired[gcp.storage.BucketIAMMemberConditionArgs]
    """An IAM condition narrowing the grant, e.g. to objects under a prefix
    (`resource.name.startsWith("projects/_/buckets/B/objects/PREFIX")`); the bucket must use uniform bucket-level
    access (gcp/storage.py sets it on every bucket here)."""


class WorkloadIdentityArgs(TypedDict):
    project: str
    ksa_name: str
    """Kubernetes ServiceAccount to create."""
    namespace: NotRequired[str]
    mode: NotRequired[str]
    """principal (default) or service-account."""
    gsa_name: NotRequired[str]
    """Google service account id (service-account mode)."""
    project_number: NotRequired[str]
    """Project number for principal members (looked up when omitted)."""
    universe: NotRequired[str]
    bucket_grants: NotRequired[list[BucketGrantArgs]]
    project_roles: NotRequired[list[str]]


def check_project_role(role: str, key: str = "projectRoles") -> None:
    """Refuse project-wide roles that would give a workload more than it needs."""
    if role not in PROJECT_ONLY_ROLES:
        allowed = ", ".join(sorted(PROJECT_ONLY_ROLES))
        raise UserError(
            key,
            role,
            "is not granted project-wide by tpu-stacks",
            f"grant storage roles on the bucket (bucketGrants); project-level roles allowed: {allowed}",
        )


def check_args(args: WorkloadIdentityArgs) -> tuple[str, str, Universe]:
    """Every rule on the arguments, so a caller can refuse them before declaring anything."""
    mode = args.get("mode", "principal")
    if mode not in ("principal", "service-account"):
        raise UserError("mode", mode, "is not a Workload Identity form", "use principal or service-account")
    for key, config_key in (("ksa_name", "ksaName"), ("namespace", "namespace")):
        value = args.get(key, "default")
        if not K8S_NAME.matches(value):
            raise UserError(
                config_key, value, "is not a valid Kubernetes name", "use lowercase letters, digits and '-'"
            )
    if mode == "service-account" and not SERVICE_ACCOUNT_ID.matches(args.get("gsa_name", "")):
        raise UserError(
            "gsaName",
            args.get("gsa_name", ""),
            "is not a valid service account id",
            "use 6-30 lowercase letters, digits and '-'",
        )
    for role in args.get("project_roles", []):
        check_project_role(role)
    for grant in args.get("bucket_grants", []):
        role = grant.get("role", "roles/storage.objectUser")
        if role in ("roles/storage.admin", "roles/owner", "roles/editor"):
            raise UserError(
                "bucketGrants.role", role, "is an administration role", "use roles/storage.objectUser or objectViewer"
            )
    chosen = universe(args.get("universe", "google"))
    chosen.bare_project(args["project"])  # a prefix of another universe is refused here, before any resource
    return mode, args.get("namespace", "default"), chosen


def dependencies_of(opts: Optional[pulumi.ResourceOptions]) -> list[pulumi.Input[pulumi.Resource]]:
    """A component's `depends_on`, to hand to its children (Pulumi does not)."""
    depends_on = opts.depends_on if opts else None
    if depends_on is None:
        return []
    if isinstance(depends_on, (list, tuple)):
        return list(depends_on)
    if isinstance(depends_on, pulumi.Resource):
        return [depends_on]
    # An Output or awaitable: isinstance cannot tell one of a Resource from one of a list, and Pulumi
    # resolves either (ResourceOptions._depends_on_list in pulumi/resource.py); passed on as it came.
    return [cast(pulumi.Input[pulumi.Resource], depends_on)]


class WorkloadIdentity(pulumi.ComponentResource):
    """A Kubernetes ServiceAccount bound to Google Cloud access on named buckets only."""

    ksa_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    member: pulumi.Output[str]
    """The IAM member the grants name (principal:// or serviceAccount:)."""
    gsa_email: pulumi.Output[str]
    """The Google service account's email (service-account mode; empty otherwise)."""

    def __init__(self, name: str, args: WorkloadIdentityArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        mode, namespace, chosen = check_args(args)
        super().__init__(TYPE, name, {}, opts)
        # The component's own depends_on (e.g. the cluster that creates the workload pool) holds for
        # every grant it declares: Pulumi does not pass a component's dependencies to its children.
        after = dependencies_of(opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=after)
        project, ksa = args["project"], args["ksa_name"]
        annotations: dict[str, pulumi.Input[str]] = {}
        if mode == "service-account":
            account = gcp.serviceaccount.Account(
                f"{name}-gsa",
                gcp.serviceaccount.AccountArgs(
                    account_id=args["gsa_name"], project=project, display_name=f"Workload identity of {namespace}/{ksa}"
                ),
                opts=child,
            )
            gcp.serviceaccount.IAMMember(
                f"{name}-wi-user",
                gcp.serviceaccount.IAMMemberArgs(
                    service_account_id=account.name,
                    role="roles/iam.workloadIdentityUser",
                    member=chosen.ksa_member(project, namespace, ksa),
                ),
                opts=child,
            )
            # The e-mail as the provider reports it, in the universe's real domain; the annotation
            # and every grant that names it therefore wait for the account (input dependencies).
            email: pulumi.Input[str] = account.email
            annotations[GSA_ANNOTATION] = email
            member: pulumi.Output[str] = account.email.apply(lambda address: f"serviceAccount:{address}")
        else:
            number = (
                args.get("project_number")
                or gcp.organizations.get_project_output(
                    project_id=project, opts=pulumi.InvokeOptions(parent=self)
                ).number
            )
            member = pulumi.Output.from_input(number).apply(
                lambda n: chosen.principal_member(n, project, namespace, ksa)
            )
            email = ""
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-ksa",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=ksa,
                namespace=namespace,
                annotations=annotations or None,
                labels={"app.kubernetes.io/managed-by": "tpu-stacks"},
            ),
            opts=child,
        )
        for index, grant in enumerate(args.get("bucket_grants", [])):
            gcp.storage.BucketIAMMember(
                f"{name}-bucket-{index}",
                gcp.storage.BucketIAMMemberArgs(
                    bucket=grant["bucket"],
                    role=grant.get("role", "roles/storage.objectUser"),
                    member=member,
                    condition=grant.get("condition"),
                ),
                opts=child,
            )
        for role in args.get("project_roles", []):
            gcp.projects.IAMMember(
                f"{name}-{role.split('/')[-1].replace('.', '-').lower()}",
                gcp.projects.IAMMemberArgs(project=project, role=role, member=member),
                opts=child,
            )
        self.ksa_name = pulumi.Output.from_input(ksa)
        self.namespace = pulumi.Output.from_input(namespace)
        self.member = member
        self.gsa_email = pulumi.Output.from_input(email)
        self.register_outputs(
            {"ksa_name": self.ksa_name, "namespace": self.namespace, "member": self.member, "gsa_email": self.gsa_email}
        )
