"""A user's own project, planned: docs/sdk.md's "Plan and test your own project" written to a new directory
and its commands run there. `--placeholder-secrets` fills every secret the program requires, whatever its
project's namespace; without it the plan stops on the first one in one line naming the key."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tpu_stacks_preview.config import load_stack_config, secret_placeholder
from tpu_stacks_preview.engine import run_program

ROOT = Path(__file__).resolve().parents[2]
SDK_DOC = ROOT / "docs" / "sdk.md"
SECTION = "## Plan and test your own project"


def section() -> str:
    text = SDK_DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/sdk.md has no section {SECTION!r}"
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def blocks() -> dict[str, str]:
    """Each `<!-- own-project: NAME -->` and the fenced block after it."""
    found = re.findall(r"<!-- own-project: (\S+) -->\s*```\w*\n(.*?)```", section(), flags=re.S)
    return dict(found)


@pytest.fixture(scope="module")
def own_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("my-serving")
    files = blocks()
    assert {"Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py", "commands"} <= set(files)
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py"):
        (project / name).write_text(files[name], encoding="utf-8")
    return project


def commands() -> list[list[str]]:
    lines = [line.split("  #", 1)[0].strip() for line in blocks()["commands"].splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("tpu-stacks plan ")]


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The docs' command run in the project's directory, through `tpu-stacks`'s own `main` in this process
    (tests/cli_run.py): what is read is its exit code, its output and the files it writes."""
    assert argv[0] == "tpu-stacks"
    with contextlib.chdir(cwd):
        return tpu_stacks(*argv[1:])


def test_the_project_is_a_users_own_and_its_stack_holds_no_secret(own_project: Path) -> None:
    name = yaml.safe_load((own_project / "Pulumi.yaml").read_text())["name"]
    assert name == "my-serving" and name != "tpu-stacks"
    stack = yaml.safe_load((own_project / "Pulumi.dev.yaml").read_text())["config"]
    assert not any(key.endswith((":hfToken", ":apiKey")) for key in stack)  # the secrets are only read
    program = (own_project / "__main__.py").read_text()
    assert 'config.require_secret("hfToken")' in program and 'config.require_secret("apiKey")' in program
    assert [argv.count("--placeholder-secrets") for argv in commands()] == [1, 0]


def test_the_docs_plan_with_placeholders_fills_the_projects_own_secrets(own_project: Path) -> None:
    with_flag = commands()[0]
    result = run(with_flag, own_project)
    assert result.returncode == 0, result.stderr
    note = result.stdout.splitlines()[0]
    assert note == (
        "Secrets: my-serving:apiKey, my-serving:hfToken are placeholders (--placeholder-secrets); "
        "set them with pulumi config set --secret"
    )
    plan = json.loads((own_project / with_flag[with_flag.index("--json") + 1]).read_text())
    assert plan["project"] == "my-serving"
    secrets = [r for r in plan["resources"] if r["type"] == "kubernetes:core/v1:Secret"]
    assert secrets, "the tokens reach a Kubernetes Secret"


def test_the_strict_plan_names_the_missing_secret_in_one_line(own_project: Path) -> None:
    strict = commands()[1]
    result = run(strict, own_project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "tpu-stacks: my-serving:hfToken is a secret the program requires and stack 'dev' does not set; "
        "pulumi config set --secret my-serving:hfToken prompts for it; offline, --placeholder-secrets stands in "
        "a placeholder"
    ]


PLAIN_PROGRAM = """
import pulumi

pulumi.export("a", pulumi.Config().require_secret("a"))
pulumi.export("b", pulumi.Config("elsewhere").require_secret("b"))
pulumi.export("c", pulumi.Config().get_secret("optional"))
pulumi.export("d", pulumi.Config().require("{plain}"))
"""


@pytest.mark.parametrize("preview", [True, False])
def test_any_namespace_is_filled_but_not_a_plain_key_nor_an_optional_secret(tmp_path: Path, preview: bool) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  mine:given: here\n")
    (tmp_path / "__main__.py").write_text(PLAIN_PROGRAM.format(plain="given"))
    config = load_stack_config(tmp_path, "dev", placeholder_secrets=True)
    capture = run_program(tmp_path, "dev", preview=preview, config=config)
    assert capture.error is None, capture.error
    assert capture.config.placeholders == ("elsewhere:b", "mine:a")  # `optional` is get_secret: None, as real
    assert capture.config.get("mine:a") == secret_placeholder("mine:a")
    assert {"mine:a", "elsewhere:b"} <= capture.config.secret_keys

    (tmp_path / "__main__.py").write_text(PLAIN_PROGRAM.format(plain="unset"))
    failed = run_program(tmp_path, "dev", preview=preview, config=config)
    assert failed.error is not None and failed.error.kind == "user"
    assert failed.error.message.startswith("Missing required configuration variable 'mine:unset'")
    assert "--placeholder-secrets" not in failed.error.message  # a plain key: the flag would not help


def test_a_secret_read_as_an_object_is_named_not_shown_as_a_placeholder(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text('import pulumi\npulumi.Config().require_secret_object("creds")\n')
    config = load_stack_config(tmp_path, "dev", placeholder_secrets=True)
    failed = run_program(tmp_path, "dev", preview=True, config=config)
    assert failed.error is not None and failed.error.kind == "user"
    assert failed.error.message == (
        "mine:creds is a secret the program reads as JSON object and the stack does not set; a placeholder stands "
        "in for text only; pulumi config set --secret mine:creds prompts for it"
    )
