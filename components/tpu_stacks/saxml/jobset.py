"""The Saxml model servers: one JobSet whose replicated Job runs once per slice.

Upstream ([K-SAX] sax-model-server-set.yaml) is kept where it matters: one child Job
per node pool (exclusive placement), `parallelism`/`completions` = hosts per slice (read, as each
pod's `google.com/tpu`, from the planned pools' shape), the RPC and multi-host ports, `SAX_ROOT`,
and `hostNetwork` for multi-host slices. Changed:

- Failure policy. Upstream fails a Job on any pod failure (`backoffLimit: 0`) and lets the JobSet
  recreate *all* slices up to `maxRestarts: 4`, then stop serving for good. Here a failed slice's
  Job is recreated alone (JobSet `RestartJob*` actions), the other slices keep serving. A
  disruption (preemption, maintenance, node repair: the pod's `DisruptionTarget` condition) fails
  the Job with reason `PodFailurePolicy` and never uses up a restart budget; a crash restarts the
  slice too, forever by default or up to `restartLimit` crashes.
- Not privileged (TPU access needs no privilege since GKE 1.28); hardened as every pod (`k8s.security`).
- Kept from upstream: `MEGASCALE_NUM_SLICES=""` on the model servers (see `MULTISLICE_OFF`).
- `--platform_topology` is passed (upstream leaves the default `1`), derived from the slice.
- JobSet specs are immutable once created, so any change replaces the JobSet (delete first:
  the name is fixed); the admin server re-assigns published models when the servers rejoin.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.tpu import NODEPOOL_LABEL
from tpu_stacks.cluster.plan import PoolPlan
from tpu_stacks.first_up import Wait, pod_wait
from tpu_stacks.k8s.jobset import API_VERSION, EXCLUSIVE_TOPOLOGY
from tpu_stacks.k8s.security import harden
from tpu_stacks.k8s.tpu import tpu_node_selector, tpu_resources
from tpu_stacks.objects import annotations
from tpu_stacks.objects.awaits import WAIT_FOR_ANNOTATION, pod_budget
from tpu_stacks.saxml.plan import SaxmlPlan
from tpu_stacks.saxml.servers import MANAGED, USER
from tpu_stacks.saxml.spec import MODEL_PORT, MULTI_HOST_PORT

JOBSET_NAME = "sax-model-server-set"
REPLICATED_JOB = "sax-model-server"
POD_LABELS = {"app": REPLICATED_JOB}  # the model servers' pod labels (their network policy selects these)
HOST_NETWORK_REASON = (
    "Saxml multi-host model servers run on the host network as upstream: hosts of a slice reach each "
    "other on 8471 and the admin server reaches host 0 on its node address"
)
MULTISLICE_OFF = k8s.core.v1.EnvVarArgs(name="MEGASCALE_NUM_SLICES", value="")
"""The tutorial's empty `MEGASCALE_NUM_SLICES` ([D-GKE-SAX]: it "unsets the variable because GKE is
not running Multislice training"; [K-SAX]). GKE fills in multislice (Megascale)
settings for a JobSet whose replicated Job runs on several TPU slices; with them libtpu would join the
two slices into one 2-slice mesh, a single model server would register with the admin server and the
publisher would wait forever for `replicas: 2`. Declared empty, as the tutorial does, so that each
slice stays an independent replica (the tutorial's reasoning; only a real multi-slice cluster shows
the injected settings)."""


def failure_policy(plan: SaxmlPlan) -> dict[str, object]:
    """Restart a broken slice alone; disruptions never count, crashes count only with restartLimit."""
    limit = plan.spec.restart_limit
    policy: dict[str, object] = {
        "restartStrategy": "Recreate",
        "rules": [
            {
                "name": "SliceDisrupted",
                "action": "RestartJobAndIgnoreMaxRestarts",
                "onJobFailureReasons": ["PodFailurePolicy"],
                "targetReplicatedJobs": [REPLICATED_JOB],
            },
            {
                "name": "SliceFailed",
                "action": "RestartJob" if limit else "RestartJobAndIgnoreMaxRestarts",
                "targetReplicatedJobs": [REPLICATED_JOB],
            },
        ],
    }
    if limit:
        policy["maxRestarts"] = limit
    return policy


def _container(plan: SaxmlPlan, pool: PoolPlan, sax_root: pulumi.Input[str]) -> k8s.core.v1.ContainerArgs:
    resources = plan.spec.resources.model_server
    return k8s.core.v1.ContainerArgs(
        name=REPLICATED_JOB,
        image=plan.spec.images.model_server,
        args=plan.model_server_args(),
        env=[k8s.core.v1.EnvVarArgs(name="SAX_ROOT", value=sax_root), MULTISLICE_OFF],
        ports=[
            k8s.core.v1.ContainerPortArgs(name="sax", container_port=MODEL_PORT),
            k8s.core.v1.ContainerPortArgs(name="tpu", container_port=MULTI_HOST_PORT),
        ],
        resources=tpu_resources(pool, resources.cpu, resources.memory),
        # No probes: secondary hosts serve no RPC port [I], and a liveness kill of one host kills the
        # slice; a crashed or disrupted host fails the Job and the failure policy restarts the slice.
        # Security context: `harden` in _job (non-root, no capabilities, read-only root, seccomp).
    )


def _job(plan: SaxmlPlan, pool: PoolPlan, sax_root: pulumi.Input[str]) -> k8s.batch.v1.JobTemplateSpecArgs:
    host_network = plan.host_network
    hosts = pool.shape.nodes  # the pool's shape, as its chips per host in _container: one derivation
    pod_annotations = {annotations.HOST_NETWORK_REASON: HOST_NETWORK_REASON} if host_network else None
    return k8s.batch.v1.JobTemplateSpecArgs(
        spec=k8s.batch.v1.JobSpecArgs(
            parallelism=hosts,
            completions=hosts,
            completion_mode="Indexed",
            backoff_limit=0,  # a slice with a missing host cannot serve: fail the Job, the JobSet restarts it
            pod_failure_policy=k8s.batch.v1.PodFailurePolicyArgs(
                rules=[
                    k8s.batch.v1.PodFailurePolicyRuleArgs(
                        action="FailJob",
                        on_pod_conditions=[
                            k8s.batch.v1.PodFailurePolicyOnPodConditionsPatternArgs(
                                type="DisruptionTarget", status="True"
                            )
                        ],
                    )
                ]
            ),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(POD_LABELS), annotations=pod_annotations),
                # No Kubernetes API token: the servers register with the admin server through GCS.
                spec=harden(
                    k8s.core.v1.PodSpecArgs(
                        service_account_name=plan.spec.ksa_name,
                        host_network=host_network or None,
                        dns_policy="ClusterFirstWithHostNet"
                        if host_network
                        else None,  # resolve the JobSet's headless names
                        node_selector=tpu_node_selector(pool),
                        restart_policy="Never",  # required by podFailurePolicy
                        termination_grace_period_seconds=60,
                        containers=[_container(plan, pool, sax_root)],
                    ),
                    USER,
                ),
            ),
        )
    )


def _metadata(plan: SaxmlPlan) -> k8s.meta.v1.ObjectMetaArgs:
    notes = dict(annotations.for_serving(plan.request, plan.tensor_parallel_size))
    if plan.shape.multi_host:
        notes[EXCLUSIVE_TOPOLOGY] = NODEPOOL_LABEL
    if plan.host_network:
        notes[annotations.HOST_NETWORK_REASON] = HOST_NETWORK_REASON
    # `pulumi up` waits until every slice's Job has all its pods ready (pulumi-kubernetes >= 4.18).
    notes[WAIT_FOR_ANNOTATION] = f"jsonpath={{.status.replicatedJobsStatus[0].ready}}={plan.slices}"
    return k8s.meta.v1.ObjectMetaArgs(
        name=JOBSET_NAME, namespace=plan.spec.namespace, labels=MANAGED, annotations=notes
    )


def server_wait(resource: str, plan: SaxmlPlan, pools: tuple[PoolPlan, ...], sax_root: pulumi.Input[str]) -> Wait:
    """The JobSet's wait as the first `up` sees it (`model_server_set`'s budget, from the same template)."""
    template = _job(plan, pools[0], sax_root).spec.template
    return pod_wait(resource, "every slice's model servers running", template, tpu=True)


def model_server_set(
    resource: str,
    plan: SaxmlPlan,
    pools: tuple[PoolPlan, ...],
    sax_root: pulumi.Input[str],
    provider: pulumi.ProviderResource,
    parent: pulumi.Resource,
    depends_on: list[pulumi.Resource],
) -> k8s.apiextensions.CustomResource:
    """The JobSet: `replicas` slices of `hosts` pods, each pod taking every chip of its VM.

    `pools` are the planned pools of the model servers' slice spec: one shape, so one Job template
    serves them all (exclusive placement puts each slice's Job on its own pool)."""
    pool = pools[0]
    job = _job(plan, pool, sax_root)
    # `pulumi up` waits (pulumi.com/waitFor) until every slice's pods run: a node, the image, then what
    # the pods' probes allow (none: 0), per slice in parallel; a replacement starts all slices again.
    budget = pod_budget(job.spec.template)
    return k8s.apiextensions.CustomResource(
        resource,
        api_version=API_VERSION,
        kind="JobSet",
        metadata=_metadata(plan),
        spec={
            "failurePolicy": failure_policy(plan),
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
            "replicatedJobs": [{"name": REPLICATED_JOB, "replicas": plan.slices, "template": job}],
        },
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=provider,
            depends_on=depends_on,
            replace_on_changes=["spec"],
            delete_before_replace=True,
            custom_timeouts=budget.custom_timeouts(),
        ),
    )
