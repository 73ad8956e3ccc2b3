"""The CI workflow: valid against GitHub's workflow schema (check-jsonschema's vendored copy, no network), and
the properties that keep it safe and honest: no permission workflow-wide, OIDC only in jobs that never run
for a fork's pull request, stacks created on demand, the CLI pinned to the SDK pin, caches, current action
majors pinned by the commit of a release tag (kept current by Dependabot), a credential-free offline gate over
every shipped stack, an explicit S3NS path or skip, the user's project from a repository variable, gated
stacks skipped with a notice without a token, and secrets only through the environment or stdin.

Which stacks are previewed is a rule, not a list: the `stacks` job's script lists every Pulumi.<stack>.yaml and
the matrices read its output. `listed_stacks` runs that script (tests/test_registry.py reads it too)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from stacks.shipped import stack_files

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "preview.yml"
CHECK = str(Path(sys.executable).parent / "check-jsonschema")
STACKS = list(stack_files(ROOT))
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository"
# The actions the workflow uses. Which release each is pinned to is Dependabot's to move (.github/dependabot.yml),
# majors included, so the test checks the form of a pin (a commit and its tag), not a version.
ACTIONS = {
    "actions/checkout",
    "actions/setup-python",
    "actions/cache",
    "google-github-actions/auth",
    "google-github-actions/setup-gcloud",
    "pulumi/actions",
}

document = yaml.safe_load(WORKFLOW.read_text())
JOBS = document["jobs"]


def listed_stacks(root: Path = ROOT, workflow: dict | None = None) -> dict[str, list[str]]:
    """What the workflow's `stacks` job outputs for the stack files under `root`, by running its script as
    the runner would (bash, `python3` on PATH: this interpreter's, GITHUB_OUTPUT a file)."""
    step = next(step for step in (workflow or document)["jobs"]["stacks"]["steps"] if step.get("id") == "list")
    handle, name = tempfile.mkstemp(prefix="github-output-")  # not in `root`: parallel workers share it
    os.close(handle)
    output = Path(name)
    python3 = Path(sys.executable).parent / "python3"
    env = {**os.environ, "GITHUB_OUTPUT": str(output), "PATH": f"{python3.parent}{os.pathsep}{os.environ['PATH']}"}
    try:
        subprocess.run(["bash", "-e", "-c", step["run"]], cwd=root, env=env, check=True, timeout=60)
        lines = output.read_text().splitlines()
    finally:
        output.unlink(missing_ok=True)
    return {key: json.loads(value) for key, value in (line.split("=", 1) for line in lines)}


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


PIN = re.compile(r"^\s*(?:- )?uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # v(\d+)\.\d+\.\d+$")


def _unpinned(text: str) -> list[str]:
    """`uses:` lines not pinned as `owner/action@<40-hex commit> # vX.Y.Z` (the tag Dependabot keeps current)."""
    return [line for line in text.splitlines() if re.match(r"^\s*(?:- )?uses:", line) and not PIN.match(line)]


def test_every_action_is_pinned_by_the_commit_of_a_release_tag_of_its_current_major():
    text = WORKFLOW.read_text()
    assert _unpinned(text) == []
    pins = [PIN.match(line).groups() for line in text.splitlines() if PIN.match(line)]
    assert {action for action, _, _ in pins} == ACTIONS
    by_action = {action: {commit for a, commit, _ in pins if a == action} for action in ACTIONS}
    assert all(len(commits) == 1 for commits in by_action.values()), by_action  # one release per action


@pytest.mark.parametrize(
    "line",
    [
        "      - uses: actions/checkout@v7",
        "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
        "        uses: actions/cache@27d5ce7 # v5.0.5",
    ],
)
def test_the_pin_check_catches_a_tag_a_short_commit_or_no_version(line):
    assert _unpinned(line) == [line]


def _secrets_on_command_lines(jobs: dict) -> list[str]:
    return [step["run"] for job in jobs.values() for step in job.get("steps", []) if "secrets." in step.get("run", "")]


def test_secrets_reach_commands_through_the_environment_never_a_command_line():
    assert _secrets_on_command_lines(JOBS) == []
    leaky = {"j": {"steps": [{"run": 'pulumi config set --secret tpu-stacks:hfToken "${{ secrets.HF_TOKEN }}"'}]}}
    assert _secrets_on_command_lines(leaky) != []
    select = next(step for step in JOBS["preview"]["steps"] if "pulumi stack select" in step.get("run", ""))
    assert select["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"
    # the token is piped: `pulumi config set` reads a value it is not given from stdin
    assert 'printf \'%s\' "$HF_TOKEN" | pulumi config set --secret tpu-stacks:hfToken --stack "$STACK"' in select["run"]
    assert not any(
        "$HF_TOKEN" in line and "printf" not in line and "-z" not in line and "-n" not in line
        for line in select["run"].splitlines()
    )


@pytest.mark.parametrize("job, variable", [("preview", "GCP_PROJECT"), ("preview-s3ns", "S3NS_PROJECT")])
def test_the_project_comes_from_a_repository_variable(job, variable):
    select = next(step for step in JOBS[job]["steps"] if "pulumi stack select" in step.get("run", ""))
    assert select["env"]["GCP_PROJECT"] == f"${{{{ vars.{variable} }}}}"
    assert 'pulumi config set gcp:project "$GCP_PROJECT" --stack "$STACK"' in select["run"]
    steps = JOBS[job]["steps"]
    preview = next(step for step in steps if step.get("with", {}).get("command") == "preview")
    assert steps.index(select) < steps.index(preview)
    assert f"vars.{variable} != ''" in JOBS[job]["if"]  # unset: the job is skipped, and a notice says why
    skipped = "preview-skipped" if job == "preview" else "s3ns-skipped"
    assert f"vars.{variable} == ''" in JOBS[skipped]["if"]
    assert f"{variable}" in JOBS[skipped]["steps"][0]["run"] and "::notice" in JOBS[skipped]["steps"][0]["run"]


def test_gated_stacks_are_skipped_with_a_notice_without_a_token():
    steps = JOBS["preview"]["steps"]
    gate = next(step for step in steps if step.get("id") == "gate")
    assert gate["env"] == {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"}
    assert '[ -z "$HF_TOKEN" ]' in gate["run"] and 'scripts/needs_hf_token.py "$STACK"' in gate["run"]
    assert "::notice" in gate["run"] and 'echo "skip=true" >> "$GITHUB_OUTPUT"' in gate["run"]
    assert JOBS["preview"]["env"]["STACK"] == "${{ matrix.stack }}"
    after = steps[steps.index(gate) + 1 :]
    assert after and all(step.get("if") == "steps.gate.outputs.skip != 'true'" for step in after)
    offline = next(step for step in steps if "tpu-stacks plan" in step.get("run", ""))
    assert steps.index(offline) < steps.index(gate) and "if" not in offline  # a skipped stack is still planned
    # which stacks the gate skips is derived (registry + catalogue) and checked against the planner's own
    # refusals in tests/scripts/test_needs_hf_token.py: no list here or in the workflow
    assert "jetstream-gemma" not in gate["run"] and "vllm" not in gate["run"]


def test_dependabot_keeps_the_action_pins_current(tmp_path):
    config = ROOT / ".github" / "dependabot.yml"
    command = [CHECK, "--builtin-schema", "vendor.dependabot"]
    result = subprocess.run([*command, str(config)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    (update,) = yaml.safe_load(config.read_text())["updates"]
    assert update["package-ecosystem"] == "github-actions" and update["directory"] == "/"
    assert update["schedule"]["interval"] == "weekly"
    broken = tmp_path / "dependabot.yml"
    broken.write_text(config.read_text().replace("interval: weekly", "interval: hourly"))
    assert subprocess.run([*command, str(broken)], capture_output=True, timeout=120).returncode == 1


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
    listed = listed_stacks()
    assert sorted(listed["google"] + listed["s3ns"]) == STACKS
    assert listed["s3ns"] == ["saxml-s3ns"]  # the one stack file whose config names s3nsapis.fr
    assert JOBS["preview"]["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.google) }}"
    assert JOBS["preview-s3ns"]["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.s3ns) }}"
    for job, output in (("preview", "google"), ("preview-s3ns", "s3ns")):
        assert "stacks" in JOBS[job]["needs"] and f"needs.stacks.outputs.{output} != '[]'" in JOBS[job]["if"]
        assert JOBS[job]["env"]["STACK"] == "${{ matrix.stack }}"
    s3ns = yaml.safe_dump(JOBS["preview-s3ns"])
    assert "universe: s3nsapis.fr" in s3ns and '--stack "$STACK"' in s3ns
    assert (
        JOBS["preview-s3ns"]["if"]
        .strip()
        .endswith("&& vars.S3NS_WORKLOAD_IDENTITY_PROVIDER != '' && vars.S3NS_PROJECT != ''")
    )
    assert JOBS["s3ns-skipped"]["if"] == (
        "needs.stacks.outputs.s3ns != '[]' && (vars.S3NS_WORKLOAD_IDENTITY_PROVIDER == '' || vars.S3NS_PROJECT == '')"
    )


def test_a_stack_file_a_user_adds_joins_the_matrix_of_its_universe(tmp_path: Path):
    shutil.copy(ROOT / "Pulumi.dev.yaml", tmp_path / "Pulumi.dev.yaml")
    (tmp_path / "Pulumi.mine.yaml").write_text("config:\n  gcp:project: p\n  tpu-stacks:scenario: cluster\n")
    (tmp_path / "Pulumi.sovereign.yaml").write_text("config:\n  gcp:universeDomain: 's3nsapis.fr'\n")
    # a comment naming the universe is no config
    (tmp_path / "Pulumi.noted.yaml").write_text("# gcp:universeDomain: s3nsapis.fr\nconfig:\n  gcp:project: p\n")
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")  # the project file is no stack
    assert listed_stacks(tmp_path) == {"google": ["dev", "mine", "noted"], "s3ns": ["sovereign"]}


def test_the_suite_runs_on_the_oldest_and_the_newest_python():
    test = JOBS["test"]
    oldest = re.search(r'requires-python = ">=([0-9.]+)"', (ROOT / "components" / "pyproject.toml").read_text())
    assert test["strategy"]["matrix"]["python"] == [oldest.group(1), "3.13"] == ["3.11", "3.13"]
    python = next(step for step in test["steps"] if step.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["python-version"] == "${{ matrix.python }}"
    suite = next(step for step in test["steps"] if step.get("run") == "make test")
    network = test["steps"][test["steps"].index(suite) + 1]
    assert network["run"] == "make test-network"  # the rest of tests/ (the marker `network`), right after it
    assert "if" not in suite and "if" not in network  # the whole suite on every version of the matrix
    after = test["steps"][test["steps"].index(network) + 1 :]
    assert after and all(step["if"] == "matrix.python == env.PYTHON_VERSION" for step in after)  # the rest once
    assert document["env"]["PYTHON_VERSION"] in test["strategy"]["matrix"]["python"]


@pytest.mark.parametrize("job", ["test", "preview", "preview-s3ns"])
def test_pip_and_plugins_are_cached(job):
    steps = JOBS[job]["steps"]
    python = next(step for step in steps if step.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"]["cache"] == "pip" and "requirements.txt" in python["with"]["cache-dependency-path"]
    # every file requirements.txt installs from keys the cache
    for path in ("components/pyproject.toml", "tools/preview/pyproject.toml", "tools/live/pyproject.toml"):
        assert path in python["with"]["cache-dependency-path"].split()
    if job != "test":
        cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache@"))
        assert cache["with"]["path"] == "~/.pulumi/plugins"


def test_the_offline_gate_plans_every_stack_with_placeholders():
    runs = [step.get("run", "") for step in JOBS["test"]["steps"]]
    assert "make plan-all" in runs
    makefile = (ROOT / "Makefile").read_text()
    plan_all = makefile.split("\nplan-all:", 1)[1].split("\n\n", 1)[0]
    assert "--all --policy-pack policies --placeholder-secrets" in plan_all


def test_ci_runs_the_offline_suite_then_the_upstream_ledger():
    """`make test` stays offline and runs `pytest tests` without the `network` tests, `make test-network` runs
    those; `make upstream` (network: the pinned wheels from PyPI) runs the ledger's check and tests_upstream/,
    after both, in the workflow's test job and in .ci/run (tests/test_network_split.py checks the split)."""
    runs = [step.get("run", "") for step in JOBS["test"]["steps"]]
    assert runs.index("make test") < runs.index("make test-network") < runs.index("make upstream")
    makefile = (ROOT / "Makefile").read_text()
    test = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    network = makefile.split("\ntest-network:", 1)[1].split("\n\n", 1)[0]
    upstream = makefile.split("\nupstream:", 1)[1].split("\n\n", 1)[0]
    assert 'pytest -q -n auto -m "not network" tests\n' in test + "\n" and "upstream" not in test
    assert "pytest -q -n auto -m network tests\n" in network + "\n" and "upstream" not in network
    assert "scripts/upstream_check.py" in upstream and "pytest -q tests_upstream" in upstream
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert ci == ["make test", "make test-network", "make upstream"]
    assert (ROOT / "pytest.ini").read_text().count("testpaths = tests\n") == 1  # tests_upstream is never collected
