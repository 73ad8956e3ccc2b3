"""`make policy-pack` builds a pack that leaves the checkout: installed into its own fresh virtualenv from
its own directory (no path outside it), it runs against a stack and gives the in-repo pack's verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tpu_stacks_preview.policy import _pack_python

ROOT = Path(__file__).resolve().parents[2]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")
sys.path.insert(0, str(ROOT / "scripts"))
try:
    import build_policy_pack
finally:
    sys.path.remove(str(ROOT / "scripts"))


def _plan(pack: Path, out: Path) -> dict:
    command = [PLAN, "plan", "--cwd", str(ROOT), "--stack", "vllm", "--placeholder-secrets", "--json", str(out)]
    result = subprocess.run([*command, "--policy-pack", str(pack)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(out.read_text())


def test_the_built_pack_installs_alone_and_judges_a_stack(tmp_path: Path) -> None:
    pack = build_policy_pack.build(tmp_path / "policy-pack")
    manifest = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["options"]["virtualenv"] == "venv"  # inside the pack, made by the CLI
    requirements = [
        line for line in (pack / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")
    ]
    assert requirements[0].startswith("pulumi-policy==")
    assert requirements[1].startswith("./wheels/tpu_stacks-") and (pack / requirements[1]).is_file()
    assert not any(".." in line or line.startswith(("/", "-e")) for line in requirements)

    # A fresh virtualenv, filled the way the CLI fills a pack's: pip install -r from the pack directory.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    subprocess.run([sys.executable, "-m", "venv", str(pack / "venv")], check=True, timeout=120)
    python = pack / "venv" / "bin" / "python"
    # --no-compile: byte-compiling every installed module (most of them pulumi-gcp's) is about two thirds of
    # the install's time and none of what is checked here; Python compiles what it imports when it imports it.
    install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    install += ["-r", "requirements.txt"]
    subprocess.run(install, cwd=pack, env=env, check=True, timeout=600, capture_output=True)
    where = subprocess.run(
        [str(python), "-c", "import tpu_stacks; print(tpu_stacks.__file__)"],
        cwd=pack,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(pack / "venv")  # the bundled wheel, not the checkout
    assert _pack_python(pack) == str(python)  # `tpu-stacks plan` runs the pack in its own venv

    built = _plan(pack, tmp_path / "built.json")
    in_repo = _plan(ROOT / "policies", tmp_path / "in-repo.json")
    assert built["policy"] == in_repo["policy"]
