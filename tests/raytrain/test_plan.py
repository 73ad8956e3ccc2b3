"""Pure decisions of the raytrain workload: the plan, with no resources and no mocks."""

import pytest

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import parse
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
# The tutorial's `ray job submit` arguments after the script ([D-GKE-RAY]).


def plan_of(**overrides):
    args = {**TUTORIAL, **overrides}
    section = {k: v for k, v in args.items() if k != "cluster" and v is not None}
    # parse: names are refused when the section is read, as the stack does (validation.parse).
    return plan_raytrain(parse(RayTrainSpec, section, "raytrain"), ClusterSpec.model_validate(args["cluster"]))


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


# --- numbers and strings pinned to the tutorial ([D-GKE-RAY]) and the catalogue ----------------
# Llama 3 8B (MaxText's llama3-8b.yml: 32 layers, d_model 4096, 32 query / 8 KV heads of 128, d_ff 14336,
# vocab 128256, untied embeddings): per layer q,o 4096x4096 + k,v 4096x1024 + 3 x 4096x14336 (gated MLP)
# + 2 norms of 4096 = 218,112,000; x 32 + 2 x 128256x4096 (embedding, head) + 4096 (final norm).
LLAMA3_8B_PARAMS = 32 * 218_112_000 + 2 * 128_256 * 4096 + 4096
GiB = 1024**3


def refusal(**overrides) -> str:
    with pytest.raises(UserError) as caught:
        plan_of(**overrides)
    return str(caught.value)


def test_the_tutorials_ray_job_submit_line_is_the_entrypoint():
    """The tutorial's ScalingConfig (num_workers=4, topology="4x4", accelerator_type="TPU-V6E",
    resources_per_worker={"TPU": 4}) as the trainer's flags, then its MaxText arguments in its order."""
    plan = plan_of()
    assert LLAMA3_8B_PARAMS == 8_030_261_248 and plan.model.params == LLAMA3_8B_PARAMS
    assert plan.trainer_args() == [
        "--accelerator-type=TPU-V6E",
        "--topology=4x4",
        "--hosts-per-slice=4",
        "--chips-per-host=4",
        "--slices=1",
        "--max-failures=1",
        "--storage-path=/data/ray-train",
    ]
    assert plan.maxtext_args() == [
        "/app/maxtext/src/MaxText/configs/base.yml",
        "base_output_directory=/data/",
        "dataset_type=synthetic",
        "per_device_batch_size=1",
        "max_target_length=4096",
        "model_name=llama3-8b",
        "steps=100",
        "ici_fsdp_parallelism=4",
        "ici_tensor_parallelism=4",
        "run_name=rayjob-8b-4096-tp4-4x4",
    ]
    assert plan.entrypoint() == " ".join(
        ["python /app/raytrain_trainer.py", *plan.trainer_args(), *plan.maxtext_args()]
    )
    assert (plan.hosts, plan.workers, plan.devices, plan.accelerator_type) == (4, 4, 16, "TPU-V6E")


def test_multislice_adds_dcn_data_parallelism_and_the_checkpoint_period_after_the_mesh():
    plan = plan_of(slices=2, checkpoint_period=50, extra_args=["remat_policy=full"], max_failures=3)
    assert plan.maxtext_args()[-4:] == [
        "run_name=rayjob-8b-4096-tp4-4x4",
        "checkpoint_period=50",
        "dcn_data_parallelism=2",
        "remat_policy=full",
    ]
    assert "--slices=2" in plan.trainer_args() and "--max-failures=3" in plan.trainer_args()
    assert (plan.hosts, plan.workers) == (4, 8)  # 4 TPU VMs per 4x4 slice, two slices
    single = plan_of(per_device_batch_size=0.5)
    assert "per_device_batch_size=0.5" in single.maxtext_args()
    assert not [a for a in single.maxtext_args() if a.startswith(("dcn_", "checkpoint_period"))]


def test_checkpoint_shard_fuse_cache_and_worker_memory_of_the_tutorial():
    """One host's shard: fp32 weights (4 B) + two fp32 AdamW moments (8 B) per parameter, over 4 hosts."""
    plan = plan_of()
    shard = LLAMA3_8B_PARAMS * 12 // 4
    assert plan.checkpoint_shard_bytes == shard == 24_090_783_744
    assert plan.fuse_cache_gib == 25  # ceil(24,090,783,744 x 1.1 / 2^30 = 24.68)
    assert plan.worker_memory == "64Gi"  # 2 x 22.44 GiB + 16 = 60.9 -> next multiple of 8
    assert plan_of(worker={"memory": "300Gi"}).worker_memory == "300Gi"  # given: kept as written
    bf16 = plan.model_copy(update={"request": plan.request.model_copy(update={"moment_dtype": "bf16"})})
    assert bf16.checkpoint_shard_bytes == LLAMA3_8B_PARAMS * (4 + 2 * 2) // 4
    sgd = plan.model_copy(update={"request": plan.request.model_copy(update={"optimizer": "sgd"})})
    assert sgd.checkpoint_shard_bytes == LLAMA3_8B_PARAMS * 4 // 4  # no moments


@pytest.mark.parametrize(
    ("shard_gib", "memory"),
    [
        (3.5, "32Gi"),  # 2 x 3.5 + 16 = 23: the 32 GiB floor
        (4.25, "32Gi"),  # 24.5 -> 32 (steps of 8, also the floor)
        (8.25, "40Gi"),  # 32.5 -> 40
        (12.0, "40Gi"),  # exactly 40: no step up
        (11.75, "40Gi"),  # 39.5 -> 40
        (12.25, "48Gi"),  # 40.5 -> 48
    ],
)
def test_worker_memory_is_twice_the_shard_plus_16_gib_in_steps_of_8_at_least_32(shard_gib, memory):
    from tpu_stacks.catalog.models import custom_model

    plan = plan_of()
    params = int(shard_gib * GiB * plan.hosts / 12)  # 12 B per parameter (see above), 4 hosts
    model = custom_model("sized", params)
    assert plan.model_copy(update={"model": model}).worker_memory == memory


def test_the_slice_sized_from_the_model_names_the_run_and_meshes_fsdp_over_every_chip():
    plan = plan_of(topology=None, parallelism=None, run_name=None)
    assert (plan.shape.topology, plan.shape.chips, plan.hosts) == ("2x4", 8, 1)  # one ct6e-standard-8t
    assert plan.parallelism == {"fsdp": 8}
    assert plan.run_name == "llama3-8b-4096-2x4"
    assert plan.pool.name == "v6e-8"  # the tutorial's pool naming: generation-chips
    # one host holds the whole state: 8,030,261,248 x 12 B = 89.75 GiB; 2 x 89.75 + 16 = 195.5 -> 200
    assert plan.worker_memory == "200Gi"


@pytest.mark.parametrize(
    ("overrides", "run_name"),
    [
        ({"slices": 2}, "llama3-8b-4096-4x4-2slices"),
        ({"model": "llama3.1-8b", "max_target_length": 2048}, "llama3-1-8b-2048-4x4"),  # '.' -> '-'
        ({"model": "qwen2.5-1.5b", "topology": "2x2", "parallelism": {"fsdp": 4}}, "qwen2-5-1-5b-4096-2x2"),
    ],
)
def test_a_derived_run_name_is_a_dns_label_of_model_length_topology_and_slices(overrides, run_name):
    assert plan_of(run_name=None, **overrides).run_name == run_name


def test_a_derived_run_name_is_cut_to_the_rayjob_limit_without_a_trailing_dash():
    from tpu_stacks.raytrain.plan import _run_name

    plan = plan_of()
    # a 30-character model + '-4096-4x4-64slices' (18) is 48 characters: the last one is cut
    long_model = plan.spec.model_copy(update={"model": "m" * 29 + "x", "run_name": None, "slices": 64})
    assert _run_name(long_model, plan.shape) == "m" * 29 + "x-4096-4x4-64slice"
    # a 46-character model puts the dash before 4096 at position 47: cut there, the dash is stripped
    dash_at_cut = plan.spec.model_copy(update={"model": "m" * 46, "run_name": None})
    assert _run_name(dash_at_cut, plan.shape) == "m" * 46
    fits = plan.spec.model_copy(update={"model": "m" * 38, "run_name": None})
    assert _run_name(fits, plan.shape) == "m" * 38 + "-4096-4x4"  # 47 characters: kept whole
    digit_first = plan.spec.model_copy(update={"model": "7b", "run_name": None})
    assert _run_name(digit_first, plan.shape) == "run-7b-4096-4x4"  # a DNS-1035 label starts with a letter
    digit_second = plan.spec.model_copy(update={"model": "q2", "run_name": None})
    assert _run_name(digit_second, plan.shape) == "q2-4096-4x4"  # only the first character must be a letter


@pytest.mark.parametrize(
    ("parallelism", "problem"),
    [
        ({"fsdp": 4, "tensor": 2}, "'fsdp=4 x tensor=2' multiplies to 8, not the 16 chips of one v6e 4x4 slice"),
        ({"fsdp": 3, "tensor": -1}, "'fsdp=3 x tensor=-1' multiplies to 3, not the 16 chips"),  # 16 % 3 != 0
        ({"fsdp": 32, "tensor": -1}, "'fsdp=32 x tensor=-1' multiplies to 32, not the 16 chips"),
        ({"fsdp": -1, "tensor": -1}, "'fsdp=-1 x tensor=-1' has more than one axis set to -1"),
        ({"fsdp": 0, "tensor": 16}, "raytrain.parallelism.fsdp: 0 is not a mesh size"),
        ({"fsdp": -2, "tensor": -8}, "raytrain.parallelism.fsdp: -2 is not a mesh size"),
        ({"fsdp": 4, "tensr": 4}, "raytrain.parallelism.tensr: 4 is not a MaxText ICI axis"),
    ],
)
def test_the_mesh_must_cover_the_slices_chips_exactly(parallelism, problem):
    assert problem in refusal(parallelism=parallelism)


def test_the_mesh_accepts_one_rest_axis_and_maxtexts_own_spelling():
    assert plan_of(parallelism={"fsdp": 4, "tensor": -1}).parallelism == {"fsdp": 4, "tensor": -1}
    assert plan_of(parallelism={"fsdp": -1}).parallelism == {"fsdp": -1}
    spelled = plan_of(parallelism={"ici_fsdp_parallelism": 2, "tensor": 8})
    assert spelled.parallelism == {"fsdp": 2, "tensor": 8}
    assert "ici_fsdp_parallelism=2" in spelled.maxtext_args() and "ici_tensor_parallelism=8" in spelled.maxtext_args()


@pytest.mark.parametrize(
    ("topology", "fix"),
    [
        ("4x4", "make the sizes multiply to 16 (e.g. fsdp=4, tensor=4), or set one axis to -1"),
        ("2x4", "make the sizes multiply to 8 (e.g. fsdp=2, tensor=4)"),
        ("2x2", "make the sizes multiply to 4 (e.g. fsdp=1, tensor=4)"),
        ("1x1", "make the sizes multiply to 1 (e.g. fsdp=1, tensor=1)"),
    ],
)
def test_a_wrong_mesh_suggests_one_that_multiplies_to_the_chips(topology, fix):
    """The small model (Qwen2.5 1.5B) at 1024 tokens fits down to one v6e chip, so the mesh is what fails."""
    overrides = {"model": "qwen2.5-1.5b", "max_target_length": 1024, "topology": topology}
    assert fix in refusal(parallelism={"fsdp": 3, "tensor": 5}, **overrides)


@pytest.mark.parametrize(
    ("arg", "problem"),
    [
        ("remat_policy", "raytrain.extraArgs[0]: 'remat_policy' is not a MaxText key=value setting"),
        ("Remat_policy=full", "'Remat_policy=full' is not a MaxText key=value setting"),
        ("9steps=1", "'9steps=1' is not a MaxText key=value setting"),
        ("run_name=x", "'run_name=x' repeats a setting the stack writes; set raytrain.runName instead"),
        ("dcn_data_parallelism=2", "repeats a setting the stack writes; set raytrain.slices instead"),
        ("ici_tensor_parallelism=2", "'ici_tensor_parallelism=2' sets the ICI mesh outside raytrain.parallelism"),
    ],
)
def test_extra_args_are_maxtext_settings_the_stack_does_not_write(arg, problem):
    assert problem in refusal(extra_args=[arg])


def test_extra_args_that_only_look_like_the_mesh_are_kept():
    kept = ["ici_note=1", "x_parallelism=2", "remat_policy=full"]
    assert plan_of(extra_args=kept).maxtext_args()[-3:] == kept
    assert "raytrain.extraArgs[1]" in refusal(extra_args=["remat_policy=full", "steps=1"])  # its own index


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"ray_cluster_name": "r" * 54}, "raytrain.rayClusterName: '" + "r" * 54 + "' is not a valid RayCluster name"),
        ({"ray_cluster_name": "Ray"}, "raytrain.rayClusterName: 'Ray' is not a valid RayCluster name"),
        ({"ray_cluster_name": "1ray"}, "at most 53 characters"),
        ({"run_name": "r" * 48}, "raytrain.runName: '" + "r" * 48 + "' is not a valid RayJob name"),
        ({"run_name": "9-run"}, "at most 47 characters (it also names the checkpoint folder)"),
        ({"namespace": "Team_A"}, "raytrain.namespace: 'Team_A' is not a valid Kubernetes name"),
        ({"ksaName": "Trainer!"}, "raytrain.ksaName: 'Trainer!' is not a valid Kubernetes name"),
    ],
)
def test_names_kuberay_and_kubernetes_refuse_are_refused_here(overrides, problem):
    assert problem in refusal(**overrides)


def test_names_at_kuberays_limits_are_accepted():
    """KubeRay: a RayCluster name has at most 53 characters, a RayJob's 47 (utils/constant.go)."""
    plan = plan_of(ray_cluster_name="r" * 53, run_name="j" * 47)
    assert (plan.spec.ray_cluster_name, plan.run_name) == ("r" * 53, "j" * 47)


@pytest.mark.parametrize("directory", ["/data", "/data/", "/data/runs", "gs://bucket/runs"])
def test_the_output_directory_is_on_the_checkpoint_bucket(directory):
    assert f"base_output_directory={directory}" in plan_of(output_directory=directory).maxtext_args()


@pytest.mark.parametrize("directory", ["/tmp/out", "/database", "data/", "gs:/bucket"])
def test_an_output_directory_off_the_bucket_is_refused(directory):
    assert f"raytrain.outputDirectory: '{directory}' is not on the checkpoint bucket" in refusal(
        output_directory=directory
    )


@pytest.mark.parametrize(
    ("directory", "problem"),
    [
        ("gs://goog-x/runs", "names bucket 'goog-x', which starts with 'goog', which Cloud Storage reserves"),
        ("gs://my-google-runs", "names bucket 'my-google-runs', which contains 'google' or a look-alike"),
        ("gs://Runs/x", "names bucket 'Runs', which is not a bucket name"),
    ],
)
def test_a_gs_output_directory_follows_the_bucket_rule(directory, problem):
    """Cloud Storage reserves `goog` prefixes (https://cloud.google.com/storage/docs/buckets#naming)."""
    assert f"raytrain.outputDirectory: '{directory}' {problem}" in refusal(output_directory=directory)


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        ({"build": "prebuilt"}, "raytrain.image.reference is required with build prebuilt"),
        ({"build": "prebuilt", "reference": "us-docker.pkg.dev/p/r/ray"}, "has no tag, so it pulls :latest"),
        ({"build": "prebuilt", "reference": "localhost:5000/ray"}, "'localhost:5000/ray' has no tag"),
        ({"build": "prebuilt", "reference": "ray:latest"}, "raytrain.image.reference: 'ray:latest' is not pinned"),
        ({"build": "prebuilt", "reference": "ray:stable"}, "'ray:stable' is not pinned"),
        ({"build": "prebuilt", "reference": "ray:-bad"}, "'ray:-bad' is not pinned"),
        ({"reference": "ray:2.49.1"}, "'ray:2.49.1' is only used with build prebuilt, not submit"),
        ({"build": "trigger", "reference": "ray:2.49.1"}, "is only used with build prebuilt, not trigger"),
        ({"repository": "Ray_Maxtext"}, "raytrain.image.repository: 'Ray_Maxtext' is not an Artifact Registry"),
        ({"tag": "nightly"}, "raytrain.image.tag: 'nightly' is not pinned"),
        ({"build": "trigger"}, "raytrain.image.source is required with build trigger"),
    ],
)
def test_a_moving_or_missing_image_is_refused(image, problem):
    assert problem in refusal(image=image)


def test_pinned_images_are_accepted():
    digest = "us-docker.pkg.dev/p/r/ray@sha256:" + "a" * 64
    assert plan_of(image={"build": "prebuilt", "reference": digest}).spec.image.reference == digest
    assert plan_of(image={"build": "prebuilt", "reference": "localhost:5000/ray:2.49.1"}).spec.image.reference
    assert plan_of(image={"tag": "v1.2.3"}).spec.image.tag == "v1.2.3"
    source = {"uri": "https://github.com/you/project"}
    assert plan_of(image={"build": "trigger", "source": source}).spec.image.source.uri == source["uri"]


def test_a_machine_type_needs_its_topology_and_a_generation_needs_a_ray_accelerator_type():
    assert "raytrain.machineType: 'ct6e-standard-4t' needs a topology; set raytrain.topology too" in refusal(
        machine_type="ct6e-standard-4t", topology=None
    )
    problem = refusal(tpu_generation="tpu7x", topology="2x2x1", parallelism=None)
    assert problem.endswith("has no Ray accelerator type in Ray's TPU support; use one of v4, v5e, v5p, v6e")


def test_a_system_pool_the_user_chose_is_kept_and_the_tutorials_otherwise():
    chosen = {**TUTORIAL["cluster"], "system_pool": {"machine_type": "e2-standard-8", "nodes": 2}}
    pool = plan_of(cluster=chosen).cluster.spec.system_pool
    assert (pool.machine_type, pool.nodes) == ("e2-standard-8", 2)
    pool = plan_of().cluster.spec.system_pool
    assert (pool.machine_type, pool.nodes) == ("n1-standard-16", 1)  # the tutorial's --machine-type


def test_a_long_repository_gets_a_hashed_build_account_id():
    """IAM: 6-30 characters. 'ray-maxtext-training-cluster-east-builder' has 41: the first 23 of the
    repository, a dash and 6 hex digits of the whole account's sha256."""
    import hashlib

    from tpu_stacks.raytrain.plan import builder_account_id

    account = "ray-maxtext-training-cluster-east-builder"
    digest = hashlib.sha256(account.encode()).hexdigest()[:6]
    assert builder_account_id("ray-maxtext-training-cluster-east") == f"ray-maxtext-training-cl-{digest}"
    assert (
        builder_account_id("a" * 22 + "-b")
        == f"{'a' * 22}-{hashlib.sha256(('a' * 22 + '-b-builder').encode()).hexdigest()[:6]}"
    )
    assert builder_account_id("r" * 22) == "r" * 22 + "-builder"  # 30: the limit itself fits


def test_the_slices_capacity_settings_reach_every_pool():
    plan = plan_of(slices=2, reservation="res-1", threads_per_core=2)
    assert [(p.reservation, p.reservation_affinity, p.threads_per_core) for p in plan.pools] == [
        ("res-1", "SPECIFIC_RESERVATION", 2),
        ("res-1", "SPECIFIC_RESERVATION", 2),
    ]
    assert plan_of(reservation="").pool.reservation is None  # an empty name is no reservation


def test_worker_memory_steps_up_past_a_multiple_of_8_gib_by_a_few_bytes():
    """12 GiB shards need exactly 2 x 12 + 16 = 40 GiB; three bytes more need the next step, 48 GiB."""
    from tpu_stacks.catalog.models import custom_model

    plan = plan_of()
    exact = plan.model_copy(update={"model": custom_model("exact", 4 * GiB)})  # 4 GiB params x 12 B / 4 hosts
    assert (exact.checkpoint_shard_bytes, exact.worker_memory) == (12 * GiB, "40Gi")
    over = plan.model_copy(update={"model": custom_model("over", 4 * GiB + 1)})
    assert (over.checkpoint_shard_bytes, over.worker_memory) == (12 * GiB + 3, "48Gi")


def test_the_mesh_refusal_counts_what_the_mesh_spans():
    """MaxText's mesh spans JAX devices: one per chip up to v6e, two per tpu7x chip ([D-7x]),
    so a 4-chip tpu7x 2x2x1 slice is 8 devices; one chip is said in the singular."""
    from tpu_stacks.catalog.tpu import slice_shape
    from tpu_stacks.raytrain.plan import _parallelism

    spec = RayTrainSpec(model="llama3-8b", parallelism={"fsdp": 2, "tensor": 2})
    with pytest.raises(UserError, match=r"multiplies to 4, not the 8 JAX devices of one tpu7x 2x2x1 slice"):
        _parallelism(spec, slice_shape("tpu7x", "2x2x1"), 8)
    with pytest.raises(UserError, match=r"multiplies to 4, not the 1 chip of one v6e 1x1 slice"):
        _parallelism(spec, slice_shape("v6e", "1x1"), 1)
