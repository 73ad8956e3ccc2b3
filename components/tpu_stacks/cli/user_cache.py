"""Where tpu-stacks keeps what it can compute again: one rule for the compiled provider SDKs (sdk_bytecode.py) and
the planner's converted CRD schemas (tools/preview schema.py).

`$TPU_STACKS_CACHE`, else `$XDG_CACHE_HOME/tpu-stacks`, else `~/.cache/tpu-stacks`, made absolute when it is read:
a plan moves into the program's directory while the program runs, and a relative folder would land there. None when
neither variable is set and there is no home directory (a container user without one): nothing is cached then, and
every command still runs.
"""

from __future__ import annotations

import os
from pathlib import Path

VARIABLE = "TPU_STACKS_CACHE"


def cache_dir() -> Path | None:
    """The user's tpu-stacks cache folder (absolute), or None where there is none to use."""
    if os.environ.get(VARIABLE):
        return Path(os.path.abspath(os.environ[VARIABLE]))
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg) if xdg else Path.home() / ".cache"
    except RuntimeError:  # Path.home(): no HOME and no passwd entry
        return None
    return Path(os.path.abspath(base / "tpu-stacks"))
