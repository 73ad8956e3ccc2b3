"""How `tpu-stacks plan` scales with slices and workloads, timed as users run it: `make bench`.

Writes temporary stacks of this project with 1, 10 and 100 TPU slices (the `cluster` scenario:
one multi-host v5e 4x8 pool per slice plus a Workload Identity ServiceAccount), runs the real
console script on each (a fresh process: imports, preview and up runs, schemas, and with
--policy-pack the pack over gRPC), then does the same for every shipped stack. Prints wall
time, peak memory of the process and the ratio to the smallest case. Asserts nothing: a slow
machine never fails it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")


def cluster_stack(slices: int) -> dict:
    return {
        "config": {
            "gcp:project": "bench-project",
            "tpu-stacks:scenario": "cluster",
            "tpu-stacks:cluster": {
                "name": "bench",
                "location": "us-central1-a",
                "slices": [
                    {"generation": "v5e", "topology": "4x8", "name": f"slice-{index}"} for index in range(slices)
                ],
            },
        }
    }


def timed_plan(project: Path, stack: str, policy_pack: bool, repeat: int) -> tuple[float, float, int]:
    """Best wall time of `repeat` runs, the peak RSS (MiB) of the plan process, and the exit code."""
    best, peak, code = float("inf"), 0.0, 0
    command = [PLAN, "plan", "--cwd", str(project), "--stack", stack]
    if policy_pack:
        command += ["--policy-pack", str(ROOT / "policies")]
    for _ in range(repeat):
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own peak RSS, not the maximum so far
        best = min(best, time.perf_counter() - started)
        peak = max(peak, usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
        process.returncode = code
    return best, peak, code


def copy_program(directory: Path) -> None:
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "stacks", directory / "stacks", ignore=shutil.ignore_patterns("__pycache__"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,100", help="slice counts")
    parser.add_argument("--repeat", type=int, default=2, help="runs per case (the best is kept)")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    args = parser.parse_args()
    with_policy = not args.no_policy and (ROOT / "policies" / "PulumiPolicy.yaml").exists()
    print(f"tpu-stacks plan, best of {args.repeat}; policy pack: {'yes (gRPC)' if with_policy else 'no'}")
    print(f"{'case':<28} {'wall s':>8} {'ratio':>7} {'peak MiB':>9} {'exit':>5}")
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch)
        copy_program(project)
        base = None
        for slices in [int(size) for size in args.sizes.split(",")]:
            stack = f"slices{slices}"
            (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(cluster_stack(slices)))
            wall, peak, code = timed_plan(project, stack, with_policy, args.repeat)
            base = base or wall
            print(f"{f'cluster, {slices} slice(s)':<28} {wall:>8.2f} {wall / base:>7.2f} {peak:>9.0f} {code:>5}")
    base = None
    for stack_file in sorted(ROOT.glob("Pulumi.*.yaml")):
        stack = stack_file.name[len("Pulumi.") : -len(".yaml")]
        wall, peak, code = timed_plan(ROOT, stack, with_policy, args.repeat)
        base = base or wall
        print(f"{f'stack {stack}':<28} {wall:>8.2f} {wall / base:>7.2f} {peak:>9.0f} {code:>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
