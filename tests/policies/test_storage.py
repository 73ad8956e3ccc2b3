"""storage-least-privilege and bucket-hardened."""

import json

import pulumi_gcp as gcp

from tests.policies.harness import capture, of, run
from tpu_stacks.gcp.identity import WorkloadIdentity

IAM, BUCKET = "storage-least-privilege", "bucket-hardened"
SAX_SA = "serviceAccount:sax-iam-sa@p.iam.gserviceaccount.com"


def check(policy, build, config=None):
    return of(run(capture(build), config), policy)


def test_workload_identity_component_grants_pass():
    def build():
        return WorkloadIdentity(
            "wi",
            {
                "project": "p",
                "ksa_name": "vllm",
                "project_number": "123",
                "bucket_grants": [{"bucket": "models"}],
                "project_roles": ["roles/monitoring.viewer"],
            },
        )

    assert check(IAM, build) == []


def test_project_wide_storage_admin_for_a_workload():
    (problem,) = check(
        IAM, lambda: gcp.projects.IAMMember("sax", project="p", role="roles/storage.admin", member=SAX_SA)
    )
    assert problem.level == "mandatory"
    assert f"grants roles/storage.admin on the whole project to {SAX_SA}" in problem.message
    assert "roles/storage.objectUser" in problem.message and "BucketIAMMember" in problem.message


def test_humans_and_harmless_roles_are_not_judged():
    assert (
        check(IAM, lambda: gcp.projects.IAMMember("me", project="p", role="roles/owner", member="user:me@example.com"))
        == []
    )
    assert (
        check(IAM, lambda: gcp.projects.IAMMember("mon", project="p", role="roles/monitoring.viewer", member=SAX_SA))
        == []
    )


def test_bindings_and_whole_policies_are_read():
    binding = lambda: gcp.projects.IAMBinding(
        "b", project="p", role="roles/editor", members=["user:a@example.com", SAX_SA]
    )  # noqa: E731
    assert len(check(IAM, binding)) == 1
    data = json.dumps({"bindings": [{"role": "roles/storage.objectAdmin", "members": [SAX_SA]}]})
    assert len(check(IAM, lambda: gcp.projects.IAMPolicy("all", project="p", policy_data=data))) == 1


def test_denied_roles_are_configurable():
    build = lambda: gcp.projects.IAMMember("sax", project="p", role="roles/storage.admin", member=SAX_SA)  # noqa: E731
    assert check(IAM, build, {"storage-least-privilege": {"deniedRoles": ["roles/owner"]}}) == []


def test_bucket_needs_uniform_access_and_public_access_prevention():
    found = sorted(p.message for p in check(BUCKET, lambda: gcp.storage.Bucket("models", location="US")))
    assert len(found) == 2
    assert (
        found[0].startswith("publicAccessPrevention is not set")
        and 'set publicAccessPrevention: "enforced"' in found[0]
    )
    assert found[1].startswith("uniformBucketLevelAccess is not true")
    hardened = lambda: gcp.storage.Bucket(
        "models", location="US", uniform_bucket_level_access=True, public_access_prevention="enforced"
    )  # noqa: E731
    assert check(BUCKET, hardened) == []


def _hardened(resource: str, **args):
    return lambda: gcp.storage.Bucket(
        resource, location="US", uniform_bucket_level_access=True, public_access_prevention="enforced", **args
    )


def test_a_bucket_name_cloud_storage_refuses_is_reported():
    """https://cloud.google.com/storage/docs/buckets#naming: no `goog` prefix, no 'google'."""
    (found,) = check(BUCKET, _hardened("models", name="goog-x"))
    assert found.message.startswith("name 'goog-x' starts with 'goog', which Cloud Storage reserves")
    (found,) = check(BUCKET, _hardened("goog-weights"))  # auto-named goog-weights-<7 hex>
    assert found.message.startswith("auto-generated name 'goog-weights-<7 hex digits>' starts with 'goog'")
    assert check(BUCKET, _hardened("weights", name="tpu-weights")) == []
    assert check(BUCKET, _hardened("weights")) == []
