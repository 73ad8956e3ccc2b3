"""What every workload component declares first, the same way: its cluster (exactly as planned), its
namespace, its bucket and the Workload Identity that may use that bucket.

One place for this wiring, so the workloads cannot order or scope it differently: the identity's IAM
waits for the cluster that creates the workload pool, namespaced objects wait for their namespace,
and the bucket grant names only this workload's bucket.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.cluster.plan import ClusterPlan
from tpu_stacks.gcp.apis import STORAGE_APIS, enable_apis
from tpu_stacks.gcp.identity import BucketGrantArgs, WorkloadIdentity, WorkloadIdentityArgs
from tpu_stacks.gcp.storage import hardened_bucket
from tpu_stacks.k8s.namespace import PodSecurityLevel, namespace_dependencies

READ_ROLE = "roles/storage.objectViewer"


@dataclass(frozen=True)
class Foundation:
    cluster: TpuCluster
    namespace_ready: list[pulumi.Resource]
    """What a namespaced object must wait for (the namespace, when the workload creates it)."""
    bucket: gcp.storage.Bucket
    identity: WorkloadIdentity
    storage_api: list[pulumi.Resource]
    """The Cloud Storage API's enablement (empty outside Google Cloud's own universe): another bucket waits for it."""

    def kubernetes_options(self, parent: pulumi.Resource, *after: pulumi.Resource) -> pulumi.ResourceOptions:
        """Options of a namespaced object: this cluster's provider, after the namespace (and `after`)."""
        return pulumi.ResourceOptions(
            parent=parent, provider=self.cluster.provider, depends_on=[*self.namespace_ready, *after]
        )


def declare_foundation(
    parent: pulumi.ComponentResource,
    name: str,
    cluster_plan: ClusterPlan,
    *,
    bucket_suffix: str,
    purpose: str,
    force_destroy: bool,
    namespace: str,
    ksa_name: str,
    gsa_name: str | None = None,
    read_buckets: Sequence[str] = (),
    pod_security: PodSecurityLevel = "restricted",
) -> Foundation:
    """Declare the cluster, namespace, bucket and identity of workload `name`.

    With `gsa_name` the identity is a Google service account the KSA impersonates (the tutorials that
    use one); otherwise IAM names the KSA directly. `read_buckets` are other buckets it may read.
    `pod_security` is the Pod Security level the namespace enforces (k8s.namespace).
    """
    cluster = TpuCluster.from_plan(f"{name}-cluster", cluster_plan, opts=pulumi.ResourceOptions(parent=parent))
    ready = namespace_dependencies(name, namespace, parent, cluster.provider, pod_security)
    # The Cloud Storage API, on in a fresh project before the bucket (gcp/apis.py says why never off).
    storage_api = (
        enable_apis(name, cluster_plan.spec.project, STORAGE_APIS, parent) if cluster_plan.universe.is_default else []
    )
    bucket = hardened_bucket(
        f"{name}-{bucket_suffix}",
        project=cluster_plan.spec.project,
        location=cluster_plan.region,
        purpose=purpose,
        force_destroy=force_destroy,
        parent=parent,
        after=storage_api,
    )
    grants = [BucketGrantArgs(bucket=bucket.name)]
    grants += [BucketGrantArgs(bucket=other, role=READ_ROLE) for other in read_buckets]
    args = WorkloadIdentityArgs(
        project=cluster_plan.spec.project,
        ksa_name=ksa_name,
        namespace=namespace,
        universe=cluster_plan.spec.universe,
        bucket_grants=grants,
    )
    if gsa_name is not None:
        args.update(mode="service-account", gsa_name=gsa_name)
    identity = WorkloadIdentity(
        f"{name}-identity",
        args,
        # IAM that names the workload pool waits for the cluster that creates it.
        opts=pulumi.ResourceOptions(
            parent=parent, providers=[cluster.provider], depends_on=[*ready, *cluster.pool_ready]
        ),
    )
    return Foundation(
        cluster=cluster, namespace_ready=ready, bucket=bucket, identity=identity, storage_api=list(storage_api)
    )
