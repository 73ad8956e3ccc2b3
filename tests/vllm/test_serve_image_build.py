"""The multi-host server image's build: the command a user runs is the one the stack computes, it passes
every substitution cloudbuild.yaml asks for (Cloud Build's MUST_MATCH refuses a missing or an extra one),
and it can run while `pulumi up` waits, because the stack creates the registry before the slice.

Cloud Build's `substitution_option: MUST_MATCH` fails a build whose `--substitutions` and config
`${_NAME}` references differ (https://cloud.google.com/build/docs/configuring-builds/substitute-variable-values,
"Dynamic substitutions" / `ALLOW_LOOSE`); nothing here runs Cloud Build, so the test compares the names.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

from tests.shipped import ROOT, shipped
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.ray_serve import RAY_SERVE_VERSION
from tpu_stacks.vllm.multihost_plan import SERVE_IMAGE_DIR, SERVE_IMAGE_REVISION, image_build_command
from tpu_stacks.vllm.spec import VLLM_IMAGE

STACK = "vllm-405b"
PROJECT, REGION = "my-tpu-project", "us-central1"
ACCOUNT = "gcp:serviceaccount/account:Account"
LOGGED = "the multi-host server image: "
IMAGE_DIR = ROOT / SERVE_IMAGE_DIR


def commented_command(path: Path) -> str:
    """The `gcloud builds submit` command in a stack file's comment, its `\\` continuations joined."""
    lines = [line.removeprefix("#").strip() for line in path.read_text().splitlines() if line.startswith("#")]
    start = next(i for i, line in enumerate(lines) if line.startswith("gcloud builds submit"))
    command = []
    for line in lines[start:]:
        command.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            break
    return " ".join(command)


def substitution_keys(command: str) -> set[str]:
    values = re.search(r"--substitutions=(\S+)", command)
    assert values is not None, command
    return {pair.split("=", 1)[0] for pair in values.group(1).split(",")}


def test_the_stack_files_command_is_the_one_the_stack_logs_and_computes():
    """The build runs in the stack's project and region as its builder account, the source staged in its bucket
    (gcp/cloud_build.py, SGLang's rule too); the stack file shows the command with the bucket's random suffix."""
    capture = shipped(STACK)
    assert capture.ok, capture.error
    logged = [log.message.removeprefix(LOGGED) for log in capture.logs if log.message.startswith(LOGGED)]
    assert len(logged) == 1, [log.message for log in capture.logs]
    service = next(r for r in capture.resources if r.inputs.get("kind") == "RayService")
    head = service.inputs["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    (account,) = [r for r in capture.resources if r.type == ACCOUNT and r.name.endswith("-image-builder")]
    assert account.inputs["accountId"] == "vllm-tpu-vllm-405b-builder"
    email = f"projects/{PROJECT}/serviceAccounts/{account.inputs['accountId']}@{PROJECT}.iam.gserviceaccount.com"
    staged = re.search(r"--gcs-source-staging-dir=gs://(vllm-build-source-[0-9a-f]+)/source$", logged[0])
    assert staged is not None, logged[0]
    assert logged[0] == image_build_command(head["image"], VLLM_IMAGE, PROJECT, REGION, email, staged.group(1))
    shown = logged[0].replace(staged.group(1), "vllm-build-source-<suffix>")
    assert commented_command(ROOT / f"Pulumi.{STACK}.yaml") == shown
    # the builder may push to the stack's registry, write logs and read the staged source
    roles = {r.inputs.get("role") for r in capture.resources if r.name.startswith("vllm-image-builder-")}
    assert roles == {"roles/artifactregistry.writer", "roles/logging.logWriter", "roles/storage.objectViewer"}


def test_a_stale_comment_is_caught(tmp_path):
    # the comment main shipped before: only `_IMAGE`, which MUST_MATCH refuses; the parser reads all its lines
    stale = tmp_path / "Pulumi.stale.yaml"
    stale.write_text(
        "# build:\n#   gcloud builds submit components/tpu_stacks/vllm/ray_serve_image \\\n"
        "#     --config=components/tpu_stacks/vllm/ray_serve_image/cloudbuild.yaml \\\n"
        "#     --substitutions=_IMAGE=r/p/vllm-tpu:x\n# (the rest)\nconfig: {}\n"
    )
    command = commented_command(stale)
    assert command.endswith("--substitutions=_IMAGE=r/p/vllm-tpu:x")
    assert command != image_build_command("r/p/vllm-tpu:x", VLLM_IMAGE, PROJECT, REGION, "a", "b")
    assert substitution_keys(command) == {"_IMAGE"}


def test_the_command_passes_exactly_the_substitutions_cloudbuild_uses():
    config_text = (IMAGE_DIR / "cloudbuild.yaml").read_text()
    config = yaml.safe_load(config_text)
    assert config["options"]["substitution_option"] == "MUST_MATCH"
    used = set(re.findall(r"\$\{(_[A-Z_]+)\}", config_text))
    assert (
        used
        == substitution_keys(image_build_command("r/p/vllm-tpu:x", VLLM_IMAGE, PROJECT, REGION, "a", "b"))
        == {
            "_IMAGE",
            "_VLLM_IMAGE",
            "_RAY_VERSION",
        }
    )


def test_every_dockerfile_arg_is_a_build_arg_of_cloudbuild():
    args = set(re.findall(r"^ARG (\w+)", (IMAGE_DIR / "Dockerfile").read_text(), re.MULTILINE))
    steps = yaml.safe_load((IMAGE_DIR / "cloudbuild.yaml").read_text())["steps"]
    passed = {a.removeprefix("--build-arg=").split("=", 1)[0] for s in steps for a in s["args"] if "--build-arg=" in a}
    assert args == passed == {"VLLM_IMAGE", "RAY_VERSION"}


def test_the_shipped_tag_names_the_pinned_ray_and_vllm_and_the_folders_revision():
    config = yaml.safe_load((ROOT / f"Pulumi.{STACK}.yaml").read_text())["config"]
    tag = config["tpu-stacks:vllm"]["registry"]["image"]
    pins = f"serve-ray{RAY_SERVE_VERSION}-vllm{VLLM.version.removeprefix('v')}"
    assert tag == f"vllm-tpu:{pins}-r{SERVE_IMAGE_REVISION}"


FOLDER_DIGESTS = {
    2: "48202846670c4ef250301ff08c5ae7060064a9d7e791cfc58f8b73bffe54b343",
    3: "28434ebf2b6bf529b441c65c24beee24c25b1ca012e18b6e4e93df591f913a18",
}
"""sha256 of the image folder's files at each revision: a changed folder without a new SERVE_IMAGE_REVISION fails."""


def test_a_changed_image_folder_takes_a_new_revision():
    digest = hashlib.sha256()
    for path in sorted(p for p in IMAGE_DIR.iterdir() if p.is_file() and not p.name.endswith(".pyc")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    assert FOLDER_DIGESTS.get(SERVE_IMAGE_REVISION) == digest.hexdigest(), (
        f"{IMAGE_DIR.name}/ changed: raise multihost_plan.SERVE_IMAGE_REVISION, tag the shipped image -r<new> and "
        f"record {digest.hexdigest()} here"
    )


def test_the_dockerfile_checks_what_deploys_and_the_vllm_ray_pins():
    dockerfile = (IMAGE_DIR / "Dockerfile").read_text()
    # the modules a Serve replica imports at deploy time, which import vLLM at module level
    assert "import ray.llm._internal.serve.engines.vllm.vllm_engine" in dockerfile
    assert "ray.llm._internal.serve.engines.vllm.vllm_models" in dockerfile
    # Ray's own pin of vLLM (its `llm` extra), compared with the base image's vLLM
    assert "md.requires('ray')" in dockerfile and "base_version == pins[0]" in dockerfile


def test_the_registry_is_created_before_the_slice_so_the_build_runs_while_up_waits():
    capture = shipped(STACK)
    by_urn = capture.by_urn()

    def needs(urn: str, seen: set[str] | None = None) -> set[str]:
        seen = set() if seen is None else seen
        record = by_urn[urn]
        for dep in [*record.dependencies, *(d for ds in record.property_dependencies.values() for d in ds)]:
            if dep not in seen and dep in by_urn:
                seen.add(dep)
                needs(dep, seen)
        return seen

    repositories = [r.urn for r in capture.resources if r.type == "gcp:artifactregistry/repository:Repository"]
    assert len(repositories) == 1
    service = next(r.urn for r in capture.resources if r.inputs.get("kind") == "RayService")
    slow = {
        r.urn
        for r in capture.resources
        if r.type in {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool"}
    }
    assert slow, "the stack declares its cluster and slice"
    assert repositories[0] in needs(service)  # the RayService pulls from it
    assert not (needs(repositories[0]) & slow)  # created at the start of `up`, not after the slice
