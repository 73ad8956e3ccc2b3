"""The traffic model is never fitted on its judge: the held-out rows of tests/traffic/judge/judged_rows.toml.

Two checks: no fitting module names the judge file (a grep of their source), and fitting the model and running
its calibration opens no file under tests/traffic/judge (an audit hook on `open`, in a fresh interpreter so no
module is already imported and nothing is cached: the probe asserts the fit and the replay really ran there,
since tpu_stacks.traffic.fit and .bench keep their results within a process).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JUDGE_DIR = Path(__file__).resolve().parent / "judge"
JUDGE_FILE = JUDGE_DIR / "judged_rows.toml"
FITTING_MODULES = (
    *sorted((ROOT / "components/tpu_stacks/traffic").glob("*.py")),
    ROOT / "components/tpu_stacks/catalog/engine_traffic.py",
    ROOT / "components/tpu_stacks/catalog/throughput_measurements.py",
)


def test_the_judge_file_lists_every_held_out_row_with_its_source() -> None:
    rows = tomllib.loads(JUDGE_FILE.read_text())["row"]
    assert len(rows) == 11
    for row in rows:
        assert len(row["commit"]) == 40 and row["file"] and row["lines"], row["id"]
        assert row["output_tokens_per_second"] > 0, row["id"]
    files = {(row["repo"], row["file"]) for row in rows}
    assert files == {
        ("AI-Hypercomputer/tpu-recipes", "inference/trillium/vLLM/Llama3.3/README.md"),
        ("AI-Hypercomputer/tpu-recipes", "inference/ironwood/vLLM/Qwen3-32B/README.md"),
        ("AI-Hypercomputer/jetstream-pytorch", "benchmarks/summary.md"),
    }


def test_no_fitting_module_names_the_judge() -> None:
    assert len(FITTING_MODULES) > 3
    for module in FITTING_MODULES:
        text = module.read_text()
        for name in (JUDGE_FILE.name, "tests/traffic/judge", "tests.traffic.judge", "judged_rows"):
            assert name not in text, f"{module.relative_to(ROOT)} names {name}"


_PROBE = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and args else None)
import tpu_stacks.traffic.calibration as calibration
from tpu_stacks.traffic import bench, fit
assert fit._fitted.cache_info().currsize == bench._schedule.cache_info().currsize == 0
calibration.fit_all()
calibration.markdown_table()
assert fit._fitted.cache_info().misses > 0 and bench._schedule.cache_info().misses > 0
import os
judge = sys.argv[1]
print("\\n".join(path for path in opened if os.path.realpath(path).startswith(judge)))
"""


def test_fitting_opens_no_judge_file() -> None:
    # the judge's folder by its full path: a checkout whose own path says "judge" opens nothing of it
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(JUDGE_DIR.resolve())], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "", done.stdout
