"""network-config-analyzer's own virtualenv, made from tests/network/requirements-nca.txt.

nca pins PyYAML 6.0.2 exactly and the project pins 6.0.3, so it cannot share the project's venv. The
venv lives in `<cache>/<hash of the requirements file>/`: a changed file makes a new one, an unchanged
one is reused. A lock file serialises two processes (two pytest runs, or xdist workers) that make it at
once; the second finds the first one's `.ready` marker and reuses the venv.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent / "requirements-nca.txt"


def _run(command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def ensure_nca(cache: Path, requirements: Path = REQUIREMENTS) -> Path:
    """The `nca` executable of a venv holding exactly the pinned requirements; made on first use."""
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]
    cache.mkdir(parents=True, exist_ok=True)
    venv = cache / digest
    nca = venv / "bin" / "nca"
    with open(cache / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".ready").is_file() and nca.is_file():
            return nca
        shutil.rmtree(venv, ignore_errors=True)  # a half-made venv from an interrupted run
        _run([sys.executable, "-m", "venv", str(venv)])
        python = str(venv / "bin" / "python")
        pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input"]
        # --no-deps: the file names every package; `pip check` fails if it misses one.
        # --no-compile: nca imports a fraction of what is installed; Python compiles that on first use.
        _run([*pip, "install", "--no-deps", "--no-compile", "-r", str(requirements)])
        _run([*pip, "check"])
        (venv / ".ready").write_text(digest)
    return nca
