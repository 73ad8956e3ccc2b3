"""The stack's configuration, read from `tpu-stacks:*` keys before any resource is declared.

This module checks what belongs to the stack itself (`scenario`, `kubernetesVersion`, `identity`,
unknown or misplaced keys, secrets) and hands `cluster` and the scenario's own section
(`tpu-stacks:vllm`, ...) over raw: the component that owns them parses and checks them, once,
before its first resource. Every mistake becomes one line naming the key as the user wrote it.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

import pulumi
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from tpu_stacks.catalog.tpu import gke_version
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.gcp.universe import resolve as resolve_universe
from tpu_stacks.gcp.universe import universe
from tpu_stacks.inputs.field_rules import FieldProblem, K8sName, ServiceAccountId, SpecModel
from tpu_stacks.inputs.validation import camel, parse
from tpu_stacks.names import PROJECT_NUMBER, is_zone_of
from tpu_stacks.registry import workloads

NAMESPACE = "tpu-stacks"
SECRET_KEYS = tuple(dict.fromkeys(key for workload in workloads() for key in workload.secret_keys))
"""The secret config keys the workloads take (each workload's descriptor declares its own)."""
SCALAR_KEYS = ("scenario", "kubernetesVersion")
COMMON_OBJECT_KEYS = ("cluster", "identity")


def _project_number(value: str) -> str:
    """names.PROJECT_NUMBER is the rule; raised as a FieldProblem so the key is named as written."""
    if not PROJECT_NUMBER.matches(value):
        raise FieldProblem(
            "is not a project number (digits only)",
            "copy projectNumber from: gcloud projects describe <project-id> --format='value(projectNumber)'",
        )
    return value


class IdentitySpec(SpecModel):
    """The Kubernetes ServiceAccount a workload runs as, bound through Workload Identity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ksa_name: K8sName = Field(default="tpu-workload", alias="ksaName")
    namespace: K8sName = "default"
    mode: Literal["principal", "service-account"] = "principal"
    gsa_name: ServiceAccountId | None = Field(default=None, alias="gsaName")
    project_number: Annotated[str, AfterValidator(_project_number)] | None = Field(default=None, alias="projectNumber")
    """The project's number (digits only, as `gcloud projects describe` prints it)."""


class StackConfig(BaseModel):
    """The common part of every stack file, validated as a whole."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    scenario: str = "cluster"
    kubernetes_version: str = Field(default="1.33", alias="kubernetesVersion")
    cluster: dict[str, Any]
    """Raw: the component that declares the cluster parses it (TpuCluster or the workload)."""
    identity: IdentitySpec = Field(default_factory=IdentitySpec)


class Secrets:
    """Secret config values: only ever read as Pulumi secrets, refused when written in plain text."""

    def __init__(self, config: pulumi.Config) -> None:
        self.values: dict[str, pulumi.Output[str]] = {}
        for key in SECRET_KEYS:
            if config.get(key) is None:
                continue
            if not pulumi.runtime.is_config_secret(f"{NAMESPACE}:{key}"):
                raise UserError(
                    key,
                    "<plain text>",
                    "is not a secret in the stack file",
                    f"remove it and set it with: pulumi config set --secret {NAMESPACE}:{key} <value>",
                )
            self.values[key] = config.require_secret(key)

    def get(self, key: str) -> pulumi.Output[str] | None:
        return self.values.get(key)


class LoadedStack(BaseModel):
    """A stack whose own keys are checked: the common config, the scenario's name and its raw section."""

    config: StackConfig
    scenario: str
    section: dict[str, Any] | None = None
    origins: dict[str, str] = {}
    """Cluster keys the gcp provider's config set (`cluster.location` -> `gcp:zone`): refusals name those."""

    @property
    def cluster(self) -> dict[str, Any]:
        """The `cluster` mapping as written (plus the gcp provider's project/location defaults)."""
        return dict(self.config.cluster)

    def component_args(self, **extra: Any) -> dict[str, Any]:
        """A workload component's args: its section as written, the cluster, and `extra` (secrets)."""
        return {**(self.section or {}), "cluster": self.cluster, **{k: v for k, v in extra.items() if v is not None}}


def _object(config: pulumi.Config, key: str) -> Any:
    try:
        return config.get_object(key)
    except Exception:  # not valid JSON: a scalar where an object belongs
        raise UserError(key, config.get(key), "is not an object", "write it as a YAML mapping") from None


def _raw_common(config: pulumi.Config) -> dict[str, Any]:
    raw: dict[str, Any] = {key: config.get(key) for key in SCALAR_KEYS if config.get(key) is not None}
    for key in COMMON_OBJECT_KEYS:
        value = _object(config, key)
        if value is not None:
            raw[key] = value
    return raw


def _defaults_from_gcp(cluster: Any) -> dict[str, str]:
    """Project, location and universe default to the gcp provider's own config. Returns where each
    defaulted value came from (`cluster.location` -> `gcp:zone`), so a refusal names the key as written."""
    if not isinstance(cluster, dict):
        return {}
    gcp_config = pulumi.Config("gcp")
    origins: dict[str, str] = {}
    for field, keys in (("project", ("project",)), ("location", ("zone", "region"))):
        given = next((key for key in keys if gcp_config.get(key) is not None), None)
        if field not in cluster and given is not None:
            origins[f"cluster.{field}"] = f"gcp:{given}"
        cluster.setdefault(field, gcp_config.get(given) if given else None)
    cluster["universe"] = resolve_universe(cluster.get("universe"), gcp_config.get("universeDomain"))
    return origins


def _check_where(cluster: Any, origins: dict[str, str]) -> None:
    """The provider's zone lies in its region, and the project ids are project ids of the universe the
    stack deploys to (names.PROJECT_ID; `resolve_universe` already made universe and domain agree)."""
    gcp_config = pulumi.Config("gcp")
    zone, region = gcp_config.get("zone"), gcp_config.get("region")
    if zone and region and not is_zone_of(zone, region):  # the provider would put zonal and regional resources apart
        raise UserError(
            "gcp:zone", zone, f"is not a zone of gcp:region {region!r}", f"use a zone of {region}, or fix gcp:region"
        )
    if not isinstance(cluster, dict):
        return
    chosen = universe(cluster["universe"])
    if isinstance(cluster.get("project"), str):
        chosen.check_project(cluster["project"], origins.get("cluster.project", "cluster.project"))
    existing = cluster.get("existing")
    if isinstance(existing, dict) and isinstance(existing.get("project"), str):
        chosen.check_project(existing["project"], "cluster.existing.project")


def _require_project_and_location(cluster: Any) -> None:
    """A project or location set nowhere is said with what sets it, not as a `None` the user never wrote."""
    if not isinstance(cluster, dict):
        return
    if cluster.get("project") is None:
        raise UserError(
            "cluster.project",
            MISSING,
            "is not set",
            "set gcp:project (pulumi config set gcp:project <project-id>) or cluster.project",
        )
    if cluster.get("location") is None:
        raise UserError(
            "cluster.location",
            MISSING,
            "is not set",
            "set gcp:zone or gcp:region (pulumi config set gcp:region us-central1) or cluster.location",
        )


def load(sections: dict[str, str | None]) -> tuple[LoadedStack, Secrets]:
    """Read and check the current stack's own keys; `sections` maps each scenario to its section key.
    Errors carry the key without the `tpu-stacks:` namespace (the caller adds it)."""
    config = pulumi.Config(NAMESPACE)
    return _load(config, sections), Secrets(config)


def _known_keys(sections: dict[str, str | None]) -> set[str]:
    return {*SCALAR_KEYS, *COMMON_OBJECT_KEYS, *SECRET_KEYS, *(s for s in sections.values() if s)}


def _scenario(name: str, sections: dict[str, str | None]) -> str:
    if name not in sections:
        raise UserError("scenario", name, "is not a scenario", f"valid: {', '.join(sections)}")
    return name


def component_keys(scenario: str) -> dict[str, str | None]:
    """Keys of the scenario's component args that are not in its section (its spec's `INPUTS`: the cluster
    and the secrets this program sets, never a section), in both spellings the components accept, each with
    the stack-config key that sets it when it is a secret (`hf_token` -> `hfToken`)."""
    found: dict[str, str | None] = {}
    for workload in workloads():
        if workload.name != scenario:
            continue
        secrets = dict(workload.secrets)
        for item in getattr(workload.spec.load(), "INPUTS", ()):
            for spelling in (item.name, camel(item.name)):
                found[spelling] = secrets.get(item.name) if item.secret else None
    return found


def _near_namespace(namespace: str) -> bool:
    """`tpu-stack`, `TPU-stacks`, `tpu_stacks`: a namespace meant as ours, whose keys nobody would read."""
    folded = namespace.lower().replace("_", "-")
    return namespace != NAMESPACE and (
        folded == NAMESPACE or difflib.SequenceMatcher(None, folded, NAMESPACE).ratio() >= 0.8
    )


def _check_unknown_keys(sections: dict[str, str | None]) -> None:
    """A misspelled key (`tpu-stacks:hftoken`) or namespace (`tpu-stack:model`) would otherwise be ignored
    without a word."""
    known = _known_keys(sections)
    for full_key in pulumi.runtime.config.CONFIG.get():
        namespace, _, key = full_key.partition(":")
        if _near_namespace(namespace):
            close = difflib.get_close_matches(key, sorted(known), n=1)
            raise UserError(
                full_key,
                "<set>",
                f"is not read: its namespace is not {NAMESPACE}",
                f"did you mean {NAMESPACE}:{close[0] if close else key}?",
            )
        if namespace == NAMESPACE and key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            raise UserError(
                key,
                "<set>",
                "is not a tpu-stacks setting",
                f"did you mean {NAMESPACE}:{close[0]}?" if close else f"known: {', '.join(sorted(known))}",
            )


def _load(config: pulumi.Config, sections: dict[str, str | None]) -> LoadedStack:
    _check_unknown_keys(sections)
    raw = _raw_common(config)
    if "cluster" not in raw:
        raise UserError("cluster", MISSING, "is required", "declare the cluster (see README: configuration)")
    origins = _defaults_from_gcp(raw["cluster"])
    _require_project_and_location(raw["cluster"])
    _check_where(raw["cluster"], origins)
    common = parse(StackConfig, raw)
    chosen = _scenario(common.scenario, sections)
    try:
        gke_version(common.kubernetes_version)
    except UserError as error:
        raise error.under("kubernetesVersion") from None
    for other, key in sections.items():
        if key and key != sections[chosen] and config.get(key) is not None:
            raise UserError(
                key,
                "<set>",
                f"belongs to scenario {other}, not {chosen}",
                f"remove it or set {NAMESPACE}:scenario to {other}",
            )
    key = sections[chosen]
    if key is None:
        return LoadedStack(config=common, scenario=chosen, origins=origins)
    section = _object(config, key)
    if section is None:
        raise UserError(key, MISSING, f"is required for scenario {chosen}", f"see docs/{chosen}.md")
    if not isinstance(section, dict):
        raise UserError(key, section, "is not a mapping", "write it as a YAML mapping of settings")
    for reserved, secret in component_keys(chosen).items():
        if reserved in section:
            fix = f"a secret is not a section setting: set it with pulumi config set --secret {NAMESPACE}:{secret}"
            raise UserError(f"{key}.{reserved}", "<set>", "is not a known setting", fix if secret else "remove it")
    return LoadedStack(config=common, scenario=chosen, section=section, origins=origins)
