"""Kubernetes reading shared by the checks: where an object lives (by API discovery, as kubectl finds it), its
conditions, a list by label. Discovery is the API server's own answer (`GET /apis/GROUP/VERSION`, an
APIResourceList: https://kubernetes.io/docs/reference/using-api/api-concepts/#discovery-api), so a kind the
cluster does not serve is found here and nowhere else.
"""

from __future__ import annotations

from typing import Any

from tpu_stacks_live.verify.plan import name_of, namespace_of
from tpu_stacks_live.verify.readers import Cluster


def group_path(api_version: str) -> str:
    """`/api/v1` for the core group, `/apis/ray.io/v1` for the others."""
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def served_resource(cluster: Cluster, api_version: str, kind: str) -> dict[str, Any] | None:
    """The APIResource the cluster serves for `kind` at `api_version`, None when it serves no such kind there."""
    listing = cluster.get(group_path(api_version)) or {}
    for resource in listing.get("resources") or []:
        if resource.get("kind") == kind and "/" not in str(resource.get("name", "")):
            return resource
    return None


def collection_path(cluster: Cluster, api_version: str, kind: str, namespace: str | None) -> str | None:
    resource = served_resource(cluster, api_version, kind)
    if resource is None:
        return None
    base = group_path(api_version)
    if resource.get("namespaced") and namespace:
        return f"{base}/namespaces/{namespace}/{resource['name']}"
    return f"{base}/{resource['name']}"


def read_object(cluster: Cluster, obj: dict[str, Any]) -> dict[str, Any] | None:
    """The live object the plan's `obj` declares (same apiVersion, kind, namespace and name), None if absent."""
    path = collection_path(cluster, str(obj.get("apiVersion")), str(obj.get("kind")), namespace_of(obj))
    return None if path is None else cluster.get(f"{path}/{name_of(obj)}")


def list_objects(cluster: Cluster, path: str, **query: str) -> list[dict[str, Any]]:
    return list((cluster.get(path, **query) or {}).get("items") or [])


def pods(cluster: Cluster, namespace: str, selector: str) -> list[dict[str, Any]]:
    return list_objects(cluster, f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The status condition of type `kind`, if the object has one."""
    for item in ((obj or {}).get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return item
    return None


def is_true(obj: dict[str, Any] | None, kind: str) -> bool:
    found = condition(obj, kind)
    return found is not None and found.get("status") == "True"


def pod_ready(pod: dict[str, Any]) -> bool:
    return is_true(pod, "Ready")


def selector(labels: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def ref(obj: dict[str, Any]) -> str:
    """`Kind namespace/name`, how results name an object."""
    return f"{obj.get('kind')} {namespace_of(obj)}/{name_of(obj)}"
