"""The `cluster` scenario: a TPU cluster and a Workload Identity ServiceAccount for workloads.

The cheapest useful stack (the `dev` stack): it proves the cluster, the slices and the identity
wiring before any model server is added.
"""

from __future__ import annotations

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.identity import WorkloadIdentity, check_args

SPEC = None  # the cluster scenario has no section of its own


def build(stack: LoadedStack, secrets: Secrets) -> None:
    config = stack.config
    identity_spec = config.identity
    identity_args = {
        "project": config.cluster.project,
        "ksa_name": identity_spec.ksa_name,
        "namespace": identity_spec.namespace,
        "mode": identity_spec.mode,
        "universe": config.cluster.universe,
    }
    if identity_spec.gsa_name:
        identity_args["gsa_name"] = identity_spec.gsa_name
    if identity_spec.project_number:
        identity_args["project_number"] = identity_spec.project_number
    try:
        check_args(identity_args)  # type: ignore[arg-type]  # before the cluster: nothing half-created
    except UserError as error:
        raise error.under("identity") from None
    cluster = TpuCluster(config.cluster.name, config.cluster.model_dump(exclude_unset=True))  # type: ignore[arg-type]
    identity = WorkloadIdentity(
        identity_spec.ksa_name,
        identity_args,  # type: ignore[arg-type]
        opts=pulumi.ResourceOptions(providers=[cluster.provider], depends_on=cluster.pool_ready),
    )
    pulumi.export("clusterName", cluster.cluster_name)
    pulumi.export("location", cluster.location)
    pulumi.export("endpoint", cluster.endpoint)
    pulumi.export("workloadPool", cluster.workload_pool)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("slices", cluster.slices)
    pulumi.export("serviceAccount", identity.ksa_name)
    pulumi.export("workloadMember", identity.member)
