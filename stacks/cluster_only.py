"""The `cluster` scenario: a TPU cluster and a Workload Identity ServiceAccount for workloads.

The cheapest useful stack (the `dev` stack): it proves the cluster, the slices and the identity
wiring before any model server is added.
"""

from __future__ import annotations

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.cluster.component import TpuCluster
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.identity import WorkloadIdentity, WorkloadIdentityArgs, check_args
from tpu_stacks.inputs.validation import parse


def build(stack: LoadedStack, secrets: Secrets) -> None:
    plan = plan_cluster(parse(ClusterSpec, stack.cluster, "cluster"))  # every rule, before any resource
    identity_spec = stack.config.identity
    identity_args = WorkloadIdentityArgs(
        project=plan.spec.project,
        ksa_name=identity_spec.ksa_name,
        namespace=identity_spec.namespace,
        mode=identity_spec.mode,
        universe=plan.universe.name,
    )
    if identity_spec.gsa_name:
        identity_args["gsa_name"] = identity_spec.gsa_name
    if identity_spec.project_number:
        identity_args["project_number"] = identity_spec.project_number
    try:
        check_args(identity_args)  # before the cluster: nothing half-created
    except UserError as error:
        raise error.under("identity") from None
    cluster = TpuCluster.from_plan(plan.spec.name, plan)
    identity = WorkloadIdentity(
        identity_spec.ksa_name,
        identity_args,
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
