"""`tpu-stacks plan` end to end: exit codes, the JSON document, manifests, messages."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

from tpu_stacks.cli import main as cli_main
from tpu_stacks_preview import cli as plan
from tpu_stacks_preview.config import secret_placeholder

from .conftest import ERRORS, PACK, RAW


def _plan(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    return plan.run(parser.parse_args(list(argv)))


@pytest.fixture(scope="module")
def full_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, str, Path]:
    out = tmp_path_factory.mktemp("plan")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = _plan(
            "--stack", "dev", "--cwd", str(RAW), "--policy-pack", str(PACK),
            "--json", str(out / "new" / "plan.json"), "--manifests", str(out / "manifests"),
        )  # fmt: skip  # `new/` does not exist yet: the plan creates it, as it does the manifests folder
    return code, json.loads((out / "new" / "plan.json").read_text()), stdout.getvalue(), out


def test_mandatory_violation_fails_the_plan(full_plan: tuple[int, dict, str, Path]) -> None:
    code, _, text, _ = full_plan
    assert code == 1
    assert "[mandatory] no-latest-image" in text


def test_json_document_shape(full_plan: tuple[int, dict, str, Path]) -> None:
    _, document, _, _ = full_plan
    assert set(document) == {"project", "stack", "resources", "outputs", "before_up", "policy", "schema"}
    assert document["before_up"] == []  # the fixture's program has no workload component of ours
    assert (document["project"], document["stack"]) == ("raw-fixture", "dev")
    urns = [r["urn"] for r in document["resources"]]
    assert urns == sorted(urns) and len(urns) == 11
    for resource in document["resources"]:
        assert set(resource) == {"urn", "type", "name", "parent", "custom", "provider", "inputs", "options"}
    stack = next(r for r in document["resources"] if r["type"] == "pulumi:pulumi:Stack")
    assert stack["parent"] is None and stack["provider"] is None and stack["custom"] is False
    assert set(document["policy"]) == {"pack", "violations"}
    assert set(document["policy"]["violations"][0]) == {"policy", "enforcement", "urn", "message"}
    assert document["schema"] == {"problems": []}


def test_json_inputs_come_from_the_up_run_and_hide_secrets(full_plan: tuple[int, dict, str, Path]) -> None:
    _, document, _, out = full_plan
    deployment = next(r for r in document["resources"] if r["type"] == "kubernetes:apps/v1:Deployment")
    env = deployment["inputs"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[0]["value"].startswith("models-")  # computed bucket name: complete object
    secret = next(r for r in document["resources"] if r["type"] == "kubernetes:core/v1:Secret")
    assert secret["inputs"]["stringData"] == "[secret]"
    assert document["outputs"]["kubeconfig"] == "[secret]"
    text = (out / "new" / "plan.json").read_text()
    assert secret_placeholder("raw-fixture:dbPassword") not in text
    for manifest in (out / "manifests").iterdir():
        assert secret_placeholder("raw-fixture:dbPassword") not in manifest.read_text()


def test_manifests_are_written_with_ints(full_plan: tuple[int, dict, str, Path]) -> None:
    _, _, _, out = full_plan
    deployment = yaml.safe_load((out / "manifests" / "deployment-serving-llm.yaml").read_text())
    assert deployment["spec"]["replicas"] == 2 and type(deployment["spec"]["replicas"]) is int


def test_text_report(full_plan: tuple[int, dict, str, Path]) -> None:
    _, _, text, _ = full_plan
    assert "      kubernetes:apps/v1:Deployment  llm  [provider gke]" in text  # indented under its component
    assert "     2  gcp:storage/bucket:Bucket" in text
    assert 'endpoint: "(known after apply)"' in text
    assert "Kubernetes 1.32" in text  # from the stack's tpu-stacks:kubernetesVersion


def test_misspelled_field_fails_the_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = _plan("--stack", "typo", "--cwd", str(RAW), "--k8s-version", "1.33", "--json", str(tmp_path / "p.json"))
    out, err = capsys.readouterr()
    assert code == 1
    assert "Kubernetes 1.33" in out and "'replicaz' was unexpected" in out
    assert "plan failed: 2 schema problem(s)" in err
    document = json.loads((tmp_path / "p.json").read_text())
    assert "policy" not in document  # no --policy-pack
    assert [p["path"] for p in document["schema"]["problems"]] == ["spec", "spec/template/spec/containers/0"]


def test_clean_plan_validates_custom_resources_with_the_shipped_crds(capsys: pytest.CaptureFixture[str]) -> None:
    code = _plan("--stack", "dev", "--cwd", str(RAW))
    out, _ = capsys.readouterr()
    assert code == 0
    assert "CRD directory" not in out and "4 objects validated" in out


def test_a_crd_directory_without_the_crds_is_one_notice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = _plan("--stack", "dev", "--cwd", str(RAW), "--crds", str(tmp_path / "none"))
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.count("CRD directory") == 1 and "JobSet/training/pretrain" in out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--stack", "nope", "--cwd", str(RAW)], 2, "'nope' has no stack file"),
        (["--stack", "user-error", "--cwd", str(ERRORS)], 2, "tpu.chips: 12 is not a valid v5e slice size"),
        (["--stack", "missing-config", "--cwd", str(ERRORS)], 2, "errors-fixture:notSet"),
        (["--stack", "invoke", "--cwd", str(ERRORS)], 1, "gcp:compute/getZones:getZones"),
        (["--stack", "dev", "--cwd", str(RAW), "--k8s-version", "2.0"], 2, "--k8s-version: '2.0'"),
        (["--stack", "dev", "--cwd", str(RAW), "--policy-config", "x.json"], 2, "--policy-config: 'x.json' needs"),
        # Pulumi's own spelling (`pulumi preview --policy-pack-config`) is accepted and named as written
        (["--stack", "dev", "--cwd", str(RAW), "--policy-pack-config", "x.json"], 2, "--policy-pack-config: 'x.json'"),
        # an output path that cannot be written: one line, not an OSError's traceback
        (["--stack", "dev", "--cwd", str(RAW), "--json", "/proc/x/plan.json"], 2, "cannot write /proc/x"),
    ],
)
def test_errors_are_one_line_with_the_right_exit_code(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    assert _plan(*argv) == code
    _, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if not line.startswith("tpu-stacks: running")]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err


def test_dispatcher_runs_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(["plan", "--stack", "nope", "--cwd", str(RAW)]) == 2
    assert "has no stack file" in capsys.readouterr().err


ROOT = Path(__file__).resolve().parents[2]


def test_several_stacks_in_one_process_write_the_same_bytes_as_one_at_a_time(tmp_path: Path) -> None:
    """Sharing the imports and the pack process changes no byte of any stack's document or manifests."""
    stacks = ["dev", "jetstream-gemma"]
    with contextlib.redirect_stdout(io.StringIO()):
        for stack in stacks:
            assert _plan("--cwd", str(ROOT), "--stack", stack, "--policy-pack", str(ROOT / "policies"),
                         "--placeholder-secrets", "--json", str(tmp_path / f"one-{stack}.json"), "--manifests", str(tmp_path / f"one-{stack}")) == 0  # fmt: skip
        together = [
            "--cwd",
            str(ROOT),
            "--stack",
            stacks[0],
            "--stack",
            stacks[1],
            "--policy-pack",
            str(ROOT / "policies"),
            "--placeholder-secrets",
        ]
        assert _plan(*together, "--json", str(tmp_path / "all-{stack}.json"), "--manifests", str(tmp_path / "all-{stack}")) == 0  # fmt: skip
    for stack in stacks:
        assert (tmp_path / f"all-{stack}.json").read_bytes() == (tmp_path / f"one-{stack}.json").read_bytes()
        one = {p.name: p.read_bytes() for p in (tmp_path / f"one-{stack}").iterdir()}
        assert one and {p.name: p.read_bytes() for p in (tmp_path / f"all-{stack}").iterdir()} == one


def test_several_stacks_need_a_file_name_per_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan("--cwd", str(ROOT), "--all", "--json", "plan.json") == 2
    err = capsys.readouterr().err
    assert "--json: 'plan.json' would hold" in err and "put {stack} in it" in err and len(err.strip().splitlines()) == 1


def test_several_stacks_print_what_applies_and_end_with_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """Several stacks: a header line per stack and only what needs attention (no tree, no outputs), then one
    summary row per stack; the exit code is the worst stack's."""
    code = _plan("--stack", "dev", "--stack", "typo", "--cwd", str(RAW), "--policy-pack", str(PACK))
    out, err = capsys.readouterr()
    assert code == 1
    assert "Resources:" not in out and "Outputs (as preview knows them):" not in out
    lines = out.splitlines()
    assert lines[0] == "raw-fixture/dev: 11 resources"
    violation = next(line for line in lines if "[mandatory] no-latest-image" in line)
    # the resource's type and name and what the policy said of it, not the policy's description
    assert violation == (
        "  [mandatory] no-latest-image  JobSet pretrain: container 'jax' uses unpinned image "
        "'us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest'"
    )
    assert any(line.startswith("  schema: ") and "'replicaz' was unexpected" in line for line in lines)
    summary = lines[lines.index("Summary:") :]
    assert summary[1].split() == ["stack", "resources", "schema", "problems", "mandatory", "advisory", "result"]
    rows = {line.split()[0]: line.split()[1:] for line in summary[2:-1]}
    assert rows["dev"][0] == "11" and rows["dev"][1] == "0" and rows["dev"][-1] == "FAIL"  # the mandatory one
    assert rows["typo"][1] == "2" and rows["typo"][-1] == "FAIL"
    assert summary[-1] == "0 of 2 stacks ok; failed: dev, typo"
    assert "plan failed: 2 schema problem(s), 1 mandatory policy violation(s) (stack typo)" in err


def test_verbose_keeps_every_stacks_full_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = _plan("--stack", "dev", "--stack", "dev", "--cwd", str(RAW), "--verbose")  # one stack, named twice
    out, _ = capsys.readouterr()
    assert code == 0 and out.count("Resources:") == 1 and "Summary:" not in out
    code = _plan("--stack", "dev", "--stack", "typo", "--cwd", str(RAW), "--verbose")
    out, _ = capsys.readouterr()
    assert out.count("Resources:") == 2 and out.count("Outputs (as preview knows them):") == 2
    assert "Summary: (no --policy-pack: no policy columns)" in out and "1 of 2 stacks ok; failed: typo" in out


def test_a_stack_that_does_not_plan_is_a_summary_row(capsys: pytest.CaptureFixture[str]) -> None:
    code = _plan("--stack", "user-error", "--stack", "invoke", "--cwd", str(ERRORS))
    out, err = capsys.readouterr()
    assert code == 2  # the worst: the user's input
    assert "errors-fixture/user-error: did not plan (exit 2; the reason is on stderr)" in out
    assert "tpu.chips: 12 is not a valid v5e slice size" in err
    lines = out.splitlines()
    rows = [line.split() for line in lines[lines.index("Summary: (no --policy-pack: no policy columns)") + 2 :]]
    assert rows[0] == ["user-error", "-", "0", "-", "-", "error", "(exit", "2)"]
    assert rows[1] == ["invoke", "-", "0", "-", "-", "error", "(exit", "1)"]
