"""`tpu-stacks plan` and its floor side by side with xpk's dry run of the same cluster: `make bench`.

xpk (https://github.com/AI-Hypercomputer/xpk) prints the gcloud and kubectl commands of `xpk cluster create` without
running them (`--dry-run`): the yardstick issue 34 set the plan against. Three commands run in turn, round after
round (xpk, the floor, the plan, xpk, ...), so the machine's drift moves all three alike, and each ratio is taken
within a round, then the median over the rounds is printed:
- xpk 1.16.0's dry run of a two-slice v5e 4x8 cluster (`v5litepod-32`, two slices): `saxml`'s cluster;
- the floor: a fresh interpreter that only imports what that plan's resources are declared with (pulumi, the
  Kubernetes SDK's core, apps, batch, networking, rbac and meta v1 and yaml v2 (the JobSet controller's
  ConfigGroup, whose package also loads the SDK's yaml v1 module and with it `requests`), the Google SDK's
  container, storage, monitoring, serviceaccount and projects modules, each touched through an Args class, since
  the Google SDK loads its modules on first use): no plan can go below it;
- `tpu-stacks plan --stack saxml` with the policy pack, as users run it (the console script, the pack over gRPC).
Wall and CPU seconds are the finished child's own accounting (`os.wait4`: user + system, the processes it waited
for included, so the pack's process counts). It asserts nothing: a slow machine never fails it.

xpk is not a dependency of this project. Install the version measured in a virtualenv of its own and name it:

    python3 -m venv /tmp/xpk-venv && /tmp/xpk-venv/bin/pip install xpk==1.16.0
    XPK=/tmp/xpk-venv/bin/xpk make bench        # or: venv/bin/python benchmarks/plan_vs_xpk.py --xpk PATH

Without it (no --xpk, no $XPK, no `xpk` on PATH) the comparison is skipped with one line saying so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")
XPK_VERSION = "1.16.0"
STACK = "saxml"
XPK_ARGS = (
    "cluster create --cluster saxml --tpu-type v5litepod-32 --num-slices 2 --zone us-central1-a "
    "--project my-tpu-project --on-demand --dry-run"
).split()
"""`saxml`'s cluster (Pulumi.saxml.yaml: two v5e 4x8 slices, on demand) as xpk names it."""

SDK_FLOOR = """\
import gc
gc.disable()
import pulumi, pulumi_gcp
from pulumi_kubernetes.core import v1 as core
from pulumi_kubernetes.apps import v1 as apps
from pulumi_kubernetes.batch import v1 as batch
from pulumi_kubernetes.networking import v1 as networking
from pulumi_kubernetes.rbac import v1 as rbac
from pulumi_kubernetes.meta import v1 as meta
from pulumi_kubernetes.yaml import v2 as yaml_v2
core.ServiceArgs, apps.DeploymentArgs, batch.JobArgs, networking.NetworkPolicyArgs, rbac.RoleArgs, meta.ObjectMetaArgs
yaml_v2.ConfigGroup
gcp = pulumi_gcp
gcp.container.ClusterArgs, gcp.storage.BucketArgs, gcp.monitoring.AlertPolicyArgs
gcp.serviceaccount.AccountArgs, gcp.projects.IAMMemberArgs
gc.freeze()
"""
"""The provider SDK modules the plan's resources come from, imported and nothing else (the console script keeps the
cyclic collector off while loading too)."""


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    code: int


def run(command: list[str], cwd: Path = ROOT) -> Run:
    """One run of `command`: its wall clock, its CPU (user + system, its waited-for children included), exit code."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(wall, usage.ru_utime + usage.ru_stime, process.returncode)


def find_xpk(given: str | None) -> str | None:
    """xpk's console script: --xpk, else $XPK, else `xpk` on PATH; None when there is none."""
    candidate = given or os.environ.get("XPK") or shutil.which("xpk")
    if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
        return candidate
    return None


def xpk_version(xpk: str) -> str:
    """The version xpk reports (`xpk version` prints `xpk_version: X.Y.Z`), or '?'."""
    result = subprocess.run([xpk, "version"], capture_output=True, text=True, check=False, timeout=120)
    for line in (result.stdout + result.stderr).splitlines():
        if "xpk_version:" in line:
            return line.split("xpk_version:", 1)[1].strip()
    return "?"


def paired_ratio(runs: list[Run], baseline: list[Run], attribute: str) -> float:
    """The median over rounds of run / baseline within each round (pairing keeps drift out of the ratio)."""
    return statistics.median(getattr(a, attribute) / getattr(b, attribute) for a, b in zip(runs, baseline, strict=True))


def table(cases: dict[str, list[Run]], baseline: str) -> list[str]:
    """One line per case: median wall and CPU, and the ratios to `baseline`, pair by pair."""
    lines = [f"{'case':<34} {'wall s':>7} {'cpu s':>7} {'x xpk wall':>11} {'x xpk cpu':>10} {'exit':>5}"]
    for name, runs in cases.items():
        wall = statistics.median(r.wall for r in runs)
        cpu = statistics.median(r.cpu for r in runs)
        ratios = (paired_ratio(runs, cases[baseline], "wall"), paired_ratio(runs, cases[baseline], "cpu"))
        codes = ",".join(sorted({str(r.code) for r in runs}))
        lines.append(f"{name:<34} {wall:>7.2f} {cpu:>7.2f} {ratios[0]:>10.2f}x {ratios[1]:>9.2f}x {codes:>5}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--xpk", help="xpk's console script (default: $XPK, else `xpk` on PATH)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds counted, after one warm-up round (default 5)")
    parser.add_argument("--no-policy", action="store_true", help="plan without the policy pack")
    args = parser.parse_args(argv)
    xpk = find_xpk(args.xpk)
    if xpk is None:
        print(
            f"side by side with xpk: skipped, no xpk found (--xpk, $XPK or PATH); to compare, install xpk "
            f"{XPK_VERSION} in a venv of its own: python3 -m venv /tmp/xpk-venv && /tmp/xpk-venv/bin/pip install "
            f"xpk=={XPK_VERSION}, then XPK=/tmp/xpk-venv/bin/xpk make bench"
        )
        return 0
    version = xpk_version(xpk)
    plan = [PLAN, "plan", "--stack", STACK, "--placeholder-secrets"]
    if not args.no_policy:
        plan += ["--policy-pack", "policies"]
    commands = {
        "xpk cluster create --dry-run": [xpk, *XPK_ARGS],
        "floor (the SDK modules, imported)": [sys.executable, "-c", SDK_FLOOR],
        f"tpu-stacks plan --stack {STACK}": plan,
    }
    cases: dict[str, list[Run]] = {name: [] for name in commands}
    for round_ in range(args.rounds + 1):  # the first round warms the caches and is not counted
        for name, command in commands.items():
            result = run(command)
            if round_:
                cases[name].append(result)
    note = "" if version == XPK_VERSION else f" (measured with {XPK_VERSION}: the figures may not compare)"
    pack = "no policy pack" if args.no_policy else "policy pack over gRPC"
    print(f"side by side with xpk {version}{note}: {args.rounds} rounds in turn, medians; {pack}")
    print("\n".join(table(cases, "xpk cluster create --dry-run")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
