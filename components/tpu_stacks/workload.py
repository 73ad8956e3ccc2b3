"""What every workload component declares first, the same way: its cluster (exactly as planned), its
namespace, its bucket and the Workload Identity that may use that bucket.

One place for this wiring, so the workloads cannot order or scope it differently: the identity's IAM
waits for the cluster that creates the workload pool, namespaced objects wait for their namespace,
and the bucket grant names only this workload's bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
WRITE_ROLE = "roles/storage.objectUser"
"""Read and write objects, nothing else (the identity's default on its workload's bucket)."""
BucketGrants = Callable[[pulumi.Input[str]], list[BucketGrantArgs]]
"""What an identity may do on the workload's bucket, given the bucket's name (known only once it is declared)."""


def under_prefix(bucket: pulumi.Input[str], prefix: str, title: str) -> gcp.storage.BucketIAMMemberConditionArgs:
    """An IAM condition that limits a bucket grant to the objects under `prefix` (Cloud Storage's resource names:
    projects/_/buckets/BUCKET/objects/OBJECT; conditions need uniform bucket-level access, gcp/storage.py)."""
    expression = pulumi.Output.concat(
        'resource.name.startsWith("projects/_/buckets/', bucket, "/objects/", prefix.strip("/"), '/")'
    )
    return gcp.storage.BucketIAMMemberConditionArgs(title=title, expression=expression)


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
    bucket_grants: BucketGrants | None = None,
) -> Foundation:
    """Declare the cluster, namespace, bucket and identity of workload `name`.

    With `gsa_name` the identity is a Google service account the KSA impersonates (the tutorials that
    use one); otherwise IAM names the KSA directly. `read_buckets` are other buckets it may read.
    `pod_security` is the Pod Security level the namespace enforces (k8s.namespace). `bucket_grants`: what the
    identity may do on the bucket (default: read and write its objects, roles/storage.objectUser).
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
    grants = bucket_grants(bucket.name) if bucket_grants else [BucketGrantArgs(bucket=bucket.name)]
    grants += [BucketGrantArgs(bucket=other, role=READ_ROLE) for other in read_buckets]
    identity = declare_identity(
        parent, f"{name}-identity", cluster_plan, cluster, ready, namespace, ksa_name, grants, gsa_name
    )
    return Foundation(
        cluster=cluster, namespace_ready=ready, bucket=bucket, identity=identity, storage_api=list(storage_api)
    )


def declare_identity(
    parent: pulumi.ComponentResource,
    resource_name: str,
    cluster_plan: ClusterPlan,
    cluster: TpuCluster,
    ready: Sequence[pulumi.Resource],
    namespace: str,
    ksa_name: str,
    grants: list[BucketGrantArgs],
    gsa_name: str | None = None,
) -> WorkloadIdentity:
    """A Kubernetes ServiceAccount of the workload's namespace with `grants`: the workload's own (declare_foundation)
    or another of its pods' that needs other rights (a one-shot writer beside read-only servers)."""
    args = WorkloadIdentityArgs(
        project=cluster_plan.spec.project,
        ksa_name=ksa_name,
        namespace=namespace,
        universe=cluster_plan.spec.universe,
        bucket_grants=grants,
    )
    if gsa_name is not None:
        args.update(mode="service-account", gsa_name=gsa_name)
    return WorkloadIdentity(
        resource_name,
        args,
        # IAM that names the workload pool waits for the cluster that creates it.
        opts=pulumi.ResourceOptions(
            parent=parent, providers=[cluster.provider], depends_on=[*ready, *cluster.pool_ready]
        ),
    )
