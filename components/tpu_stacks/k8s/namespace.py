"""The workload's namespace: created unless it is `default`, and waited for by what goes in it."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s


def namespace_dependencies(
    name: str, namespace: str, parent: pulumi.Resource, provider: pulumi.ProviderResource
) -> list[pulumi.Resource]:
    """`[Namespace]` to put in `depends_on` of the namespaced objects (empty for `default`)."""
    if namespace == "default":
        return []
    return [
        k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace),
            opts=pulumi.ResourceOptions(parent=parent, provider=provider),
        )
    ]
