"""Every shipped stack plans cleanly offline: no program error, every Kubernetes object valid
against the strict schemas and CRDs, and zero mandatory policy violations."""

from pathlib import Path

import pytest
import yaml

from stacks.shipped import stack_files
from tests.shipped import shipped
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.policy import run_policy_pack
from tpu_stacks_preview.schema import validate_objects

ROOT = Path(__file__).resolve().parents[2]
STACKS = list(stack_files(ROOT))
# Stacks that run a workload (every scenario but `cluster`, which builds a cluster and an identity only).
WORKLOAD_STACKS = [
    stack
    for stack in STACKS
    if yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"].get("tpu-stacks:scenario", "cluster")
    != "cluster"
]


def planned(stack: str):
    """(preview, up) captures of a shipped stack, shared by every test module (tests/shipped.py)."""
    return shipped(stack, preview=True), shipped(stack)


@pytest.mark.parametrize("stack", STACKS)
def test_stack_runs_and_validates(stack):
    preview, up = planned(stack)
    assert preview.error is None and up.error is None, (preview.error, up.error)
    manifests = render_manifests(up)
    assert manifests, "every stack renders Kubernetes objects"
    report = validate_objects(manifests, kubernetes_version="1.33", project_dir=ROOT)
    assert report.problems == [], report.problems
    kubernetes = [r for r in up.resources if r.type.startswith("kubernetes:") and r.custom]
    assert all(r.provider for r in kubernetes), "no Kubernetes object may fall back to the ambient kubeconfig"


@pytest.mark.parametrize("stack", STACKS)
def test_stack_has_no_mandatory_violation(stack):
    preview, _ = planned(stack)
    result = run_policy_pack(ROOT / "policies", preview, transport="in-process")
    mandatory = [v for v in result.violations if v.enforcement == "mandatory"]
    assert mandatory == [], mandatory


def test_ci_workflow_previews_every_shipped_stack():
    """The matrices read the workflow's `stacks` job, which lists the stack files (tests/test_ci_workflow.py
    runs its script); saxml-s3ns goes to the S3NS job: another universe, another identity pool."""
    from tests.test_ci_workflow import listed_stacks

    listed = listed_stacks()
    assert sorted(listed["google"] + listed["s3ns"]) == STACKS and listed["s3ns"] == ["saxml-s3ns"]


IAM_TYPES = (
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:projects/iAMMember:IAMMember",
    "gcp:serviceaccount/iAMMember:IAMMember",
)


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_grants_to_the_workload_pool_wait_for_the_cluster(stack):
    """IAM naming PROJECT.svc.id.goog fails until the project's first Workload Identity cluster exists."""
    _, up = planned(stack)
    clusters = [r.urn for r in up.resources if r.type == "gcp:container/cluster:Cluster"]
    by_urn = {r.urn: r for r in up.resources}

    def reaches(urn: str, seen: set[str]) -> bool:
        if urn in clusters:
            return True
        seen.add(urn)
        record = by_urn.get(urn)
        return bool(record) and any(reaches(d, seen) for d in record.dependencies if d not in seen)

    workload_grants = [
        r for r in up.resources if r.type in IAM_TYPES and ("svc.id.goog" in str(r.inputs.get("member", "")))
    ]
    assert clusters and workload_grants
    for grant in workload_grants:
        assert reaches(grant.urn, set()), f"{grant.name} does not wait for the cluster"


@pytest.mark.parametrize("stack", STACKS)
def test_planning_twice_gives_the_same_inputs_and_options(stack):
    """No time-, random- or order-dependent value: a second `pulumi up` must see no diff."""
    _, first = planned(stack)
    again = run_program(ROOT, stack, preview=False)

    def document(capture):
        return [(r.urn, r.inputs, r.options_document()) for r in capture.sorted_resources()]

    assert document(again) == document(first)


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_tpu_workloads_wait_for_their_pools_and_for_as_long_as_their_probes_allow(stack):
    """pulumi-kubernetes waits 10 minutes unless told otherwise, and would start a TPU workload before its
    node pool exists: every object whose pods take TPU chips depends on the stack's TPU pools (dependsOn)
    and has create and update budgets (customTimeouts) that cover its probes, a node and the image."""
    from tpu_stacks.catalog.tpu import generation_of_machine_type
    from tpu_stacks.objects.awaits import AWAITED_KINDS, IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES, start_seconds
    from tpu_stacks.objects.pod_templates import pod_templates

    _, up = planned(stack)
    pools = {  # the TPU capacity: every TPU pool (not the CPU system and jobs pools), and the ComputeClasses
        r.urn
        for r in up.resources
        if (
            r.type == "gcp:container/nodePool:NodePool"
            and generation_of_machine_type(r.inputs["nodeConfig"]["machineType"]) is not None
        )
        or r.type == "kubernetes:cloud.google.com/v1:ComputeClass"
    }
    workloads = [
        r for r in up.resources if r.type.startswith("kubernetes:") and r.custom and "google.com/tpu" in str(r.inputs)
    ]
    assert workloads and pools
    for workload in workloads:
        assert pools <= set(workload.depends_on), workload.name
        kind = workload.inputs.get("kind") or workload.type.rsplit(":", 1)[-1]
        awaited = kind in AWAITED_KINDS or "pulumi.com/waitFor" in workload.inputs["metadata"].get("annotations", {})
        assert awaited, f"{workload.name} would be reported ready at once"
        templates = [found.template for found in pod_templates(kind, workload.inputs)]  # every kind's pods
        longest = max(start_seconds(t) for t in templates)
        needed = NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + -(-longest // 60)
        for operation in ("create", "update"):
            assert int(workload.options.custom_timeouts[operation].removesuffix("m")) >= needed, workload.name
