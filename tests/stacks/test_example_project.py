"""A user's own Pulumi project that installs the components and builds a TpuCluster plans offline."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest
import yaml

from tests.cli_run import tpu_stacks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cluster-only"


OLD_PIP = "23.2.1"  # what `python -m venv` installs with Python 3.11.7 (ensurepip), before any upgrade


def requirement_lines() -> list[str]:
    lines = (EXAMPLE / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_example_installs_the_components_like_a_user():
    lines = requirement_lines()
    paths = [line for line in lines if line.startswith(".")]
    # A plain path from the project directory, where Pulumi runs pip, with the extra that brings the
    # provider SDKs the components declare resources with.
    assert paths == ["../../components[components]"]
    assert (EXAMPLE / paths[0].removesuffix("[components]") / "pyproject.toml").is_file()
    assert not any(line.startswith("-e") or " @ " in line for line in lines)  # forms old pips refuse
    project = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    assert project["runtime"]["name"] == "python" and project["name"] != "tpu-stacks"


def test_example_pins_the_sdks_this_repository_tests_with():
    planner = tomllib.loads((ROOT / "tools" / "preview" / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {line for line in requirement_lines() if "==" in line}
    assert pins == {pin for pin in planner if pin.split("==")[0] in ("pulumi", "pulumi-gcp", "pulumi-kubernetes")}


SOURCE_ONLY = shutil.ignore_patterns("build", "*.egg-info", "venv", "__pycache__")


def checkout_copy(root: Path) -> Path:
    """The example and the components at their places in a copy of the checkout (pip builds a local
    path in place, leaving `build/` behind: in a copy, never in the working tree); the copy's example."""
    shutil.copytree(ROOT / "components", root / "components", ignore=SOURCE_ONLY)
    shutil.copytree(EXAMPLE, root / "examples" / "cluster-only", ignore=SOURCE_ONLY)
    return root / "examples" / "cluster-only"


def _pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    command = [str(python), "-m", "pip", *args, "--disable-pip-version-check"]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.network
def test_requirements_install_with_an_old_pip_and_the_newest(tmp_path):
    """As `pulumi install` does: a fresh venv, then `pip install -r requirements.txt` in the project
    directory (pulumi sdk/python/toolchain/pip.go, InstallDependencies). Pulumi upgrades pip first, but a
    user's own venv, or a machine without the upgrade, has the pip Python bundled: pinned here to 23.2.1."""
    example = checkout_copy(tmp_path / "checkout")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    python = tmp_path / "venv" / "bin" / "python"
    assert _pip(python, "install", f"pip=={OLD_PIP}", cwd=example).returncode == 0
    assert _pip(python, "--version", cwd=example).stdout.startswith(f"pip {OLD_PIP} ")

    # The form the example used before: this pip refuses it under Python 3.11 (the oldest the README allows),
    # which is why the example does not use it. The refusal is the stdlib's doing: pip 23.2.1's packaging 21.3
    # (pip/_vendor/packaging/requirements.py) refuses a `file:` URL that urllib.parse.urlunparse does not give
    # back as written, and Python 3.13 (3.12.6 too) gives a relative one back unchanged (cpython gh-85110,
    # https://github.com/python/cpython/pull/123179), so under it the same pip accepts the line.
    url = "file:../../components"
    (tmp_path / "pep508.txt").write_text(f"tpu-stacks @ {url}\n")
    refused = _pip(python, "install", "--dry-run", "-r", str(tmp_path / "pep508.txt"), cwd=example)
    if urlunparse(urlparse(url)) != url:  # Python 3.11, 3.12.0-3.12.5: "file:///../../components"
        assert refused.returncode != 0 and "Invalid requirement" in refused.stderr
    else:
        assert "Invalid requirement" not in refused.stderr, refused.stderr

    # --no-compile: byte-compiling every installed module (most of them pulumi-gcp's) is about two thirds of
    # the install's time and none of what is checked here; Python compiles what it imports when it imports it.
    installed = _pip(python, "install", "--no-compile", "-r", "requirements.txt", cwd=example)
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    probe = "import importlib.metadata as m, tpu_stacks.cluster.component as c; print(c.__file__, m.version('pulumi'))"
    where, version = subprocess.run(
        [str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split()
    assert Path(where).is_relative_to(tmp_path / "venv")  # installed into the venv, not read from the checkout
    assert version == "3.272.0"

    # The newest pip (this repository's venv upgrades to it): the same file, parsed and the path built.
    newest = _pip(
        Path(sys.executable),
        *("install", "--dry-run", "--no-deps", "--ignore-installed", "-r", "requirements.txt"),
        cwd=example,
    )
    assert newest.returncode == 0, newest.stderr[-2000:]
    assert "tpu-stacks" in newest.stdout


def test_plan_of_the_example(tmp_path):
    out = tmp_path / "plan.json"
    result = tpu_stacks(
        "plan",
        "--cwd",
        str(EXAMPLE),
        "--stack",
        "dev",
        "--policy-pack",
        str(ROOT / "policies"),
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["project"] == "tpu-cluster-example"
    pools = [
        r
        for r in document["resources"]
        if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == "serving-tpu-v6e-2x4"
    ]
    assert pools and pools[0]["inputs"]["nodeConfig"]["machineType"] == "ct6e-standard-8t"
    assert pools[0]["inputs"]["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert [v for v in document["policy"]["violations"] if v["enforcement"] == "mandatory"] == []
