"""Validate Kubernetes objects strictly, as the API server with strict field validation would.

Built-in kinds are checked against kubernetes-validate's bundled `-local-strict` JSON schemas for
one minor version; custom resources (JobSet, LeaderWorkerSet, KubeRay, PodMonitoring...) against
the upstream CRDs' `openAPIV3Schema`, converted to JSON Schema with the API server's rules
(nullable, int-or-string, unknown fields rejected unless preserved). CRDs declare `metadata` as a
bare object, so it is checked separately against the strict ObjectMeta schema; a RayService's
`serveConfigV2`, a string to its CRD, against the pinned Ray Serve schema (serve_schema.py). Every error is
reported (`iter_errors`), not only jsonschema's best match, and a kind with no schema anywhere is a
problem, never a silent pass: a typo must fail the plan.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

from tpu_stacks.cli.user_cache import cache_dir
from tpu_stacks.errors import UserError
from tpu_stacks.k8s.crd_files import CRD_DIR as LIBRARY_CRDS
from tpu_stacks_preview.manifests import Manifest
from tpu_stacks_preview.serve_schema import serve_config_problems

DEFAULT_KUBERNETES_VERSION = "1.33"
CRDS_ENV = "TPU_STACKS_CRDS"
_CONVERTER_VERSION = 1  # bump when the conversion rules change: invalidates the on-disk cache
_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = {"$ref": f"{_DEFS_ID}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class SchemaProblem:
    """One way an object breaks its schema."""

    object_id: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.object_id}: {self.path}: {self.message}"


@dataclass
class SchemaReport:
    """All problems, plus notices (e.g. CRD validation skipped) and what was checked."""

    problems: list[SchemaProblem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    validated: int = 0
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    crd_dir: Path | None = None


# -- built-in kinds ---------------------------------------------------------------------------------


def _schema_root() -> Path:
    import kubernetes_validate

    return Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"


@functools.cache
def bundled_versions() -> tuple[str, ...]:
    """Minor versions with bundled strict schemas, ascending (`1.25` ... `1.37`)."""
    found = {m.group(1) for d in _schema_root().iterdir() if (m := re.match(r"v(\d+\.\d+)\.\d+-local-strict$", d.name))}
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def _schema_dir(version: str) -> Path:
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    known = bundled_versions()
    if match is None or f"{match.group(1)}.{match.group(2)}" not in known:
        raise UserError("--k8s-version", version, "has no bundled schemas", f"use one of {known[0]}..{known[-1]} (X.Y)")
    minor = f"{match.group(1)}.{match.group(2)}"
    return next(
        d for d in _schema_root().iterdir() if d.name.startswith(f"v{minor}.") and d.name.endswith("-local-strict")
    )


@functools.cache
def _definitions(version: str) -> dict[str, Any]:
    return json.loads((_schema_dir(version) / "_definitions.json").read_text())


@functools.cache
def _registry(version: str) -> Registry:
    return Registry().with_resource(_DEFS_ID, Resource.from_contents(_definitions(version)))


@functools.cache
def builtin_groups(version: str) -> frozenset[str]:
    """API groups Kubernetes itself serves ("" is core): a kind missing there is no CRD."""
    return frozenset(
        gvk.get("group", "")
        for definition in _definitions(version)["$defs"].values()
        for gvk in definition.get("x-kubernetes-group-version-kind", [])
    )


@functools.cache
def _builtin_validator(version: str, group: str, api: str, kind: str) -> jsonschema.protocols.Validator | None:
    short = group.split(".", 1)[0]
    stem = f"{kind.lower()}-{short}-{api}" if group else f"{kind.lower()}-{api}"
    path = _schema_dir(version) / f"{stem}.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    if not any(
        gvk.get("group", "") == group and gvk.get("version") == api and gvk.get("kind") == kind
        for gvk in schema.get("x-kubernetes-group-version-kind", [])
    ):
        return None  # same file name, other group (e.g. apps.example.com): not this kind
    return jsonschema.Draft202012Validator(schema, registry=_registry(version))


@functools.cache
def _metadata_validator(version: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(_OBJECT_META, registry=_registry(version))


# -- CRDs -------------------------------------------------------------------------------------------


def convert_crd_schema(node: Any) -> Any:
    """One `openAPIV3Schema` node as strict Draft 2020-12 JSON Schema (the API server's rules)."""
    if isinstance(node, list):
        return [convert_crd_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("nullable", "example", "externalDocs"):
            continue
        if key in ("properties", "patternProperties", "$defs", "definitions"):
            out[key] = {name: convert_crd_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") or key in ("allOf", "anyOf", "oneOf"):
            out[key] = convert_crd_schema(value)
        else:
            out[key] = value
    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        choices: list[dict[str, Any]] = [{"type": "integer"}, {"type": "string"}]
        if node.get("nullable"):
            choices.append({"type": "null"})
        out["anyOf"] = choices + out.get("anyOf", [])
    elif node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else [*out["type"], "null"]
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _root_schema(openapi: dict[str, Any]) -> dict[str, Any]:
    schema = convert_crd_schema(openapi)
    props = schema.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props["metadata"] = {"type": "object"}  # checked on its own against ObjectMeta
    schema["additionalProperties"] = False
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _header_kinds(path: Path) -> set[tuple[str, str]]:
    """(group, kind) from the lines before `versions:`: cheap, so only needed CRDs get parsed."""
    head: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("  versions:") or len(head) > 200:
                break
            head.append(line)
    try:
        docs = list(yaml.load_all("".join(head), Loader=_SAFE_LOADER))
        doc = next(d for d in docs if isinstance(d, dict))
        return {(doc["spec"]["group"], doc["spec"]["names"]["kind"])}
    except (yaml.YAMLError, StopIteration, KeyError, TypeError):
        return set()  # not a tidy controller-gen file: parse it fully when asked


@functools.cache
def _converted_crd(path_str: str, mtime_ns: int, size: int) -> dict[tuple[str, str, str], dict[str, Any]]:
    """{(group, version, kind): JSON Schema} for one CRD file; memory and disk cached by mtime/size."""
    key = hashlib.sha256(f"{path_str}|{mtime_ns}|{size}|{_CONVERTER_VERSION}".encode()).hexdigest()[:24]
    folder = cache_dir()  # None: no home, nothing kept (tpu_stacks/cli/user_cache.py)
    cached = folder / f"crd-{key}.pickle" if folder is not None else None
    try:
        if cached is not None:
            with cached.open("rb") as handle:
                return pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
        pass
    schemas: dict[tuple[str, str, str], dict[str, Any]] = {}
    with open(path_str, encoding="utf-8") as handle:
        for doc in yaml.load_all(handle, Loader=_SAFE_LOADER):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec.get("versions", []):
                openapi = (version.get("schema") or {}).get("openAPIV3Schema")
                if version.get("served", True) and openapi:
                    schemas[(spec["group"], version["name"], spec["names"]["kind"])] = _root_schema(openapi)
    if cached is None:
        return schemas
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        with partial.open("wb") as handle:
            pickle.dump(schemas, handle, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(cached)
    except OSError:
        pass  # a read-only home only costs speed
    return schemas


class CrdCatalogue:
    """The CRDs of one directory, parsed lazily: only files defining a kind we meet are loaded."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._files: list[tuple[Path, set[tuple[str, str]]]] = [
            (path, _header_kinds(path)) for path in sorted(directory.glob("*.y*ml"))
        ]

    def schema(self, group: str, version: str, kind: str) -> dict[str, Any] | None:
        for path, kinds in self._files:
            if kinds and (group, kind) not in kinds:
                continue
            stat = path.stat()
            found = _converted_crd(str(path), stat.st_mtime_ns, stat.st_size).get((group, version, kind))
            if found is not None:
                return found
        return None


@functools.cache
def _crd_validator(group: str, version: str, kind: str, directory: str) -> jsonschema.protocols.Validator | None:
    """The kind's schema from `directory`, else from the CRDs the library itself declares (LIBRARY_CRDS: the
    stacks install them, so their objects validate against what the cluster will hold, whatever --crds says)."""
    schema = _catalogue(directory).schema(group, version, kind)
    if schema is None and LIBRARY_CRDS.is_dir():
        schema = _catalogue(str(LIBRARY_CRDS)).schema(group, version, kind)
    return jsonschema.Draft202012Validator(schema) if schema is not None else None


@functools.lru_cache(maxsize=8)
def _catalogue(directory: str) -> CrdCatalogue:
    return CrdCatalogue(Path(directory))


VENDORED_CRDS = Path(__file__).resolve().parent / "crds"
"""The CRD schemas this package ships (crds/PROVENANCE.tsv says where each comes from)."""


def resolve_crd_dir(crd_dir: Path | None = None, project_dir: Path | None = None) -> Path:
    """Argument, else $TPU_STACKS_CRDS, else the vendored schemas: strict in any clone or install."""
    if crd_dir is not None:
        return Path(crd_dir)
    if os.environ.get(CRDS_ENV):
        return Path(os.environ[CRDS_ENV])
    return VENDORED_CRDS


# -- validation -------------------------------------------------------------------------------------


def _path(error: jsonschema.ValidationError, prefix: str = "") -> str:
    parts = [prefix] if prefix else []
    parts += [str(p) for p in error.absolute_path]
    return "/".join(parts) or "(root)"


def _errors(
    validator: jsonschema.protocols.Validator, instance: Any, object_id: str, prefix: str = ""
) -> list[SchemaProblem]:
    return [SchemaProblem(object_id, _path(e, prefix), e.message) for e in validator.iter_errors(instance)]


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def validate_objects(
    objects: Iterable[Manifest | dict[str, Any]],
    *,
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
    crd_dir: Path | None = None,
    project_dir: Path | None = None,
) -> SchemaReport:
    """Every schema problem of every object; a missing CRD directory is one notice, not N errors."""
    version = kubernetes_version
    _schema_dir(version)  # a bad version is the user's error, raised before any work
    directory = resolve_crd_dir(crd_dir, project_dir)
    have_crds = directory.is_dir()
    report = SchemaReport(kubernetes_version=version, crd_dir=directory if have_crds else None)
    skipped: list[str] = []
    for item in objects:
        manifest = item if isinstance(item, Manifest) else Manifest("", dict(item))
        obj, object_id = manifest.object, manifest.id
        group, api = _split_api_version(manifest.api_version)
        if not manifest.kind or not api:
            report.problems.append(SchemaProblem(object_id, "(root)", "apiVersion and kind are required"))
            continue
        builtin = _builtin_validator(version, group, api, manifest.kind)
        if builtin is not None:
            report.problems += _errors(builtin, obj, object_id)
            report.validated += 1
            continue
        if "metadata" in obj:
            report.problems += _errors(_metadata_validator(version), obj["metadata"], object_id, "metadata")
        if (group, manifest.kind) == ("ray.io", "RayService"):  # its Serve config is a string the CRD cannot see into
            report.problems += [SchemaProblem(object_id, path, text) for path, text in serve_config_problems(obj)]
        if group in builtin_groups(version):
            report.problems.append(
                SchemaProblem(object_id, "(root)", f"no {manifest.api_version} {manifest.kind} in Kubernetes {version}")
            )
            continue
        if not have_crds:
            skipped.append(object_id)
            continue
        validator = _crd_validator(group, api, manifest.kind, str(directory))
        if validator is None:
            report.problems.append(
                SchemaProblem(
                    object_id,
                    "(root)",
                    f"no schema for {manifest.api_version} {manifest.kind}: not built into Kubernetes {version} "
                    f"and no CRD for it in {directory} or {LIBRARY_CRDS}",
                )
            )
            continue
        report.problems += _errors(validator, obj, object_id)
        report.validated += 1
    if skipped:
        report.notices.append(
            f"CRD directory {directory} not found: {len(skipped)} custom resource(s) checked for metadata only "
            f"({', '.join(skipped)}); set --crds or ${CRDS_ENV}"
        )
    report.problems.sort(key=lambda p: (p.object_id, p.path, p.message))
    return report
