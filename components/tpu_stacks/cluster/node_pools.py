"""Node pools from decided `PoolPlan`s: the GKE fields each capacity and slice shape needs.

Field rules come from [TF], [PUL], [CTK] and [XPK] and from reports of
what GKE rejects: COMPACT placement with `tpu_topology` only for
multi-host slices; for multi-host tpu7x a HIGH_THROUGHPUT workload policy and no placement type
(GKE refuses "placement policy" for tpu7x, and reports no type back: setting one would replace
the pool on every apply, vllm-project/ci-infra#547); per-zone autoscaling limits (GKE validates
the per-zone maximum of a TPU slice pool, ci-infra#545, and [CTK] needs them for flex-start; every
TPU pool has exactly one zone, so per-zone equals total); GKE_METADATA.
Flex-start and queued pools carry GKE's documented companions, decided in `PoolPlan` from the
catalogue (DWS_*): `--flex-start` (queued provisioning is flex-start with queued provisioning),
`--reservation-affinity=none`, `--no-enable-autorepair`, `--location-policy=ANY`, autoscaling
from 0, and on queued pools the `cloud.google.com/gke-queued` label their pods select.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from tpu_stacks import names
from tpu_stacks.cluster.plan import ClusterPlan, PoolPlan
from tpu_stacks.names import SYSTEM_POOL_NAME, region_of, workload_policy_name

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


NODE_ROLE = "roles/container.defaultNodeServiceAccount"
"""GKE's least-privilege role for node service accounts (logs, metrics, node operations)."""


def node_account_id(plan: ClusterPlan) -> str:
    """`<cluster>-nodes`, within the 6-30 characters a service account id may have (names.py)."""
    return names.node_account_id(plan.spec.name)


def node_service_account(
    plan: ClusterPlan, prefix: str, parent: pulumi.Resource, after: Sequence[pulumi.Resource] = ()
) -> tuple[pulumi.Input[str] | None, list[pulumi.Resource]]:
    """The nodes' identity (the user's account, or a new one with only GKE's node role) and the grants
    that must exist before anything runs as it (the cluster waits for them: nodes that start before
    their role is granted cannot write logs or report metrics until IAM catches up).

    Not the project's default Compute Engine account, which often holds project Editor: every
    host-network pod (and any pod that escapes its container) would hold that too.
    """
    if plan.spec.node_service_account or plan.spec.existing:
        return plan.spec.node_service_account, []
    child = pulumi.ResourceOptions(parent=parent, depends_on=list(after))
    account = gcp.serviceaccount.Account(
        f"{prefix}-nodes",
        gcp.serviceaccount.AccountArgs(
            account_id=node_account_id(plan),
            project=plan.spec.project,
            display_name=f"Nodes of GKE cluster {plan.spec.name} (tpu-stacks)",
        ),
        opts=child,
    )
    role = gcp.projects.IAMMember(
        f"{prefix}-nodes-role",
        gcp.projects.IAMMemberArgs(
            project=plan.spec.project, role=NODE_ROLE, member=account.email.apply(lambda e: f"serviceAccount:{e}")
        ),
        opts=child,
    )
    return account.email, [role]


def _reservation_affinity(pool: PoolPlan) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs | None:
    affinity = pool.reservation_affinity
    if affinity is None:
        return None
    if pool.reservation:
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type=affinity, key=RESERVATION_KEY, values=[pool.reservation]
        )
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type=affinity)


def _autoscaling(pool: PoolPlan) -> gcp.container.NodePoolAutoscalingArgs | None:
    if pool.autoscaling_max is None:
        return None
    return gcp.container.NodePoolAutoscalingArgs(
        min_node_count=pool.autoscaling_min,
        max_node_count=pool.autoscaling_max,
        location_policy=pool.location_policy,
    )


def _workload_policy(
    plan: ClusterPlan, pool: PoolPlan, prefix: str, parent: pulumi.Resource
) -> gcp.compute.ResourcePolicy:
    """tpu7x multi-host slices are placed by a HIGH_THROUGHPUT workload policy ([CTK], [XPK])."""
    region = region_of(pool.zone)
    return gcp.compute.ResourcePolicy(
        f"{prefix}-{pool.name}-placement",
        gcp.compute.ResourcePolicyArgs(
            name=workload_policy_name(plan.spec.name, pool.name),
            project=plan.spec.project,
            region=region,
            workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(
                type="HIGH_THROUGHPUT", accelerator_topology=pool.shape.topology
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _placement(
    plan: ClusterPlan, pool: PoolPlan, prefix: str, parent: pulumi.Resource
) -> gcp.container.NodePoolPlacementPolicyArgs | None:
    if not pool.multi_host:
        return None  # `--tpu-topology` must not be set on single-host pools ([XPK])
    if pool.uses_workload_policy:
        policy = _workload_policy(plan, pool, prefix, parent)
        return gcp.container.NodePoolPlacementPolicyArgs(
            type="", tpu_topology=pool.shape.topology, policy_name=policy.name
        )
    return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=pool.shape.topology)


def tpu_node_pool(
    plan: ClusterPlan,
    pool: PoolPlan,
    cluster_name: pulumi.Input[str],
    prefix: str,
    parent: pulumi.Resource,
    service_account: pulumi.Input[str] | None = None,
) -> gcp.container.NodePool:
    """Declare one TPU node pool exactly as decided in `pool`."""
    advanced = (
        gcp.container.NodePoolNodeConfigAdvancedMachineFeaturesArgs(threads_per_core=pool.threads_per_core)
        if pool.threads_per_core
        else None
    )
    node_config = gcp.container.NodePoolNodeConfigArgs(
        machine_type=pool.shape.machine_type,
        spot=pool.spot or None,
        flex_start=pool.flex_start or None,
        max_run_duration=pool.max_run_duration,
        reservation_affinity=_reservation_affinity(pool),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
        advanced_machine_features=advanced,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        service_account=service_account,
        labels=pool.node_labels(),
    )
    autoscaling = _autoscaling(pool)
    return gcp.container.NodePool(
        f"{prefix}-{pool.name}",
        gcp.container.NodePoolArgs(
            name=pool.name,
            cluster=cluster_name,
            location=plan.spec.location,
            project=plan.spec.project,
            node_locations=[pool.zone],
            node_count=pool.node_count,
            initial_node_count=pool.autoscaling_min if autoscaling and pool.autoscaling_min else None,
            autoscaling=autoscaling,
            placement_policy=_placement(plan, pool, prefix, parent),
            queued_provisioning=(
                gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if pool.queued_provisioning else None
            ),
            max_pods_per_node=pool.max_pods_per_node,
            management=gcp.container.NodePoolManagementArgs(auto_repair=pool.auto_repair, auto_upgrade=True),
            node_config=node_config,
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def system_node_pool(
    plan: ClusterPlan,
    cluster_name: pulumi.Input[str],
    prefix: str,
    parent: pulumi.Resource,
    service_account: pulumi.Input[str] | None = None,
) -> gcp.container.NodePool:
    """The CPU pool for kube-system and add-on pods (one per Standard cluster, [D-GKE-TPU])."""
    system = plan.spec.system_pool
    return gcp.container.NodePool(
        f"{prefix}-{SYSTEM_POOL_NAME}",
        gcp.container.NodePoolArgs(
            name=SYSTEM_POOL_NAME,
            cluster=cluster_name,
            location=plan.spec.location,
            project=plan.spec.project,
            node_locations=list(plan.node_locations) or None,
            node_count=system.nodes,
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=system.machine_type,
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                service_account=service_account,
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


JOBS_LOCATION_POLICY = "ANY"
"""The jobs pool's node may come up in any zone of the cluster: a Job that writes to a bucket needs no zone, and
`BALANCED` (the provider's other value: "a best effort policy that aims to balance the sizes of available zones")
only matters to a pool of many nodes."""
NO_SCHEDULE = "NO_SCHEDULE"
"""Kubernetes' NoSchedule, as GKE's node pool API spells a taint's effect (the provider's `taint.effect` values)."""


def jobs_node_pool(
    plan: ClusterPlan,
    cluster_name: pulumi.Input[str],
    prefix: str,
    parent: pulumi.Resource,
    service_account: pulumi.Input[str] | None = None,
) -> gcp.container.NodePool | None:
    """The CPU pool for large Jobs (cluster/jobs_pool.py), if the plan has one: 0 nodes until a Job's pod asks for
    one (ledger: gke.autoscaler.scale-from-zero), total limits across the cluster's zones, tainted so that only the
    Jobs that tolerate it land there, and the boot disk the machine's series attaches (an N4 attaches no pd-balanced).
    No initial node count: the provider creates the pool with 0 nodes (`InitialNodeCount` stays 0)."""
    jobs = plan.jobs_pool
    if jobs is None:
        return None
    key, value = jobs.taint
    return gcp.container.NodePool(
        f"{prefix}-{jobs.name}",
        gcp.container.NodePoolArgs(
            name=jobs.name,
            cluster=cluster_name,
            location=plan.spec.location,
            project=plan.spec.project,
            node_locations=list(jobs.zones) or None,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=0, total_max_node_count=jobs.max_nodes, location_policy=JOBS_LOCATION_POLICY
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=jobs.machine_type,
                disk_type=jobs.disk_type,
                taints=[gcp.container.NodePoolNodeConfigTaintArgs(key=key, value=value, effect=NO_SCHEDULE)],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                service_account=service_account,
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
