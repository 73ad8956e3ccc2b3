"""Identity domains of a Google Cloud universe: workload pools, service-account emails, principals.

Google Cloud and sovereign clouds differ only in these strings. The sovereign-cloud Saxml
tutorial (Cloud de Confiance by S3NS) uses `PROJECT.s3ns.svc.id.goog` as the workload pool and
`NAME@PROJECT.s3ns.iam.gserviceaccount.com` for service accounts; Google Cloud drops the `s3ns.`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.errors import UserError


class Universe(BaseModel):
    """A cloud universe: its API domain (the provider's `universeDomain`) and identity prefix."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    api_domain: str
    identity_prefix: str = ""
    """Inserted before `svc.id.goog` and `iam.gserviceaccount.com` (`s3ns` for S3NS)."""

    def _prefixed(self, domain: str) -> str:
        return f"{self.identity_prefix}.{domain}" if self.identity_prefix else domain

    def workload_pool(self, project: str) -> str:
        return f"{project}.{self._prefixed('svc.id.goog')}"

    def service_account_email(self, account_id: str, project: str) -> str:
        return f"{account_id}@{project}.{self._prefixed('iam.gserviceaccount.com')}"

    def ksa_member(self, project: str, namespace: str, ksa: str) -> str:
        """The IAM member a Kubernetes ServiceAccount is, for `roles/iam.workloadIdentityUser`."""
        return f"serviceAccount:{self.workload_pool(project)}[{namespace}/{ksa}]"

    def principal_member(self, project_number: str, project: str, namespace: str, ksa: str) -> str:
        """The direct Workload Identity Federation principal of a Kubernetes ServiceAccount."""
        return (
            f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
            f"workloadIdentityPools/{self.workload_pool(project)}/subject/ns/{namespace}/sa/{ksa}"
        )

    @property
    def is_default(self) -> bool:
        return self.api_domain == "googleapis.com"


UNIVERSES: tuple[Universe, ...] = (
    Universe(name="google", api_domain="googleapis.com"),
    # The identity prefix is the tutorial's; the API domain is the provider's `universeDomain` for
    # S3NS as the S3NS Terraform docs use it (set `gcp:universeDomain` to the same value).
    Universe(name="s3ns", api_domain="s3nsapis.fr", identity_prefix="s3ns"),
)


def universe(name: str, key: str = "universe") -> Universe:
    for candidate in UNIVERSES:
        if name in (candidate.name, candidate.api_domain):
            return candidate
    valid = ", ".join(u.name for u in UNIVERSES)
    raise UserError(key, name, "is not a known cloud universe", f"valid: {valid}")
