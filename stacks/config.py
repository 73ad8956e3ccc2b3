"""The stack's configuration, read from `tpu-stacks:*` keys into pydantic models and checked
before any resource is declared. Every mistake becomes one line naming the key.

The common keys (`scenario`, `kubernetesVersion`, `cluster`, `identity`) are checked here; each
scenario's own section (`tpu-stacks:vllm`, `tpu-stacks:saxml`, ...) is checked by that scenario's
spec (see `scenarios.py`).
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

import pulumi
from pydantic import BaseModel, ConfigDict, Field

from stacks.scenarios import SCENARIOS, Scenario, scenario
from tpu_stacks.catalog.tpu import gke_version
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.validation import parse

NAMESPACE = "tpu-stacks"
SECRET_KEYS = ("hfToken", "vllmApiKey")
SCALAR_KEYS = ("scenario", "kubernetesVersion")
COMMON_OBJECT_KEYS = ("cluster", "identity")


class IdentitySpec(BaseModel):
    """The Kubernetes ServiceAccount a workload runs as, bound through Workload Identity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ksa_name: str = Field(default="tpu-workload", alias="ksaName")
    namespace: str = "default"
    mode: Literal["principal", "service-account"] = "principal"
    gsa_name: str | None = Field(default=None, alias="gsaName")
    project_number: str | None = Field(default=None, alias="projectNumber")


class StackConfig(BaseModel):
    """The common part of every stack file, validated as a whole."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    scenario: str = "cluster"
    kubernetes_version: str = Field(default="1.33", alias="kubernetesVersion")
    cluster: ClusterSpec
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
    """A checked stack: the common config, the scenario and its checked section."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    config: StackConfig
    scenario: Scenario
    section: Any = None


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


def _defaults_from_gcp(cluster: Any) -> None:
    """Project, location and universe default to the gcp provider's own config."""
    if not isinstance(cluster, dict):
        return
    gcp_config = pulumi.Config("gcp")
    cluster.setdefault("project", gcp_config.get("project"))
    cluster.setdefault("location", gcp_config.get("zone") or gcp_config.get("region"))
    cluster.setdefault("universe", "s3ns" if gcp_config.get("universeDomain") == "s3nsapis.fr" else "google")


def load() -> tuple[LoadedStack, Secrets]:
    """Read and check the current stack's config; errors name the `tpu-stacks:` key."""
    try:
        config = pulumi.Config(NAMESPACE)
        return _load(config), Secrets(config)
    except UserError as error:
        raise error.in_namespace(NAMESPACE) from None


def _known_keys() -> set[str]:
    sections = {s.section for s in SCENARIOS.values() if s.section}
    return {*SCALAR_KEYS, *COMMON_OBJECT_KEYS, *SECRET_KEYS, *sections}


def _check_unknown_keys() -> None:
    """A misspelled key (`tpu-stacks:hftoken`) would otherwise be ignored without a word."""
    known = _known_keys()
    for full_key in pulumi.runtime.config.CONFIG.get():
        namespace, _, key = full_key.partition(":")
        if namespace == NAMESPACE and key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            raise UserError(
                key,
                "<set>",
                "is not a tpu-stacks setting",
                f"did you mean {NAMESPACE}:{close[0]}?" if close else f"known: {', '.join(sorted(known))}",
            )


def _load(config: pulumi.Config) -> LoadedStack:
    _check_unknown_keys()
    raw = _raw_common(config)
    if "cluster" not in raw:
        raise UserError("cluster", MISSING, "is required", "declare the cluster (see README: configuration)")
    _defaults_from_gcp(raw["cluster"])
    common = parse(StackConfig, raw)
    chosen = scenario(common.scenario)
    try:
        gke_version(common.kubernetes_version)
    except UserError as error:
        raise error.under("kubernetesVersion") from None
    for other in SCENARIOS.values():
        if other.section and other.section != chosen.section and config.get(other.section) is not None:
            raise UserError(
                other.section,
                "<set>",
                f"belongs to scenario {other.name}, not {chosen.name}",
                f"remove it or set {NAMESPACE}:scenario to {other.name}",
            )
    if chosen.section is None:
        plan_cluster(common.cluster)  # every cluster rule, before any resource exists
        return LoadedStack(config=common, scenario=chosen)
    section = _object(config, chosen.section)
    if section is None:
        raise UserError(
            chosen.section, MISSING, f"is required for scenario {chosen.name}", f"see docs/{chosen.name}.md"
        )
    if common.cluster.slices and not chosen.takes_slices:
        raise UserError(
            "cluster.slices",
            f"{len(common.cluster.slices)} slice(s)",
            f"are derived from the model in scenario {chosen.name}",
            "remove cluster.slices",
        )
    return LoadedStack(config=common, scenario=chosen, section=parse(chosen.spec(), section, chosen.section))
