"""Rules 4-6: the cluster can run what the stack puts on it.

4. Its GKE version supports every TPU generation it hosts: an older control plane or node pool
   fails late (pool creation rejected, or nodes without the TPU device plugin).
5. Workload Identity is on, cluster and every node pool: without it pods read the node's service
   account (every workload gets the node's access) and KSA-to-IAM grants do nothing.
6. The GCS FUSE CSI add-on is on when a pod mounts a bucket, and the pod asks for the sidecar:
   otherwise the model-loading pod waits forever on its volume mount.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from tpu_policies.slices import CLUSTER_TYPE, pools_of
from tpu_policies.stack import Stack, read_stack
from tpu_policies.values import UNKNOWN, as_dict, as_list, as_str, dig, is_true, plain
from tpu_policies.workloads import PodTemplate
from tpu_stacks.catalog.tpu import Generation, generation_of_accelerator, gke_version
from tpu_stacks.errors import UserError

GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCSFUSE_ANNOTATION = "gke-gcsfuse/volumes"


def _too_old(what: str, version: Any, gens: dict[str, Generation], autopilot: bool) -> list[str]:
    text = as_str(version)
    try:
        chosen = gke_version(text) if text else None
    except UserError:
        chosen = None  # "latest", a channel default, or not a GKE version: nothing to compare
    if chosen is None:
        return []
    # A bare minor (`1.34`) is GKE's alias for the highest patch of that minor at create time
    # (Cluster.initialClusterVersion, GKE API reference): judged by its minor, as the program sends it.
    alias = chosen.minor_alias == text.strip()
    problems = []
    for gen_name, gen in sorted(gens.items()):
        minimum = gen.min_gke_autopilot if autopilot else gen.min_gke_standard
        if chosen.key[:2] < minimum.parsed.key[:2] if alias else chosen < minimum.parsed:
            note = "" if minimum.verified else ", not confirmed by a primary source"
            mode = "Autopilot" if autopilot else "Standard"
            problems.append(
                f"{what} {text} is older than TPU {gen_name} supports on GKE {mode} ({minimum.version} or "
                f"later, source {minimum.source}{note}); raise it to {minimum.version} or later"
            )
    return problems


def _versions(stack: Stack) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for cluster in stack.clusters:
        autopilot = stack.autopilot(cluster)
        gens = {
            p.slice.generation.name: p.slice.generation
            for p in stack.pools
            if p.slice and stack.cluster_of(p) is cluster
        }
        if autopilot and len(stack.clusters) == 1:
            for _, templates in stack.tpu_workloads():
                for template in templates:
                    gen = generation_of_accelerator(as_str(template.accelerator) or "")
                    if gen is not None:
                        gens[gen.name] = gen
        what = f"{cluster.label}: minMasterVersion"
        problems += [(cluster.urn, p) for p in _too_old(what, cluster.props.get("minMasterVersion"), gens, autopilot)]
    for pool in stack.pools:
        if pool.slice is not None:
            what = f"node pool {pool.name}: version"
            gens = {pool.slice.generation.name: pool.slice.generation}
            problems += [(pool.item.urn, p) for p in _too_old(what, pool.props.get("version"), gens, False)]
    return problems


def _validate_versions(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for urn, problem in _versions(read_stack(args)):
        report_violation(problem, urn)


def _metadata_mode(what: str, props: dict[str, Any]) -> list[str]:
    mode = dig(props, "nodeConfig", "workloadMetadataConfig", "mode")
    if mode is UNKNOWN or mode == "GKE_METADATA":
        return []
    shown = f"is {mode}" if mode else "is not set"
    return [
        f"{what}: nodeConfig.workloadMetadataConfig.mode {shown}; set it to GKE_METADATA so pods use their own "
        "Kubernetes ServiceAccount's identity instead of the node's service account"
    ]


def _validate_identity(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    props = plain(args.props)
    if args.resource_type == CLUSTER_TYPE:
        if is_true(props.get("enableAutopilot")) or props.get("enableAutopilot") is UNKNOWN:
            return  # Autopilot always runs Workload Identity
        pool = dig(props, "workloadIdentityConfig", "workloadPool")
        if pool is not UNKNOWN and not as_str(pool):
            report_violation(
                "the cluster has no workloadIdentityConfig.workloadPool; set it to PROJECT.svc.id.goog "
                "(Workload Identity) so workloads get Google Cloud access per Kubernetes ServiceAccount",
                None,
            )
        if as_dict(props.get("nodeConfig")) and not is_true(props.get("removeDefaultNodePool")):
            for problem in _metadata_mode("the default node pool", props):
                report_violation(problem, None)
    for name, pool_props in pools_of(args.resource_type, props, args.name):
        for problem in _metadata_mode(f"node pool {name}", pool_props):
            report_violation(problem, None)


def _mounts_gcsfuse(templates: list[PodTemplate]) -> list[PodTemplate]:
    """The pod templates that mount a bucket through the GCS FUSE CSI driver."""
    return [
        t for t in templates if any(dig(v, "csi", "driver") == GCSFUSE_DRIVER for v in as_list(t.spec.get("volumes")))
    ]


def _validate_gcsfuse(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = read_stack(args)
    users: list[str] = []
    for item, templates in stack.workloads:
        for template in _mounts_gcsfuse(templates):
            users.append(item.label)
            sidecar = template.annotations.get(GCSFUSE_ANNOTATION)
            if sidecar is not UNKNOWN and not is_true(sidecar):
                report_violation(
                    f"{item.label}: {template.where} mounts a {GCSFUSE_DRIVER} volume but its pod template lacks "
                    f'the annotation {GCSFUSE_ANNOTATION}: "true"; without it GKE injects no sidecar and the '
                    "mount never completes",
                    item.urn,
                )
    users += [item.label for item in stack.items if dig(item.props, "spec", "csi", "driver") == GCSFUSE_DRIVER]
    if not users or not stack.clusters:
        return
    for cluster in stack.clusters:
        enabled = dig(cluster.props, "addonsConfig", "gcsFuseCsiDriverConfig", "enabled")
        if stack.autopilot(cluster) or enabled is UNKNOWN or is_true(enabled):
            return
    shown = ", ".join(sorted(set(users)))
    for cluster in stack.clusters:
        report_violation(
            f"{cluster.label}: {shown} mount Cloud Storage through {GCSFUSE_DRIVER}, but the GCS FUSE CSI "
            "add-on is off; set addonsConfig.gcsFuseCsiDriverConfig.enabled: true",
            cluster.urn,
        )


VERSION_POLICY = StackValidationPolicy(
    name="gke-version-supports-tpu",
    description="The cluster's minMasterVersion and each TPU node pool's version are at least the catalogue's "
    "minimum GKE version for the TPU generations they run.",
    validate=_validate_versions,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)

IDENTITY_POLICY = ResourceValidationPolicy(
    name="workload-identity-enabled",
    description="Workload Identity is on: the cluster has a workload pool and every node pool uses GKE_METADATA.",
    validate=_validate_identity,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)

GCSFUSE_POLICY = StackValidationPolicy(
    name="gcs-fuse-csi-enabled",
    description="Pods that mount Cloud Storage through the GCS FUSE CSI driver run on a cluster with the add-on "
    "enabled and ask for the sidecar.",
    validate=_validate_gcsfuse,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.MEDIUM,
)
