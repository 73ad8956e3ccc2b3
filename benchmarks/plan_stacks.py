"""How `tpu-stacks plan` scales with slices and workloads, timed as users run it: `make bench`.

Side by side in one run, on this machine:
- every shipped stack as users plan it (the real console script in a fresh process: imports, preview
  and up runs, schemas, the policy pack over gRPC), and all of them in ONE process (`--all`);
- the floor: a fresh process that only imports what a stack needs (the SDKs and the components) and
  exits, the cost no plan can go below;
- temporary `cluster`-scenario stacks of 1, 10, 100 and 300 multi-host v5e 4x8 slices, with the cost
  per added slice, to show whether the plan stays linear.
Prints wall time (best of --repeat), peak memory and the ratios. Asserts nothing: a slow machine never
fails it.
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


FLOOR = (
    "import gc; gc.disable(); import pulumi, pulumi_gcp, pulumi_kubernetes, pulumi_policy;"
    " from tpu_stacks.registry import workloads; [w.component.load() for w in workloads()]; gc.freeze()"
)


def timed_plan(project: Path, stack: str, policy_pack: bool, repeat: int) -> tuple[float, float, int]:
    """Best wall time of `repeat` runs, the peak RSS (MiB) of the plan process, and the exit code."""
    command = [PLAN, "plan", "--cwd", str(project), "--placeholder-secrets"]
    command += ["--all"] if stack == "--all" else ["--stack", stack]
    if policy_pack:
        command += ["--policy-pack", str(ROOT / "policies")]
    return timed(command, repeat)


def timed(command: list[str], repeat: int) -> tuple[float, float, int]:
    best, peak, code = float("inf"), 0.0, 0
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
    parser.add_argument("--sizes", default="1,10,100,300", help="slice counts")
    parser.add_argument("--repeat", type=int, default=2, help="runs per case (the best is kept)")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy pack")
    args = parser.parse_args()
    with_policy = not args.no_policy and (ROOT / "policies" / "PulumiPolicy.yaml").exists()
    print(f"tpu-stacks plan, best of {args.repeat}; policy pack: {'yes (gRPC)' if with_policy else 'no'}")
    print(f"{'case':<28} {'wall s':>8} {'ratio':>7} {'peak MiB':>9} {'exit':>5}")
    floor, floor_peak, _ = timed([sys.executable, "-c", FLOOR], args.repeat)
    print(f"{'floor (imports only)':<28} {floor:>8.2f} {1.0:>7.2f} {floor_peak:>9.0f} {0:>5}")
    stacks = [path.name[len("Pulumi.") : -len(".yaml")] for path in sorted(ROOT.glob("Pulumi.*.yaml"))]
    total = 0.0
    for stack in stacks:
        wall, peak, code = timed_plan(ROOT, stack, with_policy, args.repeat)
        total += wall
        print(f"{f'stack {stack}':<28} {wall:>8.2f} {wall / floor:>7.2f} {peak:>9.0f} {code:>5}")
    wall, peak, code = timed_plan(ROOT, "--all", with_policy, args.repeat)
    print(f"{f'all {len(stacks)} stacks, one process':<28} {wall:>8.2f} {wall / floor:>7.2f} {peak:>9.0f} {code:>5}")
    print(f"  ({len(stacks)} separate processes: {total:.2f} s; one process: {wall / total:.2f} of that)")
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch)
        copy_program(project)
        times: dict[int, float] = {}
        for slices in [int(size) for size in args.sizes.split(",")]:
            stack = f"slices{slices}"
            (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(cluster_stack(slices)))
            wall, peak, code = timed_plan(project, stack, with_policy, args.repeat)
            times[slices] = wall
            first = min(times)
            per_slice = (wall - times[first]) / (slices - first) * 1000 if slices > first else 0.0
            print(
                f"{f'cluster, {slices} slice(s)':<28} {wall:>8.2f} {wall / times[first]:>7.2f} {peak:>9.0f} {code:>5}"
                f"  {per_slice:.1f} ms per added slice"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
