"""The workload's namespace: created unless it is `default`, labelled with its Pod Security level, and
waited for by what goes in it.

Pod Security admission (kubernetes.io/docs/concepts/security/pod-security-admission) enforces the
level a namespace's `pod-security.kubernetes.io/enforce` label names, at the policy version its
`-version` label pins (so a cluster upgrade cannot change what is allowed). Each workload asks for
the strictest level its pods pass: `restricted` for every hardened pod (`k8s.security`); only
Saxml's multi-host model servers, which run on the host network (which `baseline` already forbids),
need `privileged`. `warn` and `audit` stay at `restricted` everywhere, so anything below it is
still reported to whoever applies it and in the audit log.
"""

from __future__ import annotations

from typing import Literal

import pulumi
import pulumi_kubernetes as k8s

PodSecurityLevel = Literal["restricted", "baseline", "privileged"]
POD_SECURITY = "pod-security.kubernetes.io"
POD_SECURITY_VERSION = "v1.33"
"""The Pod Security Standards version the labels pin: the Kubernetes version plans are validated against."""


def pod_security_labels(level: PodSecurityLevel) -> dict[str, str]:
    """`enforce` at `level`; `warn` and `audit` at `restricted`; every mode pinned to one version."""
    labels: dict[str, str] = {}
    for mode, mode_level in (("enforce", level), ("warn", "restricted"), ("audit", "restricted")):
        labels[f"{POD_SECURITY}/{mode}"] = mode_level
        labels[f"{POD_SECURITY}/{mode}-version"] = POD_SECURITY_VERSION
    return labels


def namespace_dependencies(
    name: str,
    namespace: str,
    parent: pulumi.Resource,
    provider: pulumi.ProviderResource,
    pod_security: PodSecurityLevel = "restricted",
) -> list[pulumi.Resource]:
    """`[Namespace]` to put in `depends_on` of the namespaced objects (empty for `default`, which is
    not ours to label)."""
    if namespace == "default":
        return []
    return [
        k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace, labels=pod_security_labels(pod_security)),
            opts=pulumi.ResourceOptions(parent=parent, provider=provider),
        )
    ]
