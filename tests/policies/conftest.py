"""Make the pack's `tpu_policies` package importable, as `python policies` does (sys.path[0])."""

import sys
from pathlib import Path

PACK_DIR = Path(__file__).resolve().parents[2] / "policies"
if str(PACK_DIR) not in sys.path:
    sys.path.insert(0, str(PACK_DIR))
