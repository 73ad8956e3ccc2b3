"""Pure decisions of the raytrain workload: the plan, with no resources and no mocks."""

import pytest

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.names import SERVICE_ACCOUNT_ID
from tpu_stacks.raytrain.args import RayTrainStackArgs
from tpu_stacks.raytrain.component import checkpoint_path, job_submit, port_forward
from tpu_stacks.raytrain.plan import plan_raytrain
from tpu_stacks.raytrain.spec import RayTrainSpec

TUTORIAL = {
    "cluster": {"project": "proj", "location": "us-east5-b", "release_channel": "RAPID"},
    "model": "llama3-8b",
    "tpu_generation": "v6e",
    "topology": "4x4",
    "parallelism": {"fsdp": 4, "tensor": 4},
    "run_name": "rayjob-8b-4096-tp4-4x4",
}
# The tutorial's `ray job submit` arguments after the script (shared/seeds/004).


def plan_of(**overrides):
    args = {**TUTORIAL, **overrides}
    section = {k: v for k, v in args.items() if k != "cluster" and v is not None}
    return plan_raytrain(RayTrainSpec.model_validate(section), ClusterSpec.model_validate(args["cluster"]))


def test_interactive_path_commands():
    plan = plan_of()
    assert port_forward(plan) == "kubectl port-forward -n raytrain svc/maxtext-tpu-cluster-head-svc 8265:8265"
    assert job_submit(plan) == f"ray job submit --address http://localhost:8265 -- {plan.entrypoint()}"
    assert checkpoint_path(plan, "bkt") == "gs://bkt/rayjob-8b-4096-tp4-4x4/checkpoints"


def test_plan_carries_the_cluster_it_declares():
    plan = plan_of(slices=2, run_name="two-slices", spot=True)
    cluster = plan.cluster
    assert [pool.name for pool in plan.pools] == ["v6e-16-1", "v6e-16-2"] and plan.pool == plan.pools[0]
    assert all(pool.spot and pool.node_count == 4 and pool.threads_per_core == 1 for pool in plan.pools)
    assert (cluster.spec.addons.ray_operator, cluster.spec.addons.gcs_fuse) == (True, True)
    assert (cluster.spec.system_pool.machine_type, cluster.spec.system_pool.nodes) == ("n1-standard-16", 1)
    assert cluster.region == "us-east5"


def test_schema_args_and_validated_spec_have_the_same_fields():
    assert set(RayTrainStackArgs.__annotations__) - {"cluster"} == set(RayTrainSpec.model_fields)


def test_the_default_repository_is_the_stacks_own_and_a_given_one_is_kept():
    """`raytrain` and `raytrain-multislice` in one project both created `ray-maxtext`: AlreadyExists."""
    named = {"project": "proj", "location": "us-east5-b", "name": "training-b"}
    assert plan_of(cluster=named).spec.image.repository == "ray-maxtext-training-b"
    assert plan_of().spec.image.repository == "ray-maxtext-tpu-cluster"  # the default cluster name
    assert plan_of(image={"repository": "ray-maxtext"}).spec.image.repository == "ray-maxtext"
    prebuilt = {"build": "prebuilt", "reference": "us-docker.pkg.dev/acme/train/ray-maxtext:2025-10-29"}
    assert plan_of(image=prebuilt).spec.image.repository is None  # nothing is declared


def test_a_bad_repository_is_refused_with_its_key():
    with pytest.raises(UserError, match=r"^raytrain.image.repository: 'Ray_Maxtext' is not an Artifact Registry"):
        plan_of(image={"repository": "Ray_Maxtext"})


def test_the_sidecar_requests_what_a_pod_keeps_and_may_stage_a_checkpoint_shard():
    """The webhook copies an unset request from the limit; here the request is what stays on the disk,
    and the limit (the pod's only one) adds the checkpoint shard a worker may stage before upload."""
    from tpu_stacks.raytrain.pods import head_template, worker_template

    plan = plan_of()
    worker = worker_template(plan, plan.pool, "bucket", "image").metadata.annotations
    head = head_template(plan, "bucket", "image").metadata.annotations
    shard_gib = plan.checkpoint_shard_bytes / 1024**3
    for annotations in (worker, head):
        # writable layers and logs (4), /tmp (Ray's session directory, 10) and ~/.cache (10): k8s.security
        assert annotations["gke-gcsfuse/ephemeral-storage-request"] == "24Gi"
    assert int(worker["gke-gcsfuse/ephemeral-storage-limit"].removesuffix("Gi")) - 24 >= shard_gib


def test_the_build_account_follows_its_repository_within_the_iam_id_rule():
    """The trigger's service account id is unique per project like the repository it pushes to."""
    from tpu_stacks.raytrain.plan import builder_account_id

    assert builder_account_id("ray-maxtext") == "ray-maxtext-builder"
    long_ones = [builder_account_id(f"ray-maxtext-training-cluster-{zone}") for zone in ("east", "west")]
    assert all(SERVICE_ACCOUNT_ID.matches(account) and len(account) <= 30 for account in long_ones)
    assert long_ones[0] != long_ones[1]  # truncation alone would have made both ray-maxtext-training-clus...
    assert builder_account_id("ray-maxtext-training-cluster-east") == long_ones[0]  # deterministic
