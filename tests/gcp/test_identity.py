"""WorkloadIdentity: both binding forms, scoped grants, the sovereign domains, refused roles."""

import pytest

from tests.mocks import capture, refused
from tpu_stacks.gcp.identity import WorkloadIdentity

KSA = "kubernetes:core/v1:ServiceAccount"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"


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


def test_service_account_form_in_the_sovereign_universe():
    mocks = capture(
        lambda: WorkloadIdentity(
            "sax",
            {
                "project": "proj",
                "ksa_name": "sax-sa",
                "mode": "service-account",
                "gsa_name": "sax-iam-sa",
                "universe": "s3ns",
                "bucket_grants": [{"bucket": "sax-admin"}],
            },
        )
    )
    (ksa,) = mocks.of_type(KSA)
    assert ksa.inputs["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"
    }
    (binding,) = mocks.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert binding.inputs["member"] == "serviceAccount:proj.s3ns.svc.id.goog[default/sax-sa]"
    (grant,) = mocks.of_type(BUCKET_MEMBER)
    assert grant.inputs["member"] == "serviceAccount:sax-iam-sa@proj.s3ns.iam.gserviceaccount.com"


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
    ],
)
def test_refused_before_any_resource(extra, message):
    assert message in refused(lambda: WorkloadIdentity("bad", {"project": "proj", "ksa_name": "sa", **extra}))
