"""Secrets offline: the committed stack files hold none, `tpu-stacks plan` is strict like the real preview,
`--placeholder-secrets` stands in marked placeholders for the program's declared secrets, and a stack that
imports a Pulumi ESC environment gets them too, with one line saying so."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stacks.shipped import SHIPPED, stack_files
from tpu_stacks.cli.main import main
from tpu_stacks.errors import UserError
from tpu_stacks_preview.config import declared_secrets, load_stack_config, secret_placeholder

ROOT = Path(__file__).resolve().parents[2]
STACKS = list(stack_files(ROOT))  # every stack file, a user's too
GATED = ("jetstream-gemma", "jetstream-llama3", "vllm")  # their models need tpu-stacks:hfToken


def _cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`tpu-stacks plan --cwd CWD ARGV...` through the console script's own `main`, in this process: what these
    tests read (exit code, output, the plan files) is the command's, and a new interpreter per call only added
    the provider SDKs' imports (about 40 s of the suite)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    args = ["plan", "--cwd", str(cwd), *argv]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(args)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess(args, code or 0, stdout.getvalue(), stderr.getvalue())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the program with the shipped stack files, to add ESC or `secure:` variants to."""
    for path in [ROOT / "Pulumi.yaml", ROOT / "__main__.py", *ROOT.glob("Pulumi.*.yaml")]:
        shutil.copy(path, tmp_path / path.name)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _variant(project: Path, source: str, name: str, **top: object) -> None:
    document = yaml.safe_load((project / f"Pulumi.{source}.yaml").read_text())
    document.update(top)
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))


@pytest.mark.parametrize("stack", STACKS)
def test_no_committed_stack_file_holds_an_encrypted_value(stack: str) -> None:
    """A `secure:` value encrypted with nobody's key fails `pulumi preview` (it cannot be decrypted)."""
    assert "secure:" not in (ROOT / f"Pulumi.{stack}.yaml").read_text()


def test_the_declared_secrets_come_from_the_program() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from stacks.config import NAMESPACE, SECRET_KEYS
    finally:
        sys.path.remove(str(ROOT))
    assert declared_secrets(ROOT) == tuple(f"{NAMESPACE}:{key}" for key in SECRET_KEYS)
    assert declared_secrets(ROOT / "tests") == ()  # a project without stacks/config.py declares none


def test_loader_is_strict_unless_asked() -> None:
    strict = load_stack_config(ROOT, "vllm")
    assert "tpu-stacks:hfToken" not in strict.values and strict.placeholders == ()
    lenient = load_stack_config(ROOT, "vllm", placeholder_secrets=True)
    assert lenient.placeholders == ("tpu-stacks:hfToken", "tpu-stacks:vllmApiKey")
    assert lenient.values["tpu-stacks:hfToken"] == secret_placeholder("tpu-stacks:hfToken")
    assert {"tpu-stacks:hfToken", "tpu-stacks:vllmApiKey"} <= lenient.secret_keys


def test_a_set_secret_is_never_replaced(project: Path) -> None:
    """`secure:` values still read as opaque placeholders; only missing secrets stand in."""
    document = yaml.safe_load((project / "Pulumi.vllm.yaml").read_text())
    document["config"]["tpu-stacks:hfToken"] = {"secure": "AAABAGZha2U="}
    (project / "Pulumi.vllm.yaml").write_text(yaml.safe_dump(document))
    config = load_stack_config(project, "vllm", placeholder_secrets=True)
    assert config.placeholders == ("tpu-stacks:vllmApiKey",)
    assert config.values["tpu-stacks:hfToken"] == secret_placeholder("tpu-stacks:hfToken")
    assert "tpu-stacks:hfToken" in config.secret_keys


def test_an_esc_environment_provides_placeholders_without_the_flag(project: Path) -> None:
    _variant(project, "vllm", "esc", environment=["tpu-stacks/hf"])
    config = load_stack_config(project, "esc")
    assert config.environments == ("tpu-stacks/hf",)
    assert config.placeholders == ("tpu-stacks:hfToken", "tpu-stacks:vllmApiKey")


@pytest.mark.parametrize("bad", [[""], 3, {"imports": [1]}])
def test_a_malformed_environment_is_one_line(project: Path, bad: object) -> None:
    _variant(project, "dev", "bad", environment=bad)
    with pytest.raises(UserError, match=r"Pulumi.bad.yaml environment: .* is not a list of ESC environment names"):
        load_stack_config(project, "bad")


def test_cli_refuses_a_gated_model_without_a_token() -> None:
    result = _cli("--stack", "vllm")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "tpu-stacks: tpu-stacks:hfToken is required: meta-llama/Llama-3.1-70B is gated on "
        "Hugging Face; set it as a secret: pulumi config set --secret tpu-stacks:hfToken <value>"
    )
    assert "Traceback" not in result.stdout + result.stderr


def _notes_by_stack(stdout: str) -> dict[str, str]:
    """The placeholder line under each stack's header in a several-stack plan."""
    notes, stack = {}, ""
    for line in stdout.splitlines():
        if line.startswith("tpu-stacks/"):
            stack = line.split(":", 1)[0].removeprefix("tpu-stacks/")
        elif line.startswith("  Secrets:"):
            notes[stack] = line.strip()
    return notes


def test_cli_with_placeholders_plans_every_shipped_stack_naming_only_the_secrets_each_uses(tmp_path: Path) -> None:
    """The program declares hfToken and vllmApiKey for every stack; a stack is told only of those its resources
    carry: the token for a gated model, no API key where vllm.apiKey is off, nothing for an open model."""
    result = _cli("--all", "--placeholder-secrets", "--json", str(tmp_path / "plan-{stack}.json"))
    assert result.returncode == 0, result.stderr
    token = (
        "Secrets: tpu-stacks:hfToken is a placeholder (--placeholder-secrets); set it with pulumi config set --secret"
    )
    both = (
        "Secrets: tpu-stacks:hfToken, tpu-stacks:vllmApiKey are placeholders (--placeholder-secrets); set them with "
        "pulumi config set --secret"
    )
    notes = {stack: note for stack, note in _notes_by_stack(result.stdout).items() if stack in SHIPPED}
    assert notes == {
        **dict.fromkeys([*GATED, "vllm-fallback", "vllm-405b"], token),
        "vllm-gateway": both,  # its internal gateway answers the VPC: vLLM's API key guards it
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"plan-{s}.json" for s in STACKS)


def test_an_api_key_the_stack_uses_is_named_too(project: Path) -> None:
    document = yaml.safe_load((project / "Pulumi.vllm.yaml").read_text())
    document["config"]["tpu-stacks:vllm"]["apiKey"] = True
    (project / "Pulumi.keyed.yaml").write_text(yaml.safe_dump(document))
    result = _cli("--stack", "keyed", "--placeholder-secrets", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "Secrets: tpu-stacks:hfToken, tpu-stacks:vllmApiKey are placeholders (--placeholder-secrets); "
        "set them with pulumi config set --secret"
    )


def test_an_open_model_without_an_api_key_gets_no_secrets_line() -> None:
    result = _cli("--stack", "dev", "--placeholder-secrets")
    assert result.returncode == 0, result.stderr
    assert "Secrets:" not in result.stdout and "placeholder" not in result.stdout


def test_cli_says_in_one_line_that_esc_secrets_are_placeholders(project: Path) -> None:
    _variant(project, "jetstream-gemma", "esc", environment=["tpu-stacks/hf", "tpu-stacks/gcp"])
    result = _cli("--stack", "esc", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        "Secrets: tpu-stacks:hfToken is a placeholder offline: ESC environment "
        "tpu-stacks/hf, tpu-stacks/gcp may provide it and is not opened here"
    )


@pytest.mark.parametrize("stack", GATED)
def test_placeholders_plan_exactly_as_the_encrypted_placeholder_did(project: Path, stack: str, tmp_path: Path) -> None:
    """The plan document with `--placeholder-secrets` is byte-identical to the one the old committed
    `secure:` value gave (the same as a stack whose token is set), so nothing else moved."""
    encrypted = tmp_path / "encrypted"
    shutil.copytree(project, encrypted)
    document = yaml.safe_load((encrypted / f"Pulumi.{stack}.yaml").read_text())
    document["config"]["tpu-stacks:hfToken"] = {"secure": "v1:placeholder-set-your-own-with-pulumi-config-set-secret"}
    (encrypted / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
    assert (
        _cli("--stack", stack, "--placeholder-secrets", "--json", str(tmp_path / "a.json"), cwd=project).returncode == 0
    )
    assert _cli("--stack", stack, "--json", str(tmp_path / "b.json"), cwd=encrypted).returncode == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
