"""Least privilege across hosts: the download Job has its own Kubernetes ServiceAccount, the one that writes (under
the weights folder only) and holds the Hugging Face token; the Ray pods' account reads the bucket and writes only
under its compile cache's key, by IAM conditions (the bucket has uniform bucket-level access)."""

from tests.mocks import capture
from tests.vllm.test_multihost import CLUSTER, ONE_SLICE, ray_service, stack
from tpu_stacks.vllm.component import VllmStack

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
KSA = "kubernetes:core/v1:ServiceAccount"


def grants(mocks, identity: str) -> list[dict]:
    return [r.inputs for r in mocks.of_type(MEMBER) if r.name.startswith(f"{identity}-bucket-")]


def shape(grant: dict) -> tuple[str, str | None]:
    condition = grant.get("condition")
    return grant["role"], condition["expression"] if condition else None


def test_the_servers_read_and_write_only_their_compile_cache():
    mocks = stack(replicas=ONE_SLICE)
    found = dict(shape(g) for g in grants(mocks, "vllm-identity"))
    assert set(found) == {"roles/storage.objectViewer", "roles/storage.objectUser"}
    assert found["roles/storage.objectViewer"] is None  # read everything: the weights, the cache
    expression = found["roles/storage.objectUser"]
    assert expression.startswith('resource.name.startsWith("projects/_/buckets/')
    assert "/objects/xla-cache/meta-llama-llama-3.1-405b-instruct/v6e-4x8-tp32/" in expression
    # the upload writes plain objects only under that key (a parallel composite upload stages parts elsewhere)
    cluster = ray_service(mocks)["spec"]["rayClusterConfig"]
    pod = cluster["workerGroupSpecs"][0]["template"]["spec"]
    (upload,) = [c for c in pod["initContainers"] if c["name"] == "xla-cache-upload"]
    assert {"name": "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED", "value": "False"} in upload["env"]
    assert {pod["serviceAccountName"], cluster["headGroupSpec"]["template"]["spec"]["serviceAccountName"]} == {"vllm"}


def test_the_download_job_has_its_own_account_that_writes_the_weights_folder_only():
    mocks = stack(replicas=ONE_SLICE)
    accounts = {r.inputs["metadata"]["name"] for r in mocks.of_type(KSA)}
    assert {"vllm", "vllm-weights-writer"} <= accounts
    found = dict(shape(g) for g in grants(mocks, "vllm-weights-writer-identity"))
    assert set(found) == {"roles/storage.objectViewer", "roles/storage.objectUser"}
    assert found["roles/storage.objectViewer"] is None
    assert found["roles/storage.objectUser"].endswith('/objects/weights/")')
    (job,) = [r.inputs for r in mocks.resources if r.inputs.get("kind") == "Job" and "download" in str(r.inputs)]
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "vllm-weights-writer"


def test_a_single_host_server_keeps_its_one_read_write_grant():
    single = capture(
        lambda: VllmStack(
            "vllm",
            {"cluster": dict(CLUSTER), "model": "meta-llama/Llama-3.1-70B", "exposure": "cluster", "hf_token": "t"},
        )
    )
    assert [shape(g) for g in grants(single, "vllm-identity")] == [("roles/storage.objectUser", None)]
