"""Render the Kubernetes objects of an up-mode capture as the provider would send them to the API.

A `kubernetes:*` custom resource's inputs *are* the object (apiVersion, kind, metadata, spec,
data, ...). Two things differ from what the API server receives: numbers arrive as protobuf doubles
(`replicas: 2.0`), which we turn back into ints as the provider's Go JSON encoder does, and secrets,
which stay masked ("[secret]") so no secret value is ever written to disk. Components and opaque
resources (`kubernetes:yaml:*`, Helm, Kustomize) are not objects and are skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tpu_stacks_preview.capture import Capture, ResourceRecord
from tpu_stacks_preview.wire import PlainValue, integral, struct_to_dict

HEADER = "# Rendered by `tpu-stacks plan` from an offline up-mode run; secrets are masked.\n"
_NOT_OBJECTS = ("kubernetes:yaml", "kubernetes:helm.sh", "kubernetes:kustomize")
_FIRST_KEYS = ("apiVersion", "kind", "metadata")


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object and the resource that declared it."""

    urn: str
    object: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.object.get("kind", ""))

    @property
    def api_version(self) -> str:
        return str(self.object.get("apiVersion", ""))

    @property
    def namespace(self) -> str | None:
        return (self.object.get("metadata") or {}).get("namespace")

    @property
    def name(self) -> str:
        """metadata.name, or the Pulumi resource name where the provider would autoname."""
        return (self.object.get("metadata") or {}).get("name") or self.urn.rsplit("::", 1)[-1]

    @property
    def id(self) -> str:
        """`Kind/namespace/name` (`Kind/name` when no namespace is set): how reports name it."""
        parts = [self.kind, self.namespace, self.name] if self.namespace else [self.kind, self.name]
        return "/".join(parts)

    @property
    def filename(self) -> str:
        """`<kind>-<namespace>-<name>.yaml`, lowercase; objects without a namespace use "cluster"."""
        stem = f"{self.kind}-{self.namespace or 'cluster'}-{self.name}".lower()
        return "".join(c if c.isalnum() or c in "-._" else "_" for c in stem) + ".yaml"


def is_kubernetes_object(record: ResourceRecord) -> bool:
    """A custom resource of the Kubernetes provider that is an API object (not a provider/component)."""
    return record.custom and record.type.startswith("kubernetes:") and not record.type.startswith(_NOT_OBJECTS)


def render_object(record: ResourceRecord) -> dict[str, Any]:
    """The object for one record: wire inputs, ints restored, secrets masked, keys in kubectl order."""
    plain = integral(PlainValue(struct_to_dict(record.raw_inputs), keep_shape=True).value)
    ordered = {key: plain[key] for key in _FIRST_KEYS if key in plain}
    ordered.update({key: plain[key] for key in sorted(plain) if key not in ordered})
    return ordered


def render_manifests(capture: Capture) -> list[Manifest]:
    """Every Kubernetes object of the capture, in a stable order (by file name, then URN)."""
    manifests = [Manifest(r.urn, render_object(r)) for r in capture.resources if is_kubernetes_object(r)]
    return sorted(manifests, key=lambda m: (m.filename, m.urn))


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as literal blocks (readable ConfigMaps and scripts)."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def to_yaml(obj: dict[str, Any]) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def write_manifests(objects: Iterable[Manifest | dict[str, Any]], directory: Path) -> list[Path]:
    """Write one YAML file per object; replace files an earlier plan wrote, leave others alone."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.yaml"):
        if stale.read_text(encoding="utf-8", errors="replace").startswith(HEADER):
            stale.unlink()
    manifests = [m if isinstance(m, Manifest) else Manifest("", dict(m)) for m in objects]
    written: list[Path] = []
    taken: set[str] = set()
    for manifest in sorted(manifests, key=lambda m: (m.filename, m.urn)):
        filename = manifest.filename
        if filename in taken:  # two objects map to one name: keep both, told apart by their URN
            filename = f"{filename[:-5]}-{hashlib.sha256(manifest.urn.encode()).hexdigest()[:7]}.yaml"
        taken.add(filename)
        path = directory / filename
        path.write_text(HEADER + to_yaml(manifest.object), encoding="utf-8")
        written.append(path)
    return written
