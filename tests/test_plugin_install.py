"""The plugin installed and started the way the Pulumi CLI does it, then asked for its schema over gRPC.

For a plugin directory with a `__main__.py` the CLI creates `<dir>/venv` and runs
`python -m pip install -r requirements.txt` in the directory (pulumi sdk/go/common/workspace/plugins.go,
PluginSpec.InstallDependencies, "bare directory" mode: pyproject.toml is not read), then the language
host runs `venv/bin/python <dir> <engine address>` (sdk/python/cmd/pulumi-language-python, RunPlugin)
and reads the port the provider prints. Here the venv lives in a temporary directory instead of the
checkout; everything else is the same steps.
"""

import json
import os
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
    assert requirement_lines() == ["."]  # the package itself: its dependencies come from pyproject.toml


@pytest.mark.network
def test_installed_like_the_cli_does_the_plugin_serves_its_schema(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=120)
    python = str(tmp_path / "venv" / "bin" / "python")

    def pip(*args: str) -> subprocess.CompletedProcess:
        command = [python, "-m", "pip", *args, "--disable-pip-version-check"]
        return subprocess.run(command, cwd=COMPONENTS_DIR, env=env, capture_output=True, text=True, timeout=900)

    assert pip("install", f"pip=={OLD_PIP}").returncode == 0
    installed = pip("install", "-r", "requirements.txt")
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]

    plugin = subprocess.Popen(
        [python, str(COMPONENTS_DIR), "127.0.0.1:1"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
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
