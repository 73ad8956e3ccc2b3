"""The e2e workflow (.github/workflows/e2e.yml) and the template for a separate project (examples/ci/), held to
what tests/test_ci_workflow.py holds the main workflow to: GitHub's schema (the vendored copy), actions pinned
by commit (the same release as preview.yml), permissions per job, OIDC never for a fork, secrets only through
the environment. And what each adds: e2e starts by hand only, skips with a notice without a project, reaches
commands with the typed stack name only through the environment and checks it names a stack file, passes
--keep, destroys when cancelled; the template lists its stacks by the main workflow's rule and its plan step
plans a project that imports the components (examples/cluster-only)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.test_ci_workflow import PIN, _secrets_on_command_lines, _unpinned, _validate, listed_stacks

ROOT = Path(__file__).resolve().parents[3]
PREVIEW = ROOT / ".github" / "workflows" / "preview.yml"
E2E = ROOT / ".github" / "workflows" / "e2e.yml"
TEMPLATE = ROOT / "examples" / "ci" / "github-workflow.yml"
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository"
GATE = "steps.gate.outputs.skip != 'true'"


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _pins(path: Path) -> dict[str, str]:
    return {m.group(1): m.group(2) for line in path.read_text().splitlines() if (m := PIN.match(line))}


@pytest.mark.parametrize("path", [E2E, TEMPLATE], ids=["e2e", "template"])
def test_valid_against_githubs_schema_and_a_broken_copy_is_not(path: Path, tmp_path: Path):
    result = _validate(path)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / path.name
    broken.write_text(path.read_text().replace("permissions: {}\n", "permissions: {id-token: maybe}\n", 1))
    assert _validate(broken).returncode == 1


@pytest.mark.parametrize("path", [E2E, TEMPLATE], ids=["e2e", "template"])
def test_actions_pinned_to_the_main_workflows_releases(path: Path):
    assert _unpinned(path.read_text()) == []
    main = _pins(PREVIEW)
    assert _pins(path) and all(main[action] == commit for action, commit in _pins(path).items())
    assert _load(path)["env"]["PULUMI_VERSION"] == _load(PREVIEW)["env"]["PULUMI_VERSION"]


@pytest.mark.parametrize("path", [E2E, TEMPLATE], ids=["e2e", "template"])
def test_permissions_per_job_and_secrets_only_through_the_environment(path: Path):
    document = _load(path)
    assert document["permissions"] == {}
    for name, job in document["jobs"].items():
        assert "permissions" in job, name
    assert _secrets_on_command_lines(document["jobs"]) == []


# --- e2e.yml ------------------------------------------------------------------------------------------

E2E_DOC = _load(E2E)
E2E_JOB = E2E_DOC["jobs"]["e2e"]
E2E_STEPS = E2E_JOB["steps"]


def test_e2e_starts_by_hand_only_and_never_cancels_a_running_one():
    triggers = E2E_DOC[True]  # YAML 1.1 reads the key `on` as true
    assert list(triggers) == ["workflow_dispatch"]  # no push, no pull_request: a fork never starts it
    inputs = triggers["workflow_dispatch"]["inputs"]
    assert inputs["stack"]["type"] == "string" and inputs["stack"]["default"] == "dev"
    assert (ROOT / f"Pulumi.{inputs['stack']['default']}.yaml").is_file()
    assert inputs["keep"]["type"] == "boolean" and inputs["keep"]["default"] is False
    assert E2E_DOC["concurrency"]["cancel-in-progress"] is False
    assert E2E_JOB["permissions"] == {"contents": "read", "id-token": "write"}


def test_e2e_is_skipped_with_a_notice_without_a_project_and_nothing_runs_after():
    gate = E2E_STEPS[0]
    assert gate["id"] == "gate" and gate["env"] == {"GCP_PROJECT": "${{ vars.GCP_PROJECT }}"}
    assert '[ -z "$GCP_PROJECT" ]' in gate["run"] and "::notice" in gate["run"] and "GCP_PROJECT" in gate["run"]
    assert 'echo "skip=true" >> "$GITHUB_OUTPUT"' in gate["run"]
    assert all(GATE in step["if"] for step in E2E_STEPS[1:])


def _gate_outputs(project: str, tmp_path: Path) -> str:
    output = tmp_path / "out"
    output.write_text("")
    env = {**os.environ, "GCP_PROJECT": project, "GITHUB_OUTPUT": str(output)}
    result = subprocess.run(["bash", "-e", "-c", E2E_STEPS[0]["run"]], env=env, capture_output=True, text=True)
    assert result.returncode == 0
    return result.stdout + output.read_text()


def test_the_gate_script_skips_only_without_a_project(tmp_path: Path):
    skipped = _gate_outputs("", tmp_path)
    assert skipped.startswith("::notice title=e2e::skipped") and "skip=true" in skipped
    assert _gate_outputs("my-project", tmp_path) == ""


def test_the_typed_stack_reaches_commands_only_through_the_environment():
    assert E2E_JOB["env"]["STACK"] == "${{ inputs.stack }}"
    runs = [step.get("run", "") for step in E2E_STEPS]
    assert not any("${{" in run for run in runs)  # no expression is pasted into a script


@pytest.mark.parametrize(
    "stack, code", [("dev", 0), ("nope", 2), ("dev; touch pwned", 2), ("../Pulumi.dev", 2), ("", 2)]
)
def test_the_stack_must_name_a_stack_file(stack: str, code: int, tmp_path: Path):
    check = next(step for step in E2E_STEPS if step.get("name") == "The stack names a stack file")
    shutil.copy(ROOT / "Pulumi.dev.yaml", tmp_path)
    result = subprocess.run(
        ["bash", "-e", "-c", check["run"]], cwd=tmp_path, env={**os.environ, "STACK": stack},
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == code, result.stdout
    assert not (tmp_path / "pwned").exists()
    if code:
        assert result.stdout.startswith("::error title=e2e::stack: ") and result.stdout.count("\n") == 1


def test_e2e_runs_make_e2e_with_keep_only_when_asked_and_after_the_project_is_set():
    run = next(step for step in E2E_STEPS if "make e2e" in step.get("run", ""))
    select = next(step for step in E2E_STEPS if "pulumi stack select" in step.get("run", ""))
    auth = next(step for step in E2E_STEPS if step.get("uses", "").startswith("google-github-actions/auth@"))
    assert E2E_STEPS.index(auth) < E2E_STEPS.index(select) < E2E_STEPS.index(run)
    assert select["env"]["GCP_PROJECT"] == "${{ vars.GCP_PROJECT }}"
    assert "printf '%s' \"$HF_TOKEN\" | pulumi config set --secret" in select["run"]
    assert run["env"] == {"PULUMI_ACCESS_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN }}"}
    assert E2E_JOB["env"]["KEEP"] == "${{ inputs.keep }}"
    script = run["run"].replace("make e2e", "echo make e2e")
    for keep, expected in (("true", "make e2e STACK=dev E2E_ARGS=--keep"), ("false", "make e2e STACK=dev")):
        env = {**os.environ, "KEEP": keep, "STACK": "dev"}
        out = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, check=True).stdout
        assert out.strip() == expected


def test_a_cancelled_run_destroys_unless_kept():
    last = E2E_STEPS[-1]
    assert last["if"] == f"cancelled() && {GATE} && inputs.keep != true"
    assert last["run"] == 'pulumi destroy --yes --stack "$STACK"'


# --- the template ---------------------------------------------------------------------------------------

TEMPLATE_DOC = _load(TEMPLATE)
TEMPLATE_JOBS = TEMPLATE_DOC["jobs"]


def test_the_template_lists_stacks_by_the_main_workflows_rule():
    ours = next(step for step in _load(PREVIEW)["jobs"]["stacks"]["steps"] if step.get("id") == "list")
    theirs = next(step for step in TEMPLATE_JOBS["stacks"]["steps"] if step.get("id") == "list")
    assert theirs["run"] == ours["run"]
    assert listed_stacks(ROOT / "examples" / "cluster-only", TEMPLATE_DOC) == {"google": ["dev"], "s3ns": []}
    for job in ("plan", "preview"):
        assert TEMPLATE_JOBS[job]["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.google) }}"


def test_the_template_never_gives_a_fork_a_token_and_skips_the_cloud_with_a_notice():
    for name, job in TEMPLATE_JOBS.items():
        if job["permissions"].get("id-token") == "write":
            assert FORK_GUARD in job["if"] and "github.event_name == 'push'" in job["if"], name
    assert TEMPLATE_JOBS["plan"]["permissions"] == {"contents": "read"}
    assert "secrets." not in yaml.safe_dump(TEMPLATE_JOBS["plan"])
    assert "vars.GCP_PROJECT != ''" in TEMPLATE_JOBS["preview"]["if"]
    assert TEMPLATE_JOBS["preview-skipped"]["if"] == "vars.GCP_PROJECT == ''"
    assert "::notice" in TEMPLATE_JOBS["preview-skipped"]["steps"][0]["run"]
    preview = next(s for s in TEMPLATE_JOBS["preview"]["steps"] if s.get("with", {}).get("command") == "preview")
    assert preview["with"]["upsert"] is True


def test_the_template_installs_the_planner_from_tpu_stacks_at_a_commit():
    source = TEMPLATE_DOC["env"]["TPU_STACKS_PREVIEW"]
    assert re.fullmatch(r"git\+https://github\.com/OWNER/tpu-stacks@COMMIT#subdirectory=tools/preview", source)
    name = re.search(r'^name = "([^"]+)"', (ROOT / "tools" / "preview" / "pyproject.toml").read_text(), re.M)
    install = next(step for step in TEMPLATE_JOBS["plan"]["steps"] if "pip install" in step.get("run", ""))
    assert f'"{name.group(1)} @ $TPU_STACKS_PREVIEW"' in install["run"]


def test_the_templates_plan_step_plans_a_project_that_imports_the_components(tmp_path: Path):
    """The step's own script, run in a copy of examples/cluster-only with this checkout's venv/ standing in
    for the one the step before it installs."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "cluster-only", project)
    (project / "venv").symlink_to(ROOT / "venv")
    step = next(step for step in TEMPLATE_JOBS["plan"]["steps"] if "tpu-stacks plan" in step.get("run", ""))
    env = {**os.environ, "STACK": "dev"}
    result = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=project, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "tpu-stacks:index:TpuCluster" in result.stdout
