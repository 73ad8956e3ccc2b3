"""How the offline plan scales with program size: `make bench` (or `python benchmarks/plan_scaling.py`).

Generates a synthetic Pulumi program with N resources (GCS buckets plus Kubernetes Deployments
and ConfigMaps inside components, behind one explicit Kubernetes provider), then times each step
of `tpu-stacks plan`: preview run, up run, manifest rendering, strict schema validation and,
with --policy-pack, the policy pack in-process and over gRPC. Prints one row per size; it
asserts nothing, so a slow machine never fails it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.policy import run_policy_pack
from tpu_stacks_preview.schema import validate_objects

PROGRAM = """\
import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

GROUPS = {groups}
cluster = gcp.container.Cluster("bench", location="us-central2-b", initial_node_count=1)
kubeconfig = pulumi.Output.all(cluster.name, cluster.endpoint).apply(lambda a: f"server: https://{{a[1]}}")
provider = k8s.Provider("gke", kubeconfig=kubeconfig)


class Group(pulumi.ComponentResource):
    def __init__(self, name, opts):
        super().__init__("bench:index:Group", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = gcp.storage.Bucket(f"{{name}}-data", location="US", opts=child)
        k8s.core.v1.ConfigMap(
            f"{{name}}-cfg", metadata={{"name": f"{{name}}-cfg", "namespace": "bench"}},
            data={{"bucket": bucket.name}}, opts=child,
        )
        k8s.apps.v1.Deployment(
            f"{{name}}-app",
            metadata={{"name": f"{{name}}-app", "namespace": "bench"}},
            spec={{
                "replicas": 1,
                "selector": {{"matchLabels": {{"app": name}}}},
                "template": {{
                    "metadata": {{"labels": {{"app": name}}}},
                    "spec": {{"containers": [{{"name": "app", "image": "registry.example/app:1.0",
                                              "env": [{{"name": "BUCKET", "value": bucket.name}}]}}]}},
                }},
            }},
            opts=child,
        )
        self.register_outputs({{"bucket": bucket.name}})


for index in range(GROUPS):
    Group(f"g{{index}}", pulumi.ResourceOptions(providers=[provider]))
"""


def write_program(directory: Path, groups: int) -> None:
    (directory / "Pulumi.yaml").write_text("name: bench\nruntime: python\n")
    (directory / "Pulumi.bench.yaml").write_text("config:\n  gcp:project: bench-project\n")
    (directory / "__main__.py").write_text(textwrap.dedent(PROGRAM.format(groups=groups)))


def timed(step, *args, **kwargs):
    """(result, seconds) of one call."""
    started = time.perf_counter()
    result = step(*args, **kwargs)
    return result, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500,1000", help="approximate resource counts")
    parser.add_argument("--policy-pack", type=Path, help="also time this policy pack")
    parser.add_argument("--crds", type=Path, help="CRD directory for schema validation")
    args = parser.parse_args(argv)

    header = f"{'resources':>9} {'preview':>8} {'up':>7} {'render':>7} {'schema':>7}"
    if args.policy_pack:
        header += f" {'policy-in':>9} {'policy-grpc':>11}"
    print(header + f" {'maxrss':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        groups = max(1, (size - 4) // 4)  # stack, cluster, provider + 4 per group
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            write_program(project, groups)
            preview, t_preview = timed(run_program, project, "bench", preview=True)
            up, t_up = timed(run_program, project, "bench", preview=False)
            for capture in (preview, up):
                if capture.error is not None:
                    print(f"program failed: {capture.error.message}", file=sys.stderr)
                    return 1
            manifests, t_render = timed(render_manifests, up)
            report, t_schema = timed(validate_objects, manifests, crd_dir=args.crds, project_dir=project)
            row = f"{len(up.resources):>9} {t_preview:>7.2f}s {t_up:>6.2f}s {t_render:>6.2f}s {t_schema:>6.2f}s"
            if report.problems:
                print(f"unexpected schema problems: {report.problems[:3]}", file=sys.stderr)
            if args.policy_pack:
                _, t_in = timed(run_policy_pack, args.policy_pack, preview, transport="in-process")
                _, t_grpc = timed(run_policy_pack, args.policy_pack, preview, transport="subprocess")
                row += f" {t_in:>8.2f}s {t_grpc:>10.2f}s"
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(row + f" {maxrss:>5.0f}MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
