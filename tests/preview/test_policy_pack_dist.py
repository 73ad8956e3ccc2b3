"""`make policy-pack` builds a pack that leaves the checkout: installed into its own fresh virtualenv from
its own directory (no path outside it), it runs against a stack and gives the in-repo pack's verdicts.

The pack installs no provider SDK: it judges plans with the catalogues, the sizing and the rules, which
need none, and Pulumi Cloud installs a published pack's requirements each time it runs it. Measured in a
fresh Python 3.11 venv (`du -sm venv`): 459 MB when the library required pulumi-gcp (292 MB) and
pulumi-kubernetes (64 MB), 99 MB now that they are its `components` extra (the test prints its own
count: file sizes, 452 MB before and 91 MB after)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.module_tree import PACKAGE, imports, modules
from tpu_stacks_preview.policy import _pack_python

ROOT = Path(__file__).resolve().parents[2]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")
PROVIDER_SDKS = ("pulumi_gcp", "pulumi_kubernetes")
PACK_MB_AT_MOST = 250
"""A bound on the installed pack's venv that pulumi-gcp alone exceeds (292 MB installed)."""
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


@pytest.mark.network
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
    found = subprocess.run(
        [str(python), "-c", f"import importlib.util as u; print([m for m in {PROVIDER_SDKS!r} if u.find_spec(m)])"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert found.strip() == "[]", f"the pack installed provider SDKs: {found}"
    megabytes = sum(f.stat().st_size for f in (pack / "venv").rglob("*") if f.is_file() and not f.is_symlink()) / 1e6
    print(f"installed policy pack venv: {megabytes:.0f} MB")
    assert megabytes < PACK_MB_AT_MOST, megabytes
    assert _pack_python(pack) == str(python)  # `tpu-stacks plan` runs the pack in its own venv

    built = _plan(pack, tmp_path / "built.json")
    in_repo = _plan(ROOT / "policies", tmp_path / "in-repo.json")
    assert built["policy"] == in_repo["policy"]


def _pack_sdk_imports(policies: Path = ROOT / "policies") -> list[str]:
    """Every import of a provider SDK the pack's code may run: its own modules and, followed through
    their imports, every `tpu_stacks` module they load (wherever the import stands)."""
    library = modules(PACKAGE)
    todo = [(path, policies / "tpu_policies") for path in sorted(policies.rglob("*.py")) if "venv" not in path.parts]
    seen: set[Path] = set()
    found = []
    while todo:
        path, package = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for statement in imports(path, package):
            for name in statement.names:
                if name.split(".")[0] in PROVIDER_SDKS:
                    found.append(f"{statement.path.name}:{statement.line}: {name}")
                elif name in library:
                    todo.append((library[name], PACKAGE))
    return found


def test_the_pack_code_imports_no_provider_sdk(tmp_path: Path) -> None:
    assert _pack_sdk_imports() == []
    # The check sees an import in a function of the pack, and one reached through the library.
    shutil.copytree(ROOT / "policies", tmp_path / "policies", ignore=shutil.ignore_patterns("venv"))
    (tmp_path / "policies" / "tpu_policies" / "late.py").write_text("def f():\n    import pulumi_kubernetes\n")
    (tmp_path / "policies" / "tpu_policies" / "built.py").write_text("from tpu_stacks.vllm import component\n")
    found = _pack_sdk_imports(tmp_path / "policies")
    assert "late.py:2: pulumi_kubernetes" in found
    assert any(line.startswith("component.py:") and "pulumi_gcp" in line for line in found), found
