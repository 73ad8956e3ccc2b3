"""The stack's connectivity contract as the probes read it: from the rendered objects, never from a stack's name.

Each NetworkPolicy the stack renders from a contract group (components/tpu_stacks/k8s/network_policy.py) selects
exactly the group's labels and carries its flows as the `tpu-stacks.dev/flows` annotation (the JSON of
`k8s.connectivity.Flow.json`). That annotation is what the probes try; the policy's rules are what a probe tests.
The pods a probe impersonates are found here too: the pod templates whose labels the group selects (for the
service account a flow to the API server runs as), and the namespaces the stack creates (the only places a
probe pod is created).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tpu_stacks.k8s.connectivity import ANNOTATION


@dataclass(frozen=True)
class Group:
    """One annotated NetworkPolicy: its namespace and name, the labels it selects and the flows it carries."""

    namespace: str
    policy: str
    labels: dict[str, str] = field(hash=False)
    flows: tuple[dict[str, Any], ...] = field(hash=False)

    @property
    def name(self) -> str:
        return f"{self.namespace}/{self.policy}"


def groups(objects: list[dict[str, Any]]) -> list[Group]:
    """Every NetworkPolicy with the flows annotation, in the objects' order."""
    found = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        text = (meta.get("annotations") or {}).get(ANNOTATION)
        if obj.get("kind") != "NetworkPolicy" or text is None:
            continue
        labels = ((obj.get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {}
        found.append(Group(meta.get("namespace", "default"), meta["name"], dict(labels), tuple(json.loads(text))))
    return found


def owned_namespaces(objects: list[dict[str, Any]]) -> set[str]:
    """The namespaces the stack creates or writes policies in: a probe pod is created in these only (never in
    kube-system or gmp-system, whose pods a flow may name as its peer)."""
    names = {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
    return names | {g.namespace for g in groups(objects)}


def _pod_templates(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod template inside an object (Deployments, Jobs, JobSets, Ray clusters alike): a dict with
    `metadata` and a `spec` that has containers."""
    if isinstance(node, dict):
        spec = node.get("spec")
        if isinstance(spec, dict) and "containers" in spec and isinstance(node.get("metadata"), dict):
            yield node
        for value in node.values():
            yield from _pod_templates(value)
    elif isinstance(node, list):
        for value in node:
            yield from _pod_templates(value)


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Does a `matchLabels` selector select a pod with `labels`?"""
    return all(labels.get(key) == value for key, value in selector.items())


def service_account(objects: list[dict[str, Any]], namespace: str, labels: dict[str, str]) -> str | None:
    """The service account of the group's own pods (their template's), when the stack creates it; else None (the
    namespace's default account): a probe of the API server runs as the workload whose flow it is."""
    accounts = {
        (o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects if o.get("kind") == "ServiceAccount"
    }
    for obj in objects:
        if (obj.get("metadata") or {}).get("namespace") != namespace:
            continue
        for template in _pod_templates(obj):
            if selects(labels, template["metadata"].get("labels") or {}):
                account = template["spec"].get("serviceAccountName")
                return account if (namespace, account) in accounts else None
    return None


def image(objects: list[dict[str, Any]], default: str) -> str:
    """The image the stack's smoke test runs (a small pinned Python the cluster already pulls, possibly from the
    user's own registry), else `default`."""
    for obj in objects:
        for template in _pod_templates(obj):
            if (template["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "smoke-test":
                return template["spec"]["containers"][0]["image"]
    return default


def first_service(objects: list[dict[str, Any]], namespace: str) -> str | None:
    """A Service of the stack in `namespace`, by name: what the short DNS form resolves."""
    names = sorted(
        o["metadata"]["name"]
        for o in objects
        if o.get("kind") == "Service" and o["metadata"].get("namespace") == namespace
    )
    return names[0] if names else None


def policies_selecting(all_groups: list[Group], namespace: str, labels: dict[str, str]) -> list[Group]:
    """The annotated policies of `namespace` that select a pod with `labels` (NetworkPolicies add up)."""
    return [g for g in all_groups if g.namespace == namespace and selects(g.labels, labels)]
