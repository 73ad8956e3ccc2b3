"""The plugin installed and started the way the Pulumi CLI does it, then asked for its schema over gRPC.

For a plugin directory with a `__main__.py` the CLI creates `<dir>/venv` and runs
`python -m pip install -r requirements.txt` in the directory (pulumi sdk/go/common/workspace/plugins.go,
PluginSpec.InstallDependencies, "bare directory" mode: pyproject.toml is not read), then the language
host runs `venv/bin/python <dir> <engine address>` (sdk/python/cmd/pulumi-language-python, RunPlugin)
and reads the port the provider prints. Here in a copy of the directory, with the same steps.
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

COMPONENTS_DIR = Path(__file__).resolve().parents[1] / "components"
OLD_PIP = "23.2.1"


def requirement_lines() -> list[str]:
    lines = (COMPONENTS_DIR / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_plugin_directory_installs_its_package_through_requirements_txt():
    assert (COMPONENTS_DIR / "__main__.py").is_file()  # so the CLI takes the bare-directory path
    # The package itself, its dependencies from pyproject.toml, with the provider SDKs the components need.
    assert requirement_lines() == [".[components]"]


@pytest.mark.network
def test_installed_like_the_cli_does_the_plugin_serves_its_schema(tmp_path):
    # The CLI installs a plugin from a copy of its directory (git clone or plugin cache); so does this.
    plugin_dir = tmp_path / "components"
    shutil.copytree(COMPONENTS_DIR, plugin_dir, ignore=shutil.ignore_patterns("build", "*.egg-info", "venv"))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    subprocess.run([sys.executable, "-m", "venv", str(plugin_dir / "venv")], check=True, timeout=120)
    python = str(plugin_dir / "venv" / "bin" / "python")

    def pip(*args: str) -> subprocess.CompletedProcess:
        command = [python, "-m", "pip", *args, "--disable-pip-version-check"]
        return subprocess.run(command, cwd=plugin_dir, env=env, capture_output=True, text=True, timeout=900)

    assert pip("install", f"pip=={OLD_PIP}").returncode == 0
    # --no-compile: byte-compiling every installed module (most of them pulumi-gcp's) is about two thirds of
    # the install's time and none of what is checked here; Python compiles what it imports when it imports it.
    installed = pip("install", "--no-compile", "-r", "requirements.txt")
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]

    plugin = subprocess.Popen(
        [python, str(plugin_dir), "127.0.0.1:1"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(plugin.stdout.readline())  # the provider's first line: the port it listens on
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            answer = stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=60)
    finally:
        plugin.terminate()
        plugin.wait(timeout=30)
    schema = json.loads(answer.schema)
    declared = tomllib.loads((COMPONENTS_DIR / "pyproject.toml").read_text())["project"]["version"]
    assert (schema["name"], schema["namespace"], schema["version"]) == ("tpu-stacks", "tpu-stacks", declared)
    vllm = schema["resources"]["tpu-stacks:index:VllmStack"]
    assert vllm["properties"]["kubeconfig"]["secret"] is True and vllm["inputProperties"]["hfToken"]["secret"]
