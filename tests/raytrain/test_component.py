"""RayTrainStack under mocks: the Ray Train + MaxText tutorial's cluster, bucket, image repository,
RayCluster and RayJob, derived from the catalogue; multislice as config; every refusal before any
resource."""

import shlex
import subprocess
import sys

import pytest
from pulumi.provider.experimental.analyzer import Analyzer

from tests.mocks import autonamed, capture, project_roles, refused
from tests.policies.harness import capture as capture_registrations
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.raytrain.image import submit_command
from tpu_stacks.raytrain.plan import builder_account_id, plan_raytrain
from tpu_stacks.raytrain.spec import RayTrainSpec

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"
RAY_CLUSTER = "kubernetes:ray.io/v1:RayCluster"
RAY_JOB = "kubernetes:ray.io/v1:RayJob"
REPOSITORY = "gcp:artifactregistry/repository:Repository"
TUTORIAL = {
    "cluster": {"project": "proj", "location": "us-east5-b", "release_channel": "RAPID"},
    "model": "llama3-8b",
    "tpu_generation": "v6e",
    "topology": "4x4",
    "parallelism": {"fsdp": 4, "tensor": 4},
    "run_name": "rayjob-8b-4096-tp4-4x4",
}
# The tutorial's `ray job submit` arguments after the script ([D-GKE-RAY]).
TUTORIAL_MAXTEXT_ARGS = [
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


def plan_of(**overrides):
    args = {**TUTORIAL, **overrides}
    section = {k: v for k, v in args.items() if k != "cluster" and v is not None}
    return plan_raytrain(RayTrainSpec.model_validate(section), ClusterSpec.model_validate(args["cluster"]))


def build(**overrides):
    args = {**TUTORIAL, **overrides}
    return capture(lambda: RayTrainStack("rt", {k: v for k, v in args.items() if v is not None}))


@pytest.fixture(scope="module")
def mocks():
    return build()


def one(mocks, typ, name):
    return mocks.named(typ, name).inputs


def worker_group(mocks, name="rt-ray-cluster"):
    (group,) = one(mocks, RAY_CLUSTER, name)["spec"]["workerGroupSpecs"]
    return group


def tpu_pools(mocks):
    """The TPU node pools by name: the mocks record them in registration order, which is whichever output
    resolved first (two slices' pools came either way round, failing about one run in five)."""
    return sorted((p.inputs for p in mocks.of_type(POOL) if p.inputs["name"] != "system"), key=lambda p: p["name"])


def test_cluster_has_the_ray_and_gcs_fuse_add_ons_and_workload_identity(mocks):
    cluster = one(mocks, CLUSTER, "rt-cluster")
    assert cluster["addonsConfig"]["rayOperatorConfigs"] == [{"enabled": True}]
    assert cluster["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "proj.svc.id.goog"}
    system = one(mocks, POOL, "rt-cluster-system")
    assert system["nodeConfig"]["machineType"] == "n1-standard-16"  # the tutorial's; holds the 8-CPU head


def test_tpu_pool_is_the_tutorials_v6e_16_derived_from_the_catalogue(mocks):
    (pool,) = tpu_pools(mocks)
    assert pool["name"] == "v6e-16"
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-4t"
    assert pool["nodeCount"] == 4
    assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert pool["nodeConfig"]["advancedMachineFeatures"] == {"threadsPerCore": 1}
    assert pool["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_checkpoint_bucket_is_hardened_and_granted_to_the_ksa_only(mocks):
    bucket = one(mocks, "gcp:storage/bucket:Bucket", "rt-checkpoints")
    assert (bucket["storageClass"], bucket["location"]) == ("STANDARD", "US-EAST5")
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["forceDestroy"] is False  # kept on destroy unless asked
    grant = one(mocks, "gcp:storage/bucketIAMMember:BucketIAMMember", "rt-identity-bucket-0")
    assert grant["role"] == "roles/storage.objectUser"
    assert grant["bucket"] == autonamed("rt-checkpoints")
    assert grant["member"] == (
        "principal://iam.googleapis.com/projects/123456789012/locations/global/"
        "workloadIdentityPools/proj.svc.id.goog/subject/ns/raytrain/sa/raytrain"
    )
    # Nothing project-wide but the nodes' minimal GKE role and the image builder's log writing (its build
    # logs go to Cloud Logging: raytrain/image.py).
    assert project_roles(mocks) == ["roles/logging.logWriter"]


def test_submit_builds_as_the_builder_account_from_its_own_source_bucket(mocks):
    """`gcloud builds submit` runs as the stack's builder, never the project's default build account: push
    to this repository, write logs, read the uploaded source (Cloud Build, user-specified accounts)."""
    account = one(mocks, "gcp:serviceaccount/account:Account", "rt-image-builder")
    assert account["accountId"] == builder_account_id("ray-maxtext-tpu-cluster")  # <= 30 characters
    push = one(mocks, "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "rt-image-builder-push")
    assert push["role"] == "roles/artifactregistry.writer"
    assert one(mocks, "gcp:projects/iAMMember:IAMMember", "rt-image-builder-logs")["role"] == "roles/logging.logWriter"
    source = one(mocks, "gcp:storage/bucketIAMMember:BucketIAMMember", "rt-image-builder-source")
    assert source["role"] == "roles/storage.objectViewer"
    assert source["bucket"] == autonamed("rt-build-source")
    bucket = one(mocks, "gcp:storage/bucket:Bucket", "rt-build-source")
    assert bucket["publicAccessPrevention"] == "enforced" and bucket["uniformBucketLevelAccess"] is True
    assert mocks.of_type("gcp:cloudbuild/trigger:Trigger") == []


def test_the_submit_command_names_the_account_and_the_staging_bucket():
    command = submit_command("img:tag", "proj", "us-east5", "projects/proj/serviceAccounts/b@proj.iam", "bkt")
    assert command.endswith(
        " --service-account=projects/proj/serviceAccounts/b@proj.iam --gcs-source-staging-dir=gs://bkt/source"
    )


def test_artifact_registry_repository_with_immutable_tags(mocks):
    repository = one(mocks, REPOSITORY, "rt-registry")
    assert (repository["format"], repository["mode"], repository["location"]) == (
        "DOCKER",
        "STANDARD_REPOSITORY",
        "us-east5",
    )
    assert repository["dockerConfig"] == {"immutableTags": True}
    pull = one(mocks, "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "rt-registry-nodes-pull")
    assert pull["role"] == "roles/artifactregistry.reader"
    assert (
        pull["member"] == "serviceAccount:tpu-cluster-nodes@proj.iam.gserviceaccount.com"
    )  # the nodes, not the compute default


def test_head_group_is_the_tutorials(mocks):
    spec = one(mocks, RAY_CLUSTER, "rt-ray-cluster")["spec"]
    assert spec["rayVersion"] == "2.49.1"
    head = spec["headGroupSpec"]
    assert head["rayStartParams"] == {}
    pod = head["template"]["spec"]
    (container,) = pod["containers"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {
        "gcs-server": 6379,
        "dashboard": 8265,
        "client": 10001,
    }
    assert container["resources"] == {
        "requests": {"cpu": "8", "memory": "16Gi"},
        "limits": {"cpu": "8", "memory": "16Gi"},
    }
    assert (
        container["image"]
        == "us-east5-docker.pkg.dev/proj/ray-maxtext-tpu-cluster/ray-maxtext:ray2.49.1-maxtext-404cf1de70"
    )
    assert pod["serviceAccountName"] == "raytrain"
    assert "nodeSelector" not in pod  # the head runs on the CPU system pool


def test_worker_group_takes_every_chip_of_each_host_of_the_slice(mocks):
    group = worker_group(mocks)
    assert (group["groupName"], group["numOfHosts"], group["replicas"]) == ("tpu-group", 4, 1)
    assert (group["minReplicas"], group["maxReplicas"]) == (1, 1)  # KubeRay needs both without autoscaling
    pod = group["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["requests"]["google.com/tpu"] == "4"
    assert container["resources"]["limits"]["google.com/tpu"] == "4"
    assert container["resources"]["limits"]["memory"] == "64Gi"  # derived, not the tutorial's 200G
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }
    env = {variable["name"]: variable["value"] for variable in container["env"]}
    assert env == {"JAX_PLATFORMS": "tpu", "ENABLE_PJRT_COMPATIBILITY": "true", "HF_XET_CHUNK_CACHE_SIZE_BYTES": "0"}
    assert container["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["privileged"] is False


def test_gcs_fuse_at_data_with_the_cache_volume_the_driver_uses(mocks):
    spec = one(mocks, RAY_CLUSTER, "rt-ray-cluster")["spec"]
    for template in (spec["headGroupSpec"]["template"], worker_group(mocks)["template"]):
        volumes = {v["name"]: v for v in template["spec"]["volumes"]}
        assert "gcs-fuse-cache" not in volumes  # the tutorial's name, which the driver ignores
        assert volumes["gke-gcsfuse-cache"]["emptyDir"]["medium"] == "Memory"
        assert volumes["gke-gcsfuse-cache"]["emptyDir"]["sizeLimit"]
        fuse = volumes["gcs-fuse-csi-ephemeral"]["csi"]
        assert fuse["driver"] == "gcsfuse.csi.storage.gke.io"
        assert fuse["volumeAttributes"]["bucketName"] == autonamed("rt-checkpoints")
        options = fuse["volumeAttributes"]["mountOptions"].split(",")
        assert "implicit-dirs" in options and "uid=1000" in options
        assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"
        (container,) = template["spec"]["containers"]
        assert {(m["name"], m["mountPath"]) for m in container["volumeMounts"]} == {
            ("gcs-fuse-csi-ephemeral", "/data"),
            ("dshm", "/dev/shm"),
            ("tmp", "/tmp"),  # writable paths of a read-only root filesystem (k8s.security)
            ("cache", "/home/ray/.cache"),
        }
        notes = template["metadata"]["annotations"]
        assert notes["gke-gcsfuse/volumes"] == "true"
        for key in ("cpu-limit", "memory-limit", "ephemeral-storage-limit"):
            assert notes[f"gke-gcsfuse/{key}"] not in ("0", ""), key  # bounded sidecar
    worker_cache = {v["name"]: v for v in worker_group(mocks)["template"]["spec"]["volumes"]}["gke-gcsfuse-cache"]
    assert worker_cache["emptyDir"]["sizeLimit"] == "25Gi"  # one host's checkpoint shard of Llama 3 8B


def test_rayjob_submits_the_tutorials_training_to_that_cluster(mocks):
    job = one(mocks, RAY_JOB, "rt-ray-job")
    assert job["metadata"]["name"] == "rayjob-8b-4096-tp4-4x4"
    spec = job["spec"]
    assert spec["clusterSelector"] == {"ray.io/cluster": "maxtext-tpu-cluster"}
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["shutdownAfterJobFinishes"] is False
    assert spec["activeDeadlineSeconds"] == 240 * 60
    assert "backoffLimit" not in spec  # KubeRay refuses retries with clusterSelector
    command = shlex.split(spec["entrypoint"])
    assert command[:2] == ["python", "/app/raytrain_trainer.py"]
    assert command[-len(TUTORIAL_MAXTEXT_ARGS) :] == TUTORIAL_MAXTEXT_ARGS
    flags = [arg for arg in command if arg.startswith("--")]
    assert flags == [
        "--accelerator-type=TPU-V6E",
        "--topology=4x4",
        "--hosts-per-slice=4",
        "--chips-per-host=4",
        "--slices=1",
        "--max-failures=1",
        "--storage-path=/data/ray-train",
    ]


def test_workloads_carry_the_sizing_inputs_for_the_policy_pack(mocks):
    for typ, name in ((RAY_CLUSTER, "rt-ray-cluster"), (RAY_JOB, "rt-ray-job")):
        notes = one(mocks, typ, name)["metadata"]["annotations"]
        assert notes["tpu-stacks.dev/workload"] == "train"
        assert notes["tpu-stacks.dev/model"] == "meta-llama/Meta-Llama-3-8B"
        assert notes["tpu-stacks.dev/parallelism"] == "fsdp=4,tensor=4"
        assert notes["tpu-stacks.dev/context"] == "4096"


def test_two_slices_are_two_pools_and_two_replicas():
    mocks = build(slices=2, run_name="two-slices")
    pools = tpu_pools(mocks)
    assert [p["name"] for p in pools] == ["v6e-16-1", "v6e-16-2"]
    for pool in pools:
        assert pool["nodeCount"] == 4 and pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    group = worker_group(mocks)
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"], group["numOfHosts"]) == (2, 2, 2, 4)
    (container,) = group["template"]["spec"]["containers"]
    assert {"name": "MEGASCALE_NUM_SLICES", "value": "2"} in container["env"]
    command = shlex.split(one(mocks, RAY_JOB, "rt-ray-job")["spec"]["entrypoint"])
    assert "--slices=2" in command and "dcn_data_parallelism=2" in command
    assert "ici_fsdp_parallelism=4" in command  # the ICI mesh is per slice


def test_autopilot_declares_no_pools_and_keeps_the_ray_operator():
    mocks = build(cluster={"project": "proj", "location": "us-east5", "mode": "autopilot"})
    assert tpu_pools(mocks) == [] and not mocks.of_type(POOL)
    cluster = one(mocks, CLUSTER, "rt-cluster")
    assert cluster["enableAutopilot"] is True
    assert cluster["addonsConfig"] == {"rayOperatorConfigs": [{"enabled": True}]}
    assert worker_group(mocks)["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "4x4"


def test_sized_slice_and_default_mesh_when_only_the_model_is_given():
    mocks = build(topology=None, parallelism=None, run_name=None)
    (pool,) = tpu_pools(mocks)
    assert pool["nodeConfig"]["machineType"] == "ct6e-standard-8t"  # the smallest v6e slice that holds it: 2x4
    group = worker_group(mocks)
    assert group["numOfHosts"] == 1
    job = one(mocks, RAY_JOB, "rt-ray-job")
    assert job["metadata"]["name"] == "llama3-8b-4096-2x4"
    assert "ici_fsdp_parallelism=8" in shlex.split(job["spec"]["entrypoint"])


def test_cloud_build_trigger_builds_the_image_as_its_own_account():
    mocks = build(image={"build": "trigger", "source": {"uri": "https://github.com/acme/tpu-stacks"}})
    trigger = one(mocks, "gcp:cloudbuild/trigger:Trigger", "rt-image-trigger")
    assert trigger["sourceToBuild"] == {
        "uri": "https://github.com/acme/tpu-stacks",
        "ref": "refs/heads/main",
        "repoType": "GITHUB",
    }
    assert trigger["filename"] == "components/tpu_stacks/raytrain/trainer_image/cloudbuild.yaml"
    assert trigger["substitutions"]["_CONTEXT"] == "components/tpu_stacks/raytrain/trainer_image"
    assert trigger["substitutions"]["_MAXTEXT_REVISION"] == "404cf1de701460671c4924521a70f07f26aa7d1c"
    assert trigger["substitutions"]["_IMAGE"].startswith(
        "us-east5-docker.pkg.dev/proj/ray-maxtext-tpu-cluster/ray-maxtext:"
    )
    assert trigger["serviceAccount"].startswith("projects/proj/serviceAccounts/")
    push = one(mocks, "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "rt-image-builder-push")
    assert push["role"] == "roles/artifactregistry.writer"
    logs = one(mocks, "gcp:projects/iAMMember:IAMMember", "rt-image-builder-logs")
    assert logs["role"] == "roles/logging.logWriter"


def test_prebuilt_image_is_used_as_given_and_nothing_is_built():
    reference = "us-docker.pkg.dev/acme/train/ray-maxtext:2025-10-29"
    mocks = build(image={"build": "prebuilt", "reference": reference})
    assert not mocks.of_type(REPOSITORY)
    (container,) = worker_group(mocks)["template"]["spec"]["containers"]
    assert container["image"] == reference


def test_interactive_only_declares_no_rayjob():
    mocks = build(submit_job=False)
    assert mocks.of_type(RAY_JOB) == [] and mocks.of_type(RAY_CLUSTER)


@pytest.mark.parametrize(
    "overrides,message",
    [
        (
            {"parallelism": {"fsdp": 4, "tensor": 2}},
            "raytrain.parallelism: 'fsdp=4 x tensor=2' multiplies to 8, not the 16 chips of one v6e 4x4 slice",
        ),
        (
            {"parallelism": {"fsdp": -1, "tensor": -1}},
            "raytrain.parallelism: 'fsdp=-1 x tensor=-1' has more than one axis set to -1",
        ),
        ({"parallelism": {"fsdp": 4, "tensr": 4}}, "raytrain.parallelism.tensr: 4 is not a MaxText ICI axis"),
        ({"model": "llama3.1-70b"}, "raytrain.topology: '4x4' cannot hold meta-llama/Llama-3.1-70B: needs"),
        ({"model": "llama3.1-405b", "topology": None}, "raytrain.model: 'meta-llama/Llama-3.1-405B' fits no v6e slice"),
        ({"model": "acme/unknown"}, "raytrain.model: 'acme/unknown' is not in the model catalogue"),
        ({"topology": "4x9"}, "raytrain.topology: '4x9' is not a v6e topology"),
        (
            {"tpu_generation": "tpu7x", "topology": "2x2x1", "parallelism": None},
            "raytrain.tpuGeneration: 'tpu7x' has no Ray accelerator type",
        ),
        ({"run_name": "My_Run"}, "raytrain.runName: 'My_Run' is not a valid RayJob name"),
        ({"output_directory": "/tmp/out"}, "raytrain.outputDirectory: '/tmp/out' is not on the checkpoint bucket"),
        (
            {"output_directory": "gs://goog-x/runs"},
            "'gs://goog-x/runs' names bucket 'goog-x', which starts with 'goog'",
        ),
        (
            {"extra_args": ["steps=5"]},
            "raytrain.extraArgs[0]: 'steps=5' repeats a setting the stack writes; set raytrain.steps instead",
        ),
        ({"extra_args": ["ici_data_parallelism=2"]}, "sets the ICI mesh outside raytrain.parallelism"),
        (
            {"image": {"build": "prebuilt", "reference": "rayproject/ray:latest"}},
            "raytrain.image.reference: 'rayproject/ray:latest' is not pinned",
        ),
        ({"image": {"build": "prebuilt"}}, "raytrain.image.reference is required with build prebuilt"),
        ({"image": {"build": "trigger"}}, "raytrain.image.source is required with build trigger"),
        ({"image": {"tag": "latest"}}, "raytrain.image.tag: 'latest' is not pinned"),
        (
            {"cluster": {**TUTORIAL["cluster"], "addons": {"ray_operator": False}}},
            "cluster.addons.rayOperator: False leaves RayTrainStack without a KubeRay operator",
        ),
        (
            {"cluster": {**TUTORIAL["cluster"], "addons": {"gcs_fuse": False}}},
            "cluster.addons.gcsFuse: False is required by RayTrainStack",
        ),
        (
            {"cluster": {**TUTORIAL["cluster"], "slices": [{"generation": "v6e", "topology": "2x2"}]}},
            "cluster.slices: '1 slice(s)' are derived from raytrain.model; remove cluster.slices",
        ),
        ({"steps": 0}, "raytrain.steps: 0 is not accepted"),
        (
            {"machine_type": "ct6e-standard-4t", "topology": None},
            "raytrain.machineType: 'ct6e-standard-4t' needs a topology",
        ),
    ],
)
def test_errors_before_any_resource(overrides, message):
    args = {**TUTORIAL, **overrides}
    assert message in refused(lambda: RayTrainStack("bad", {k: v for k, v in args.items() if v is not None}))


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"spot": True, "reservation": "res-1"}, "raytrain.spot: True cannot consume a reservation"),
        ({"reservation": "Res_1"}, "raytrain.reservation: 'Res_1' is not a reservation name"),
        (
            {"cluster": {**TUTORIAL["cluster"], "location": "nowhere"}},
            "cluster.location: 'nowhere' is neither a zone nor a region",
        ),
    ],
)
def test_cluster_refusals_name_the_key_the_user_wrote(overrides, message):
    args = {**TUTORIAL, **overrides}
    assert message in refused(lambda: RayTrainStack("bad", {k: v for k, v in args.items() if v is not None}))


def test_a_system_pool_the_user_chose_is_kept():
    mocks = build(cluster={**TUTORIAL["cluster"], "system_pool": {"nodes": 2}})
    system = one(mocks, POOL, "rt-cluster-system")
    assert (system["nodeConfig"]["machineType"], system["nodeCount"]) == ("e2-standard-4", 2)


def test_decisions_load_no_provider_sdk():
    check = (
        "import sys, tpu_stacks.raytrain.plan, tpu_stacks.raytrain.spec, tpu_stacks.raytrain.sources; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_plugin_schema_lists_the_stack_with_its_outputs():
    from tests.test_plugin import entry_module

    result = Analyzer("tpu-stacks").analyze(entry_module()["COMPONENTS"])
    stack = result["component_definitions"]["RayTrainStack"]
    assert {"cluster", "model", "topology", "slices", "parallelism", "image"} <= set(stack.inputs)
    assert not stack.inputs["model"].optional
    assert {
        "rayClusterName",
        "rayJobName",
        "image",
        "imageBuildCommand",
        "checkpointBucket",
        "checkpointPath",
        "dashboardPortForward",
        "jobSubmitCommand",
        "trainingSlice",
        "maxtextArgs",
        "namespace",
        "clusterName",
        "clusterEndpoint",
        "kubeconfig",
        "monitoring",  # the dashboard and the console pages to open first
    } == set(stack.outputs)
    assert "TrainingSlice" in result["type_definitions"]


@pytest.mark.parametrize("slices", [1, 2])
def test_pulumi_waits_for_the_ray_pods_after_the_pools_then_for_the_run_to_start(slices):
    """Custom resources are reported ready at once unless they say what to wait for (pulumi.com/waitFor)."""
    resources = {r.name: r for r in capture_registrations(lambda: RayTrainStack("rt", {**TUTORIAL, "slices": slices}))}
    ray_cluster, ray_job = resources["rt-ray-cluster"], resources["rt-ray-job"]
    assert ray_cluster.props["metadata"]["annotations"]["pulumi.com/waitFor"] == "jsonpath={.status.state}=ready"
    assert ray_job.props["metadata"]["annotations"]["pulumi.com/waitFor"] == (
        "jsonpath={.status.jobDeploymentStatus}=Running"
    )
    # a TPU node (15) + the training image (10); the Ray pods carry no probe of ours
    assert ray_cluster.custom_timeouts == ray_job.custom_timeouts == {"create": "25m", "update": "25m"}
    pools = [r for r in resources.values() if r.type == "gcp:container/nodePool:NodePool" and "system" not in r.name]
    assert len(pools) == slices
    assert all(pool.urn in ray_cluster.dependencies for pool in pools)
    assert ray_cluster.urn in ray_job.dependencies
    # the model annotations the pack reads are still there
    assert ray_cluster.props["metadata"]["annotations"]["tpu-stacks.dev/engine"] == "maxtext"
