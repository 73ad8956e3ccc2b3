"""`make` refuses a Python older than requires-python in one line before venv/ exists, and recovers a venv/
an old Python or an unfinished install left. Run through the real Makefile in a scratch copy of the files it
reads (an empty requirements.txt keeps the install offline and quick), with a real Python 3.10 when this
machine has one and, always, an interpreter that reports 3.10 through sys.version_info."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scripts import check_python

ROOT = Path(__file__).resolve().parents[2]
NEEDED = check_python.minimum()


def _pythons_310() -> list:
    """A real 3.10 from PATH or pyenv's usual place, when there is one."""
    found = [shutil.which("python3.10") or ""]
    found += [str(path) for path in Path.home().glob(".pyenv/versions/3.10.*/bin/python3.10")]
    real = []
    for path in found:
        if path and subprocess.run([path, "-c", "pass"], capture_output=True).returncode == 0:
            real.append(path)
    return real[:1]


@pytest.fixture
def fake_310(tmp_path) -> str:
    """This interpreter, claiming to be 3.10.12 (sys.version_info is what the check reads)."""
    shim = tmp_path / "bin" / "python3"
    shim.parent.mkdir()
    shim.write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        exec {sys.executable} -c 'import runpy, sys
        sys.version_info = (3, 10, 12, "final", 0)
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")' "$@"
        """)
    )
    shim.chmod(0o755)
    return str(shim)


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The Makefile and the files its install rule reads; requirements.txt empty."""
    copy = tmp_path / "checkout"
    for name in (
        "Makefile",
        "scripts/check_python.py",
        "components/pyproject.toml",
        "tools/preview/pyproject.toml",
        "tools/live/pyproject.toml",
    ):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, copy / name)
    (copy / "policies").mkdir()
    (copy / "policies" / "requirements.txt").write_text("")
    (copy / "requirements.txt").write_text("")
    return copy


def _make(checkout: Path, python: str) -> subprocess.CompletedProcess:
    # A fresh make, as a user runs it: not a sub-make of `make test` (which would print `make[1]: ...`).
    outer = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    env["PIP_NO_INDEX"] = "1"  # `pip install --upgrade pip` keeps the venv's own pip offline
    command = ["make", "--no-print-directory", "venv/.installed", f"PYTHON={python}"]
    return subprocess.run(command, cwd=checkout, capture_output=True, text=True, timeout=300, env=env)


def test_the_minimum_is_read_from_the_components_and_the_cli_agrees():
    assert NEEDED == (3, 11)
    preview = (ROOT / "tools" / "preview" / "pyproject.toml").read_text()
    assert re.search(r'^requires-python = ">=(\d+)\.(\d+)"', preview, re.M).groups() == tuple(map(str, NEEDED))


@pytest.mark.parametrize("real", [False, True], ids=["fake-3.10", "real-3.10"])
def test_an_old_python_gets_one_line_and_no_venv(real, fake_310, checkout):
    pythons = _pythons_310() if real else [fake_310]
    if not pythons:
        pytest.skip("no Python 3.10 on this machine; the fake-3.10 case covers the check")
    result = _make(checkout, pythons[0])
    assert result.returncode != 0
    ours = [line for line in result.stderr.splitlines() if not re.match(r"make(\[\d+\])?: ", line)]
    assert len(ours) == 1, result.stderr
    assert ours[0].startswith("tpu-stacks needs Python 3.11 or newer; found 3.10.")
    assert f" at {pythons[0] if real else sys.executable}: " in ours[0]
    assert ours[0].endswith("set PYTHON=python3.11 (e.g. `make plan PYTHON=python3.11`)")
    assert not (checkout / "venv").exists()


def test_a_new_enough_python_passes_the_check(tmp_path):
    assert check_python.refusal(tuple(sys.version_info), sys.executable, NEEDED) == ""
    assert check_python.refusal((3, 10, 12), "/usr/bin/python3", NEEDED).startswith("tpu-stacks needs Python 3.11")
    assert check_python.refusal((3, 12, 0), "/usr/bin/python3", NEEDED) == ""


def _venv_from(python: str, where: Path, pip: bool = False) -> None:
    subprocess.run([python, "-m", "venv", *([] if pip else ["--without-pip"]), str(where)], check=True)


def _stale(venv: Path, kind: str) -> None:
    """Make `venv` what an old Python, a removed interpreter or an interrupted install leaves."""
    if kind == "old-python":
        cfg = venv / "pyvenv.cfg"
        cfg.write_text(re.sub(r"(?m)^version(_info)? = .*$", "version = 3.10.12", cfg.read_text()))
    elif kind == "removed-interpreter":
        (venv / "bin" / "python").unlink()
        (venv / "bin" / "python").symlink_to("/nonexistent/python3.10")
    if kind != "no-stamp":
        (venv / ".installed").touch()
        os.utime(venv / ".installed", (0, 0))  # older than requirements.txt: make reruns the install


def test_make_recreates_a_venv_an_old_python_made(checkout):
    venv = checkout / "venv"
    _venv_from(sys.executable, venv)
    _stale(venv, "old-python")
    result = _make(checkout, sys.executable)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip() == "venv/ was made by Python 3.10: recreating it"
    assert check_python.venv_version(str(venv)) == tuple(sys.version_info[:2])
    assert (venv / ".installed").exists() and (venv / "bin" / "pip").exists()


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("old-python", "/ was made by Python 3.10"),
        ("removed-interpreter", "/bin/python is missing or points at a removed interpreter"),
        ("no-stamp", ""),  # `pulumi install` makes one; the stamp rule's pip install finishes it
        ("finished", ""),
    ],
)
def test_which_venvs_are_recreated(kind, reason, tmp_path, capsys):
    venv = tmp_path / "venv"
    _venv_from(sys.executable, venv)
    if kind == "finished":
        (venv / ".installed").touch()
    else:
        _stale(venv, kind)
    assert check_python.main(["--venv", str(venv)]) == 0
    said = capsys.readouterr().err
    if reason:
        assert said == f"{venv}{reason}: recreating it\n"
        assert not venv.exists()
    else:
        assert said == "" and venv.exists()
