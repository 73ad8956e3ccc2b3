"""The README's "Deploy for real" path: commands that work on a fresh backend, and a row per shipped stack
naming exactly the secrets the program refuses to run without."""

import re
from pathlib import Path

import pytest

from stacks.shipped import SHIPPED
from tpu_stacks_preview.engine import run_program

ROOT = Path(__file__).resolve().parents[2]
STACKS = list(SHIPPED)
README = (ROOT / "README.md").read_text()
SECTION = README.split("## Deploy for real", 1)[1].split("\n## ", 1)[0]
COMMANDS = SECTION.split("```bash", 1)[1].split("```", 1)[0]


def test_commands_work_on_a_fresh_backend():
    assert "pulumi install" in COMMANDS
    assert "pulumi stack select --create $STACK" in COMMANDS  # a bare `stack select` fails when the stack is new
    blocks = "".join(block.split("```", 1)[0] for block in README.split("```bash")[1:])
    assert not re.search(r"pulumi stack select (?!--create)", blocks)
    assert "pulumi config set --secret tpu-stacks:hfToken" in COMMANDS
    assert "--policy-pack policies --policy-pack-config policies/config.example.json" in COMMANDS
    assert re.search(r"pulumi stack rm \S+ --preserve-config", COMMANDS)  # else it deletes the committed file
    for command in ("preview", "up", "stack output", "destroy"):
        assert f"pulumi {command} --stack $STACK" in COMMANDS


def _row(stack: str) -> str:
    rows = [line for line in SECTION.splitlines() if line.startswith("| ") and f"`{stack}`" in line.split("|")[1]]
    assert len(rows) == 1, stack
    return rows[0]


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_names_the_secrets_it_needs(stack):
    strict = run_program(ROOT, stack, preview=True, placeholder_secrets=False)
    needs_token = strict.error is not None and "tpu-stacks:hfToken" in strict.error.message
    assert strict.error is None or needs_token, strict.error
    secrets_cell = _row(stack).split("|")[2]
    assert ("tpu-stacks:hfToken" in secrets_cell) == needs_token
