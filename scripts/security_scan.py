"""Count checkov's failed Kubernetes checks on the rendered manifests of the tutorial stacks.

`make security` runs this (checkov is not a dependency of the project: install it in a venv of its
own, e.g. `python3 -m venv /tmp/checkov && /tmp/checkov/bin/pip install checkov==3.3.30`). Per
stack it plans the stack offline (`tpu-stacks plan --manifests`), then prepares what checkov reads:

- Pod templates inside custom resources (JobSet replicated Jobs, RayCluster head and worker groups,
  a RayJob's submitter and its own cluster spec, a RayService's cluster, LeaderWorkerSet leader and
  worker templates) become Pods in the same namespace, with the template's labels:
  checkov knows no custom resource, so without this their pods would not be checked at all.
- `checkov.io/skip*` annotations are removed: a skip documents a finding, it does not fix it.

It prints one line per stack (`stack: N failed`) and per failed check id, then the total; with
`--max N` it exits 1 when the total exceeds N. docs/security.md explains every remaining finding.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tpu_stacks.objects.pod_templates import CUSTOM_KINDS
from tpu_stacks.objects.pod_templates import pod_templates as walk
from tpu_stacks.registry import workloads

ROOT = Path(__file__).resolve().parents[1]
STACKS = tuple(workload.example_stack for workload in workloads())
"""One shipped stack per registered workload (its descriptor's `example_stack`)."""
SKIP_PREFIX = "checkov.io/skip"


def pod_templates(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(suffix, pod template) of each pod template a custom resource holds; none for built-in kinds,
    which checkov reads itself. Where the templates are is `tpu_stacks.objects.pod_templates`, the walker the
    policy pack uses too."""
    kind = obj.get("kind")
    if kind not in CUSTOM_KINDS:
        return []
    return [(found.name, found.template) for found in walk(kind, obj)]


def as_pod(owner: dict[str, Any], suffix: str, template: dict[str, Any]) -> dict[str, Any]:
    """The Pod a controller would create from `template` (in the owner's namespace)."""
    meta = owner.get("metadata") or {}
    pod_meta = dict(template.get("metadata") or {})
    pod_meta["name"] = f"{meta.get('name', 'pod')}-{suffix}"
    if meta.get("namespace"):
        pod_meta["namespace"] = meta["namespace"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template.get("spec") or {}}


def drop_skips(obj: Any) -> Any:
    """The object without any `checkov.io/skip*` annotation, at any depth."""
    if isinstance(obj, dict):
        return {
            key: drop_skips(value)
            for key, value in obj.items()
            if not (isinstance(key, str) and key.startswith(SKIP_PREFIX))
        }
    if isinstance(obj, list):
        return [drop_skips(item) for item in obj]
    return obj


def prepare(manifests: Path, out: Path) -> int:
    """Write what checkov scans into `out`; returns how many pods were lifted out of custom resources."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    lifted = 0
    for path in sorted(manifests.glob("*.yaml")):
        obj = drop_skips(yaml.safe_load(path.read_text()))
        (out / path.name).write_text(yaml.safe_dump(obj, sort_keys=False))
        for suffix, template in pod_templates(obj):
            pod = as_pod(obj, suffix, template)
            (out / f"pod-from-{path.stem}-{suffix}.yaml").write_text(yaml.safe_dump(pod, sort_keys=False))
            lifted += 1
    return lifted


def plan(stack: str, manifests: Path) -> None:
    command = [
        str(ROOT / "venv" / "bin" / "tpu-stacks"),
        "plan",
        "--stack",
        stack,
        "--policy-pack",
        "policies",
        "--placeholder-secrets",
        "--manifests",
        str(manifests),
    ]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def failed_checks(checkov: str, directory: Path) -> list[dict[str, Any]]:
    run = subprocess.run(
        [checkov, "-d", str(directory), "--framework", "kubernetes", "--output", "json", "--quiet", "--compact"],
        capture_output=True,
        text=True,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"checkov failed ({run.returncode}): {run.stderr.strip()[-500:]}")
    report = json.loads(run.stdout or "{}")
    reports = report if isinstance(report, list) else [report]
    return [check for r in reports for check in (r.get("results") or {}).get("failed_checks", [])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkov", default="checkov", help="the checkov executable (default: on PATH)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tpu-stacks-security"), help="scratch directory")
    parser.add_argument("--stacks", nargs="*", default=list(STACKS))
    parser.add_argument("--max", type=int, default=None, help="exit 1 when more checks fail in total")
    parser.add_argument("--details", action="store_true", help="also list each failed check's resource")
    args = parser.parse_args(argv)
    total = 0
    for stack in args.stacks:
        manifests, scanned = args.work / "manifests" / stack, args.work / "scan" / stack
        plan(stack, manifests)
        lifted = prepare(manifests, scanned)
        failed = failed_checks(args.checkov, scanned)
        total += len(failed)
        print(f"{stack}: {len(failed)} failed ({lifted} pods lifted out of custom resources)")
        for check_id, count in sorted(Counter(f["check_id"] for f in failed).items()):
            print(f"  {check_id} x{count}")
        if args.details:
            for f in sorted(failed, key=lambda f: (f["check_id"], f["resource"])):
                print(f"    {f['check_id']} {f['resource']}: {f.get('check_name', '')}")
    print(f"total: {total} failed")
    return 1 if args.max is not None and total > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
