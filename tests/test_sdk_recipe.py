"""docs/sdk.md's unit-test recipe and install commands, run exactly as written there, so they cannot rot.

The recipe is the Python block after `<!-- recipe: test_my_vllm.py -->`: it is written to a directory of
its own and run by pytest there, as a user would after copying it. The install commands are the `pip`
lines of the block before it, run in a fresh virtualenv on a copy of `components/` (marked `network`:
pip fetches the dependencies from PyPI); the recipe then runs against that installed wheel.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SDK_DOC = ROOT / "docs" / "sdk.md"
MARKER = "<!-- recipe: test_my_vllm.py -->"


def recipe() -> str:
    text = SDK_DOC.read_text()
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)```", after, re.DOTALL)
    assert match, f"docs/sdk.md: no python block after {MARKER}"
    return match.group(1)


def install_commands() -> list[str]:
    """The `pip` lines of the shell block that installs the library from a clone or a wheel."""
    text = SDK_DOC.read_text().split("## Unit tests of your own project", 1)[0]
    block = text.split("Outside the checkout, install the library", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.startswith("pip ")]


def run_recipe(python: str, where: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    (where / "test_my_vllm.py").write_text(recipe())
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_vllm.py"]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=600)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}


def test_the_recipe_in_docs_sdk_passes_as_a_users_own_test_file(tmp_path):
    result = run_recipe(sys.executable, tmp_path, clean_env())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b2 passed\b", result.stdout), result.stdout[-2000:]


def test_the_recipe_fails_when_the_components_misbehave(tmp_path):
    """The recipe's assertions bite: with mocks whose cluster endpoint differs, its first test fails."""
    env = clean_env()
    shim = tmp_path / "shim"
    shim.mkdir()
    # A sitecustomize that changes the mocks' answer before the recipe imports them.
    (shim / "sitecustomize.py").write_text(
        "import tpu_stacks.testing as t\n"
        "_cluster = t.Mocks._cluster\n"
        "def _moved(self, name, inputs):\n"
        "    rid, out = _cluster(self, name, inputs)\n"
        "    return rid, {**out, 'endpoint': '192.0.2.99'}\n"
        "t.Mocks._cluster = _moved\n"
    )
    env["PYTHONPATH"] = str(shim)
    result = run_recipe(sys.executable, tmp_path, env)
    assert result.returncode != 0
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-2000:]


def test_the_install_commands_are_a_clone_path_and_a_wheel():
    commands = install_commands()
    assert commands == [
        'pip install "./tpu-stacks/components[components]"',
        "pip wheel --no-deps ./tpu-stacks/components -w dist",
        'pip install "$(ls dist/tpu_stacks-*.whl)[components]"',
    ]
    assert "<owner>" not in SDK_DOC.read_text()  # no placeholder URL a user cannot run


@pytest.mark.network
def test_the_install_commands_work_in_a_fresh_virtualenv_and_the_recipe_passes_there(tmp_path):
    shutil.copytree(
        ROOT / "components",
        tmp_path / "tpu-stacks" / "components",
        ignore=shutil.ignore_patterns("build", "*.egg-info", "venv", "__pycache__"),
    )
    env = clean_env()
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    python = str(tmp_path / "venv" / "bin" / "python")
    # Each line as a user's shell runs it, with the fresh virtualenv first on PATH (its `pip`).
    shell_env = {
        **env,
        "PATH": f"{tmp_path / 'venv' / 'bin'}:{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(tmp_path / "venv"),
    }
    for command in install_commands():
        if "dist/" in command and command.startswith("pip install"):
            command += " --force-reinstall --no-deps"  # the wheel replaces the clone's install
        done = subprocess.run(
            ["bash", "-c", f"{command} --disable-pip-version-check"],
            cwd=tmp_path,
            env=shell_env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, command + "\n" + done.stdout[-2000:] + done.stderr[-2000:]
    pytest_version = subprocess.run(
        [sys.executable, "-m", "pytest", "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    subprocess.run([python, "-m", "pip", "install", f"pytest=={pytest_version}"], env=env, check=True, timeout=600)
    where = tmp_path / "project"
    where.mkdir()
    result = run_recipe(python, where, env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"\b2 passed\b", result.stdout), result.stdout[-2000:]
