"""Commands the docs and the stack files hand a person keep secrets where the README says: a file that a
command writes a secret to (`pulumi stack output kubeconfig --show-secrets > FILE`) is git-ignored, and a
`pulumi config set --secret` carries no value on its command line (given none, the CLI prompts for it or
reads a pipe, https://www.pulumi.com/docs/iac/cli/commands/pulumi_config_set/), so the token stays out of the
shell's history and the process list."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
STACK_FILES = sorted([*ROOT.glob("Pulumi*.yaml"), *(ROOT / "examples").glob("*/Pulumi*.yaml")])

_SECRET_REDIRECT = re.compile(r"--show-secrets[^\n`|;&]*?>\s*([^\s`;&|)]+)")


def secret_outputs(text: str) -> list[str]:
    """The files a command writes revealed secrets to (`--show-secrets ... > FILE`)."""
    return _SECRET_REDIRECT.findall(text)


def test_the_redirect_check_finds_what_it_should():
    text = "`pulumi stack output kubeconfig --show-secrets > kubeconfig` and\n" + (
        "pulumi stack output kubeconfig --show-secrets --stack $STACK > kubeconfig.yaml && export X=1\n"
    )
    assert secret_outputs(text) == ["kubeconfig", "kubeconfig.yaml"]


def test_every_file_a_doc_writes_secrets_to_is_git_ignored():
    written = sorted({(path.name, out) for path in DOCS for out in secret_outputs(path.read_text(encoding="utf-8"))})
    assert ("README.md", "kubeconfig.yaml") in written  # the check reads the commands it should
    files = sorted({out for _, out in written})
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *files], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    assert [(page, out) for page, out in written if out not in ignored] == []


# `pulumi config set` flags that take a value (pulumi_config_set reference, above)
_VALUED_FLAGS = {"--stack", "-s", "--config-file", "--type", "--cwd", "-C"}


def secret_values_on_command_line(line: str) -> list[str]:
    """The value a `pulumi config set --secret KEY VALUE` puts on its command line, if it does."""
    command = line.split("#", 1)[1] if line.lstrip().startswith("#") else line
    found = []
    for match in re.finditer(r"pulumi config set\b[^#|]*", command):
        words = shlex.split(match.group(0), posix=True)[3:]
        if "--secret" not in words:
            continue
        positional, skip = [], False
        for word in words:
            if skip:
                skip = False
            elif word in _VALUED_FLAGS:
                skip = True
            elif not word.startswith("-"):
                positional.append(word)
        found += positional[1:]  # the first is the key
    return found


def test_the_command_line_check_finds_what_it_should():
    assert secret_values_on_command_line("#   pulumi config set --secret tpu-stacks:hfToken hf_...") == ["hf_..."]
    assert secret_values_on_command_line('# pulumi config set --secret k "$(openssl rand -hex 32)"') == [
        "$(openssl rand -hex 32)"
    ]
    assert secret_values_on_command_line("#   pulumi config set --secret tpu-stacks:hfToken --stack vllm") == []
    assert secret_values_on_command_line("#   openssl rand -hex 32 | pulumi config set --secret tpu-stacks:k") == []
    assert secret_values_on_command_line("#   pulumi config set gcp:project my-project") == []  # not a secret


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_stack_file_comment_puts_a_secret_on_the_command_line(path: Path):
    comments = [line for line in path.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("#")]
    assert [line for line in comments if secret_values_on_command_line(line)] == []
