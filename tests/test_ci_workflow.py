"""The CI workflow: valid against GitHub's workflow schema (check-jsonschema's vendored copy, no network), and
the properties that keep it safe and honest: no permission workflow-wide, OIDC only in jobs that never run
for a fork's pull request, stacks created on demand, the CLI pinned to the SDK pin, caches, current action
majors, a credential-free offline gate over every shipped stack, and an explicit S3NS path or skip."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "preview.yml"
CHECK = str(Path(sys.executable).parent / "check-jsonschema")
STACKS = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in ROOT.glob("Pulumi.*.yaml"))
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository"
# The current major of each action (its action.yml runs on node24), read from each repository's newest tag.
MAJORS = {
    "actions/checkout": 7,
    "actions/setup-python": 7,
    "actions/cache": 5,
    "google-github-actions/auth": 3,
    "google-github-actions/setup-gcloud": 3,
    "pulumi/actions": 7,
}

document = yaml.safe_load(WORKFLOW.read_text())
JOBS = document["jobs"]


def _validate(path: Path) -> subprocess.CompletedProcess:
    command = [CHECK, "--builtin-schema", "vendor.github-workflows", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_workflow_matches_githubs_schema():
    result = _validate(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_catches_a_broken_workflow(tmp_path):
    broken = WORKFLOW.read_text().replace("permissions: {}\n", "permissions: {id-token: maybe}\n", 1)
    (tmp_path / "broken.yml").write_text(broken)
    assert _validate(tmp_path / "broken.yml").returncode == 1


def test_permissions_are_per_job_and_oidc_never_reaches_a_fork():
    assert document["permissions"] == {}
    for name, job in JOBS.items():
        assert "permissions" in job, name
        if job["permissions"].get("id-token") == "write":
            assert FORK_GUARD in job["if"] and "github.event_name == 'push'" in job["if"], name
    assert JOBS["test"]["permissions"] == {"contents": "read"}
    assert "secrets." not in yaml.safe_dump(JOBS["test"])  # the gate needs no credentials


def test_the_cli_is_pinned_to_the_sdk_pin():
    pin = re.search(r'"pulumi==([0-9.]+)"', (ROOT / "tools" / "preview" / "pyproject.toml").read_text()).group(1)
    assert document["env"]["PULUMI_VERSION"] == pin
    for job in JOBS.values():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("pulumi/actions@"):
                assert step["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"


def test_current_action_majors():
    used = [step["uses"] for job in JOBS.values() for step in job.get("steps", []) if "uses" in step]
    assert used
    for ref in used:
        action, _, version = ref.partition("@")
        assert action in MAJORS and version == f"v{MAJORS[action]}", ref


def test_stacks_are_created_on_demand_and_previewed_with_the_pack():
    previews = [
        step
        for job in JOBS.values()
        for step in job.get("steps", [])
        if step.get("with", {}).get("command") == "preview"
    ]
    assert len(previews) == 2
    for step in previews:
        assert step["with"]["upsert"] is True
        assert step["with"]["policyPacks"] == "policies"
    assert "pulumi stack select --create" in yaml.safe_dump(JOBS["preview"])


def test_every_stack_is_previewed_or_explicitly_skipped():
    matrix = JOBS["preview"]["strategy"]["matrix"]["stack"]
    s3ns = yaml.safe_dump(JOBS["preview-s3ns"])
    assert sorted([*matrix, "saxml-s3ns"]) == STACKS
    assert "universe: s3nsapis.fr" in s3ns and "--stack saxml-s3ns" in s3ns
    assert JOBS["preview-s3ns"]["if"].strip().endswith("vars.S3NS_WORKLOAD_IDENTITY_PROVIDER != ''")
    assert JOBS["s3ns-skipped"]["if"] == "vars.S3NS_WORKLOAD_IDENTITY_PROVIDER == ''"


@pytest.mark.parametrize("job", ["test", "preview", "preview-s3ns"])
def test_pip_and_plugins_are_cached(job):
    steps = JOBS[job]["steps"]
    python = next(step for step in steps if step.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["cache"] == "pip" and "requirements.txt" in python["with"]["cache-dependency-path"]
    if job != "test":
        cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache@"))
        assert cache["with"]["path"] == "~/.pulumi/plugins"


def test_the_offline_gate_plans_every_stack_with_placeholders():
    runs = [step.get("run", "") for step in JOBS["test"]["steps"]]
    assert "make plan-all" in runs
    makefile = (ROOT / "Makefile").read_text()
    plan_all = makefile.split("\nplan-all:", 1)[1].split("\n\n", 1)[0]
    assert "--all --policy-pack policies --placeholder-secrets" in plan_all
