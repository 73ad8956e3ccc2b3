"""The `raytrain` stacks offline, as `tpu-stacks plan` runs them: the tutorial's objects validate
strictly against the KubeRay v1.7.0 CRDs, the policy pack finds nothing, two slices are config,
and a wrong setting is one line naming the `tpu-stacks:raytrain` key."""

from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tests.shipped import shipped
from tpu_stacks.raytrain.sources import build_inputs_digest
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.policy import run_policy_pack
from tpu_stacks_preview.schema import VENDORED_CRDS, validate_objects

ROOT = Path(__file__).resolve().parents[2]
CRDS = VENDORED_CRDS  # the schemas the planner ships


@cache
def up(stack: str):
    capture = shipped(stack)
    assert capture.error is None, capture.error
    return capture


def objects(stack: str) -> dict[str, dict]:
    return {manifest.kind: manifest.object for manifest in render_manifests(up(stack))}


def record(stack: str, type_token: str):
    (found,) = up(stack).of_type(type_token)
    return found


def test_objects_pass_strict_schema_validation_against_the_kuberay_crds():
    for stack in ("raytrain", "raytrain-multislice"):
        manifests = render_manifests(up(stack))
        kinds = {"Namespace", "ServiceAccount", "RayCluster", "RayJob", "PodMonitoring", "NetworkPolicy"}
        assert {m.kind for m in manifests} == kinds  # PodMonitoring: Ray's metrics scraped
        # deny-all, head, workers, job submitter: four NetworkPolicies
        report = validate_objects(manifests, kubernetes_version="1.33", crd_dir=CRDS)
        assert report.problems == [] and report.validated == 5 + 4 and not report.notices, report


def test_tutorial_objects_as_the_api_server_gets_them():
    rendered = objects("raytrain")
    cluster, job = rendered["RayCluster"], rendered["RayJob"]
    (group,) = cluster["spec"]["workerGroupSpecs"]
    assert (group["numOfHosts"], group["replicas"]) == (4, 1) and type(group["numOfHosts"]) is int
    (worker,) = group["template"]["spec"]["containers"]
    assert worker["resources"]["limits"]["google.com/tpu"] == "4"
    assert group["template"]["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }
    volumes = [v["name"] for v in group["template"]["spec"]["volumes"]]
    assert "gke-gcsfuse-cache" in volumes and "gcs-fuse-cache" not in volumes
    assert job["metadata"]["name"] == "rayjob-8b-4096-tp4-4x4"
    assert job["spec"]["clusterSelector"] == {"ray.io/cluster": "maxtext-tpu-cluster"}
    for arg in (
        "base_output_directory=/data/",
        "dataset_type=synthetic",
        "per_device_batch_size=1",
        "max_target_length=4096",
        "model_name=llama3-8b",
        "steps=100",
        "ici_fsdp_parallelism=4",
        "ici_tensor_parallelism=4",
        "run_name=rayjob-8b-4096-tp4-4x4",
    ):
        assert f" {arg}" in job["spec"]["entrypoint"]
    assert cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "us-east5-docker.pkg.dev/my-tpu-project/ray-maxtext/ray-maxtext:ray2.49.1-maxtext-404cf1de70-"
    )


def test_rayjob_follows_its_cluster_and_is_replaced_not_patched():
    ray_cluster, ray_job = (
        record("raytrain", "kubernetes:ray.io/v1:RayCluster"),
        record("raytrain", "kubernetes:ray.io/v1:RayJob"),
    )
    assert ray_cluster.urn in ray_job.dependencies
    assert ray_job.options.delete_before_replace is True


def test_infrastructure_matches_the_tutorial():
    pools = {r.inputs["name"]: r.inputs for r in up("raytrain").of_type("gcp:container/nodePool:NodePool")}
    assert pools["v6e-16"]["nodeCount"] == 4 and pools["v6e-16"]["nodeConfig"]["machineType"] == "ct6e-standard-4t"
    assert pools["v6e-16"]["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert pools["v6e-16"]["nodeConfig"]["advancedMachineFeatures"] == {"threadsPerCore": 1}
    assert pools["system"]["nodeConfig"]["machineType"] == "n1-standard-16"
    addons = record("raytrain", "gcp:container/cluster:Cluster").inputs["addonsConfig"]
    assert addons["rayOperatorConfigs"] == [{"enabled": True}] and addons["gcsFuseCsiDriverConfig"] == {"enabled": True}
    grants = {r.name: r.inputs for r in up("raytrain").of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    grant = grants["raytrain-identity-bucket-0"]
    assert grant["role"] == "roles/storage.objectUser" and grant["member"].startswith("principal://")
    source = grants["raytrain-image-builder-source"]  # the builder reads the uploaded source, nothing else
    assert source["role"] == "roles/storage.objectViewer" and source["bucket"] != grant["bucket"]
    assert record("raytrain", "gcp:artifactregistry/repository:Repository").inputs["format"] == "DOCKER"


def test_outputs_give_the_interactive_path_and_the_build():
    outputs = up("raytrain").stack_outputs
    assert outputs["dashboard"] == "kubectl port-forward -n raytrain svc/maxtext-tpu-cluster-head-svc 8265:8265"
    assert outputs["jobSubmit"].startswith(
        "ray job submit --address http://localhost:8265 -- python /app/raytrain_trainer.py "
    )
    assert outputs["imageBuildCommand"].startswith(
        "gcloud builds submit components/tpu_stacks/raytrain/trainer_image --project=my-tpu-project "
    )
    assert "--config=components/tpu_stacks/raytrain/trainer_image/cloudbuild.yaml " in outputs["imageBuildCommand"]
    assert f"_IMAGE={outputs['image']}," in outputs["imageBuildCommand"]
    # Cloud Build runs as the stack's builder account, not the project's default build account.
    accounts = [r.name for r in up("raytrain").of_type("gcp:serviceaccount/account:Account")]
    assert "raytrain-image-builder" in accounts
    assert " --service-account=projects/my-tpu-project/serviceAccounts/" in outputs["imageBuildCommand"]
    assert " --gcs-source-staging-dir=gs://" in outputs["imageBuildCommand"]
    assert outputs["image"].endswith(f"-{build_inputs_digest()}")
    assert outputs["rayJob"] == "rayjob-8b-4096-tp4-4x4"
    assert outputs["checkpointPath"].endswith("/rayjob-8b-4096-tp4-4x4/checkpoints")


def test_two_slices_are_config_not_a_rewrite():
    pools = sorted(r.inputs["name"] for r in up("raytrain-multislice").of_type("gcp:container/nodePool:NodePool"))
    assert pools == ["system", "v6e-16-1", "v6e-16-2"]
    (group,) = objects("raytrain-multislice")["RayCluster"]["spec"]["workerGroupSpecs"]
    assert (group["replicas"], group["numOfHosts"]) == (2, 4)


def test_policy_pack_finds_nothing():
    for stack in ("raytrain", "raytrain-multislice"):
        preview = shipped(stack, preview=True)
        assert preview.error is None, preview.error
        result = run_policy_pack(ROOT / "policies", preview, transport="in-process")
        # Only the advice that the shipped stack's control plane is open (no networks to authorize are
        # known for a stack file that anyone may deploy; docs/security.md).
        found = [(v.policy, v.enforcement) for v in result.violations]
        assert found == [("control-plane-restricted", "advisory")], result.violations


def test_image_tag_follows_the_images_own_files(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    first = build_inputs_digest(tmp_path)
    (tmp_path / "raytrain_trainer.py").write_text("print('changed')\n")
    assert build_inputs_digest(tmp_path) != first


@pytest.mark.parametrize(
    "change,message",
    [
        (
            {"parallelism": {"fsdp": 4, "tensor": 2}},
            "tpu-stacks:raytrain.parallelism: 'fsdp=4 x tensor=2' multiplies to 8, not the 16 chips of one v6e 4x4 slice",
        ),
        ({"model": "llama3.1-70b"}, "tpu-stacks:raytrain.topology: '4x4' cannot hold meta-llama/Llama-3.1-70B: needs"),
        (
            {"paralelism": {"fsdp": 16}},
            "tpu-stacks:raytrain.paralelism: {'fsdp': 16} is not a known setting; did you mean 'parallelism'?",
        ),
    ],
)
def test_a_wrong_setting_is_one_line_naming_the_key(project, change, message):
    document = yaml.safe_load((ROOT / "Pulumi.raytrain.yaml").read_text())
    section = document["config"]["tpu-stacks:raytrain"]
    section.pop("parallelism") if "paralelism" in change else None
    section.update(change)
    (project / "Pulumi.bad.yaml").write_text(yaml.safe_dump(document))
    result = tpu_stacks("plan", "--cwd", str(project), "--stack", "bad")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [
        line
        for line in result.stderr.splitlines()
        if line.startswith("tpu-stacks: ") and not line.endswith("...") and " done in " not in line
    ]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr
