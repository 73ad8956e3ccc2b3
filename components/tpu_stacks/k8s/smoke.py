"""The smoke-test Job a serving stack ends with, from a `SmokeTest` decided in smoke_plan.py.

How `pulumi up` waits for it (pulumi/pulumi-kubernetes, read at 94977969, after v4.32.0; the repo
runs 4.34):
- a `batch/v1` Job has a built-in awaiter (provider/pkg/await/awaiters.go `batchV1Job: jobAwaiter`):
  it is ready when `status.startTime` is set and the `Complete` condition is True, and it fails at
  once when the `Failed` condition is True with reason BackoffLimitExceeded or DeadlineExceeded
  (provider/pkg/await/checker/job/check.go `jobComplete`, `collectJobConditionErrors`); the default
  wait is 10 minutes (await/job.go `DefaultJobTimeoutMins`), replaced by the resource's customTimeouts.
  Any other reason, such as `PodFailurePolicy` (a `FailJob` rule), is not recognised: the await goes on
  to its timeout. Hence `backoffLimit: 0` and no `FailJob` rule (smoke_plan.BACKOFF_LIMIT): a failed test
  fails the Job at once with BackoffLimitExceeded; the `podFailurePolicy` only Ignores disruptions;
- the failure carries the Job's pods' messages: a terminated container's `[Reason] message`, where the
  message is its termination message (provider/pkg/await/checker/pod/check.go
  `containerTerminatedError`). The script writes its one line there, and with
  `terminationMessagePolicy: FallbackToLogsOnError` the kubelet uses the log's last lines if it could not;
- a Job that failed stays failed: by default the next `up` waits on it again (and fails again);
  `pulumi.com/replaceUnready: "true"` makes the next `up` replace a Job that is not Complete, reading the
  live Job in the diff, and leaves a Complete one alone (provider/pkg/provider/provider.go `Diff`;
  provider/pkg/gen/additionalComments.go `replaceUnreadyComment`; CHANGELOG 3.2.0, pull #1575, #1578);
- a replacement under the same name is delete-before-replace by the provider itself (provider.go `Diff`:
  `deleteBeforeReplace` when the new name equals the old one). A new hash is a new name: the new Job is
  created, awaited, and the old one deleted. Only a change of completions, parallelism, selector or the
  pod template replaces a Job (provider/pkg/provider/diff.go `job`); anything else is sent as an update,
  which the API server refuses for the immutable `podFailurePolicy`: hence the policy is in the name's hash.

No `ttlSecondsAfterFinished`: a finished Job must stay for the next `up` to find it unchanged (a deleted
Job would be re-created and run again on every `up`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.image_users import PYTHON
from tpu_stacks.k8s.security import harden
from tpu_stacks.objects.annotations import API_TOKEN_REASON
from tpu_stacks.objects.awaits import job_budget
from tpu_stacks.serving.smoke_plan import (
    BACKOFF_LIMIT,
    IGNORED_POD_CONDITIONS,
    POD_LABELS,
    SCRIPT,
    SmokeTest,
    script_source,
)

CONFIG_MAP = "smoke-test-script"
MOUNT = "/opt/smoke-test"
POD_FAILURE_POLICY = k8s.batch.v1.PodFailurePolicyArgs(
    rules=[
        k8s.batch.v1.PodFailurePolicyRuleArgs(
            action="Ignore",
            on_pod_conditions=[
                k8s.batch.v1.PodFailurePolicyOnPodConditionsPatternArgs(type=condition, status="True")
                for condition in IGNORED_POD_CONDITIONS
            ],
        )
    ]
)
"""A disrupted pod (preempted, evicted, its node lost) is replaced and not counted; any other failure counts
against `backoffLimit: 0` and fails the Job at once."""
RESOURCES = k8s.core.v1.ResourceRequirementsArgs(
    requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "500m", "memory": "128Mi"}
)
REPLACE_UNREADY = {"pulumi.com/replaceUnready": "true"}
API_KEY_ENV = "SMOKE_API_KEY"
GATEWAY_GROUP = "gateway.networking.k8s.io"
GATEWAY_READER = "smoke-test-gateway-reader"
"""The ServiceAccount (and its Role) of a smoke test that goes through a Gateway: `get` on that one Gateway."""
GATEWAY_TOKEN_REASON = "the smoke test reads its Gateway's address (status.addresses) from the Kubernetes API"


def _env(test: SmokeTest) -> list[k8s.core.v1.EnvVarArgs]:
    env = [k8s.core.v1.EnvVarArgs(name=name, value=value) for name, value in test.environment().items()]
    if test.api_key is not None:
        secret, key = test.api_key
        env.append(
            k8s.core.v1.EnvVarArgs(
                name=API_KEY_ENV,
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    secret_key_ref=k8s.core.v1.SecretKeySelectorArgs(name=secret, key=key)
                ),
            )
        )
    return env


def _gateway_reader(resource: str, test: SmokeTest, opts: pulumi.ResourceOptions) -> tuple[str, list[pulumi.Resource]]:
    """A ServiceAccount that may `get` the one Gateway the test goes through (its address is in its status)."""
    assert test.gateway is not None
    namespace, gateway = test.gateway
    labels = dict(POD_LABELS)
    meta = k8s.meta.v1.ObjectMetaArgs(name=GATEWAY_READER, namespace=test.namespace, labels=labels)
    account = k8s.core.v1.ServiceAccount(f"{resource}-gateway-reader", metadata=meta, opts=opts)
    where = k8s.meta.v1.ObjectMetaArgs(name=GATEWAY_READER, namespace=namespace, labels=labels)  # the Gateway's
    role = k8s.rbac.v1.Role(
        f"{resource}-gateway-reader-role",
        metadata=where,
        rules=[
            k8s.rbac.v1.PolicyRuleArgs(
                api_groups=[GATEWAY_GROUP], resources=["gateways"], resource_names=[gateway], verbs=["get"]
            )
        ],
        opts=opts,
    )
    binding = k8s.rbac.v1.RoleBinding(
        f"{resource}-gateway-reader-binding",
        metadata=where,
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=GATEWAY_READER, namespace=test.namespace)],
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=GATEWAY_READER),
        opts=opts,
    )
    return GATEWAY_READER, [account, role, binding]


def smoke_test_job(
    resource: str,
    test: SmokeTest,
    provider: pulumi.ProviderResource | None,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource],
) -> k8s.batch.v1.Job:
    """The script's ConfigMap and the Job, after `depends_on` (the server and its Service, which `up` awaits; the
    Gateway and its route too when the request goes through one)."""
    account: str | None = None
    reader: list[pulumi.Resource] = []
    if test.gateway is not None:
        account, reader = _gateway_reader(resource, test, pulumi.ResourceOptions(parent=parent, provider=provider))
    script = k8s.core.v1.ConfigMap(
        f"{resource}-script",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=CONFIG_MAP, namespace=test.namespace, labels=dict(POD_LABELS)),
        data={SCRIPT: script_source()},
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )
    container = k8s.core.v1.ContainerArgs(
        name="smoke-test",
        image=test.image,
        command=["python3", f"{MOUNT}/{SCRIPT}"],
        env=_env(test),
        resources=RESOURCES,
        termination_message_policy="FallbackToLogsOnError",
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="script", mount_path=MOUNT, read_only=True)],
    )
    return k8s.batch.v1.Job(
        resource,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=test.name, namespace=test.namespace, labels=dict(POD_LABELS), annotations=REPLACE_UNREADY
        ),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=BACKOFF_LIMIT,
            pod_failure_policy=POD_FAILURE_POLICY,
            active_deadline_seconds=test.active_deadline_seconds,
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    labels=dict(POD_LABELS), annotations={API_TOKEN_REASON: GATEWAY_TOKEN_REASON} if account else None
                ),
                # Hardened (k8s.security); no Kubernetes API token unless it reads its Gateway's address.
                spec=harden(
                    k8s.core.v1.PodSpecArgs(
                        restart_policy="Never",  # required by a podFailurePolicy
                        service_account_name=account,
                        containers=[container],
                        volumes=[
                            k8s.core.v1.VolumeArgs(
                                name="script",
                                config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=CONFIG_MAP, default_mode=0o444),
                            )
                        ],
                    ),
                    PYTHON,
                    api_token=account is not None,
                ),
            ),
        ),
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=provider,
            depends_on=[*depends_on, script, *reader],
            # `up` waits for Complete until just after the Job's own deadline (awaits.job_budget).
            custom_timeouts=job_budget(test.active_deadline_seconds).custom_timeouts(),
        ),
    )
