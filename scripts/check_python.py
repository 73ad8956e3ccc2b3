"""Run by `make` with the interpreter that is about to build venv/: refuse an old Python in one line, and
clear a venv/ that cannot be finished (made by an old Python, or its interpreter gone) so that the next
install starts clean instead of failing the same way again.

The minimum is read from components/pyproject.toml `requires-python` (the one place it is written; pip
refuses an older interpreter there, but only after a screen of resolver errors). This file must itself
run on the interpreters it refuses, so it keeps to syntax every Python 3 reads: no f-strings, no
`tomllib` (3.11+), no generic annotations.

    python3 scripts/check_python.py --venv venv   # exit 0: go on; exit 1: one line on stderr says why
"""

import argparse
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "components", "pyproject.toml")
STAMP = ".installed"


def minimum(pyproject: str = PYPROJECT) -> tuple:
    """`requires-python = ">=3.11"` as (3, 11)."""
    with open(pyproject) as handle:
        found = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', handle.read(), re.MULTILINE)
    if found is None:
        raise SystemExit('%s: no `requires-python = ">=X.Y"` line' % pyproject)
    return int(found.group(1)), int(found.group(2))


def refusal(version: tuple, executable: str, needed: tuple) -> str:
    """The one line for an interpreter older than `needed`, or "" when it is new enough."""
    if tuple(version[:2]) >= needed:
        return ""
    want = "%d.%d" % needed
    found = ".".join(str(part) for part in version[:3])
    fix = "set PYTHON=python%s (e.g. `make plan PYTHON=python%s`)" % (want, want)
    return "tpu-stacks needs Python %s or newer; found %s at %s: %s" % (want, found, executable, fix)


def venv_version(venv: str) -> tuple:
    """The Python a virtualenv was made with, from its pyvenv.cfg (`version = 3.10.12`, or `version_info`
    on newer CPython); () when the file or the line is missing."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg")) as handle:
            text = handle.read()
    except OSError:
        return ()
    found = re.search(r"^version(?:_info)?\s*=\s*(\d+)\.(\d+)", text, re.MULTILINE)
    return (int(found.group(1)), int(found.group(2))) if found else ()


def stale_reason(venv: str, needed: tuple) -> str:
    """Why an existing venv/ must be made again, or "" to keep it (absent, or complete and usable)."""
    if not os.path.isdir(venv):
        return ""
    made_with = venv_version(venv)
    if made_with and made_with < needed:
        return "%s/ was made by Python %d.%d" % ((venv,) + made_with)
    if not os.path.exists(os.path.join(venv, "bin", "python")):  # follows the link: a removed interpreter
        return "%s/bin/python is missing or points at a removed interpreter" % venv
    # A venv/ without the stamp is kept: `pulumi install` makes one (README), and an interrupted install is
    # finished by the stamp rule's `pip install -r`, which installs only what is missing.
    return ""


def main(argv: list = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default="venv", help="the virtualenv make builds (default: venv)")
    args = parser.parse_args(argv)
    needed = minimum()
    line = refusal(tuple(sys.version_info), sys.executable, needed)
    if line:
        sys.stderr.write(line + "\n")
        return 1
    reason = stale_reason(args.venv, needed)
    if reason:
        sys.stderr.write("%s: recreating it\n" % reason)
        shutil.rmtree(args.venv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
