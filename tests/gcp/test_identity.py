"""WorkloadIdentity: both binding forms, scoped grants, the sovereign domains, refused roles.

Under the offline mocks the provider's universe (`gcp:universeDomain`) decides a new account's
e-mail, as the real provider does; `capture_in` runs a build with the provider in a given universe.
"""

from dataclasses import replace
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from tests.mocks import TEST_CONFIG, RecordingMocks, capture, refused
from tpu_stacks.gcp.identity import WorkloadIdentity

KSA = "kubernetes:core/v1:ServiceAccount"
ACCOUNT = "gcp:serviceaccount/account:Account"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"


class UniverseMocks(RecordingMocks):
    """The mocks with the provider configured for a universe (and, optionally, an e-mail domain of
    its own, as a provider would report it)."""

    def __init__(self, universe_domain: str, email_domain: str | None = None) -> None:
        super().__init__()
        self.config = replace(TEST_CONFIG, values={**TEST_CONFIG.values, "gcp:universeDomain": universe_domain})
        self.email_domain = email_domain

    def _service_account(self, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        resource_id, outputs = super()._service_account(name, inputs)
        if self.email_domain:
            email = f"{inputs['accountId']}@{self.email_domain}"
            outputs = {**outputs, "email": email, "member": f"serviceAccount:{email}"}
        return resource_id, outputs


def capture_in(mocks: RecordingMocks, build: Any) -> RecordingMocks:
    pulumi.runtime.set_mocks(mocks, preview=False)
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test
    def run() -> Any:
        identity = build()
        return pulumi.Output.all(identity.gsa_email, identity.member).apply(
            lambda values: outputs.update(gsa_email=values[0], member=values[1])
        )

    run()
    mocks.outputs = outputs  # type: ignore[attr-defined]
    return mocks


SOVEREIGN = {
    "ksa_name": "sax-sa",
    "mode": "service-account",
    "gsa_name": "sax-iam-sa",
    "universe": "s3ns",
    "bucket_grants": [{"bucket": "sax-admin"}],
}


def test_principal_form_grants_on_the_bucket_only():
    mocks = capture(
        lambda: WorkloadIdentity(
            "vllm",
            {
                "project": "proj",
                "ksa_name": "vllm-sa",
                "namespace": "serving",
                "bucket_grants": [{"bucket": "weights"}],
            },
        )
    )
    (ksa,) = mocks.of_type(KSA)
    assert ksa.inputs["metadata"]["name"] == "vllm-sa" and ksa.inputs["metadata"]["namespace"] == "serving"
    assert "annotations" not in ksa.inputs["metadata"]
    (grant,) = mocks.of_type(BUCKET_MEMBER)
    assert grant.inputs["bucket"] == "weights"
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"] == (
        "principal://iam.googleapis.com/projects/123456789012/locations/global/"
        "workloadIdentityPools/proj.svc.id.goog/subject/ns/serving/sa/vllm-sa"
    )
    assert mocks.of_type("gcp:serviceaccount/account:Account") == []
    assert mocks.of_type("gcp:projects/iAMMember:IAMMember") == []


@pytest.mark.parametrize("project", ["proj", "s3ns:proj"])
def test_service_account_form_in_the_sovereign_universe(project):
    """Both ways S3NS writes a project id give the bare id in the pool and the e-mail, never `s3ns:`;
    the Account itself is declared in the project as written."""
    mocks = capture_in(UniverseMocks("s3nsapis.fr"), lambda: WorkloadIdentity("sax", {**SOVEREIGN, "project": project}))
    (account,) = mocks.of_type(ACCOUNT)
    assert account.inputs["project"] == project
    (ksa,) = mocks.of_type(KSA)
    assert ksa.inputs["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"
    }
    (binding,) = mocks.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == "serviceAccount:proj.s3ns.svc.id.goog[default/sax-sa]"
    (grant,) = mocks.of_type(BUCKET_MEMBER)
    assert grant.inputs["member"] == "serviceAccount:sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"
    assert mocks.outputs == {
        "gsa_email": "sax-iam-sa@proj.s3ns.iam.gserviceaccount.com",
        "member": "serviceAccount:sax-iam-sa@proj.s3ns.iam.gserviceaccount.com",
    }


def test_the_email_is_the_accounts_own_output_not_a_formatted_guess():
    """Whatever domain the provider reports (S3NS's older pages show `PROJECT.s3ns-system.iam...`), the
    annotation, the grants and the output use it: nothing formats the e-mail beside the account."""
    reported = "proj.s3ns-system.iam.gserviceaccount.com"
    mocks = capture_in(
        UniverseMocks("s3nsapis.fr", email_domain=reported),
        lambda: WorkloadIdentity("sax", {**SOVEREIGN, "project": "s3ns:proj"}),
    )
    (ksa,) = mocks.of_type(KSA)
    assert ksa.inputs["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == f"sax-iam-sa@{reported}"
    (grant,) = mocks.of_type(BUCKET_MEMBER)
    assert grant.inputs["member"] == f"serviceAccount:sax-iam-sa@{reported}"
    assert mocks.outputs["gsa_email"] == f"sax-iam-sa@{reported}"


def test_principal_form_names_the_bare_project_in_the_pool():
    mocks = capture(
        lambda: WorkloadIdentity(
            "vllm",
            {
                "project": "s3ns:proj",
                "ksa_name": "vllm-sa",
                "namespace": "serving",
                "universe": "s3ns",
                "project_number": "42",
                "bucket_grants": [{"bucket": "weights"}],
            },
        )
    )
    (grant,) = mocks.of_type(BUCKET_MEMBER)
    assert grant.inputs["member"] == (
        "principal://iam.googleapis.com/projects/42/locations/global/"
        "workloadIdentityPools/proj.s3ns.svc.id.goog/subject/ns/serving/sa/vllm-sa"
    )


def test_project_level_role_only_where_it_exists_only_there():
    mocks = capture(
        lambda: WorkloadIdentity(
            "adapter",
            {
                "project": "proj",
                "ksa_name": "custom-metrics-stackdriver-adapter",
                "namespace": "custom-metrics",
                "project_number": "42",
                "project_roles": ["roles/monitoring.viewer"],
            },
        )
    )
    (grant,) = mocks.of_type("gcp:projects/iAMMember:IAMMember")
    assert grant.inputs["role"] == "roles/monitoring.viewer"
    assert grant.inputs["member"].endswith("/subject/ns/custom-metrics/sa/custom-metrics-stackdriver-adapter")
    assert "/projects/42/" in grant.inputs["member"]


@pytest.mark.parametrize(
    "extra,message",
    [
        ({"project_roles": ["roles/storage.admin"]}, "projectRoles: 'roles/storage.admin' is not granted project-wide"),
        ({"bucket_grants": [{"bucket": "b", "role": "roles/storage.admin"}]}, "is an administration role"),
        ({"mode": "service-account", "gsa_name": "X"}, "gsaName: 'X' is not a valid service account id"),
        ({"mode": "magic"}, "mode: 'magic' is not a Workload Identity form"),
        ({"ksa_name": "Bad_Name"}, "ksaName: 'Bad_Name' is not a valid Kubernetes name"),
        ({"project": "s3ns:proj"}, "project: 's3ns:proj' is a project id of universe s3ns, but the stack deploys"),
        ({"project": "s3ns:", "universe": "s3ns"}, "project: 's3ns:' has no project id after its prefix"),
    ],
)
def test_refused_before_any_resource(extra, message):
    assert message in refused(lambda: WorkloadIdentity("bad", {"project": "proj", "ksa_name": "sa", **extra}))


def test_a_bucket_grant_may_be_limited_to_a_prefix_by_an_iam_condition():
    condition = gcp.storage.BucketIAMMemberConditionArgs(
        title="cache", expression='resource.name.startsWith("projects/_/buckets/b/objects/cache/")'
    )
    grant = {"bucket": "b", "role": "roles/storage.objectUser", "condition": condition}
    mocks = capture(lambda: WorkloadIdentity("w", {"project": "p", "ksa_name": "sa", "bucket_grants": [grant]}))
    (member,) = mocks.of_type(BUCKET_MEMBER)
    assert member.inputs["condition"] == {
        "title": "cache",
        "expression": 'resource.name.startsWith("projects/_/buckets/b/objects/cache/")',
    }
