"""The stack's configuration, read from `tpu-stacks:*` keys into pydantic models and checked
before any resource is declared. Every mistake becomes one line naming the key."""

from __future__ import annotations

from typing import Any, Literal

import pulumi
from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.catalog.tpu import gke_version
from tpu_stacks.cluster_spec import ClusterSpec, plan_cluster
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.validation import parse
from tpu_stacks.vllm_spec import VllmSpec

NAMESPACE = "tpu-stacks"
SECRET_KEYS = ("hfToken", "vllmApiKey")


class IdentitySpec(BaseModel):
    """The Kubernetes ServiceAccount a workload runs as, bound through Workload Identity."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ksa_name: str = Field(default="tpu-workload", alias="ksaName")
    namespace: str = "default"
    mode: Literal["principal", "service-account"] = "principal"
    gsa_name: str | None = Field(default=None, alias="gsaName")
    project_number: str | None = Field(default=None, alias="projectNumber")


class StackConfig(BaseModel):
    """Everything a stack file may say, validated as a whole."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    scenario: Literal["cluster", "vllm"] = "cluster"
    kubernetes_version: str = Field(default="1.33", alias="kubernetesVersion")
    cluster: ClusterSpec
    identity: IdentitySpec = Field(default_factory=IdentitySpec)
    vllm: VllmSpec | None = None


class Secrets:
    """Secret config values: only ever read as Pulumi secrets, refused when written in plain text."""

    def __init__(self, config: pulumi.Config) -> None:
        self.values: dict[str, pulumi.Output[str]] = {}
        for key in SECRET_KEYS:
            if config.get(key) is None:
                continue
            if not pulumi.runtime.is_config_secret(f"{NAMESPACE}:{key}"):
                raise UserError(key, "<plain text>", "is not a secret in the stack file",
                                f"remove it and set it with: pulumi config set --secret {NAMESPACE}:{key} <value>")
            self.values[key] = config.require_secret(key)

    def get(self, key: str) -> pulumi.Output[str] | None:
        return self.values.get(key)


# Keys read as structured objects (the rest are plain strings).
OBJECT_KEYS = ("cluster", "identity", "vllm")
SCALAR_KEYS = ("scenario", "kubernetesVersion")


def _raw_config(config: pulumi.Config) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for key in SCALAR_KEYS:
        value = config.get(key)
        if value is not None:
            raw[key] = value
    for key in OBJECT_KEYS:
        try:
            value = config.get_object(key)
        except Exception:  # not valid JSON: a scalar where an object belongs
            raise UserError(key, config.get(key), "is not an object", "write it as a YAML mapping") from None
        if value is not None:
            raw[key] = value
    return raw


def load() -> tuple[StackConfig, Secrets]:
    """Read and check the current stack's config; errors name the `tpu-stacks:` key."""
    try:
        return _load(), Secrets(pulumi.Config(NAMESPACE))
    except UserError as error:
        raise error.in_namespace(NAMESPACE) from None


def _load() -> StackConfig:
    raw = _raw_config(pulumi.Config(NAMESPACE))
    if "cluster" not in raw:
        raise UserError("cluster", MISSING, "is required", "declare the cluster (see README: configuration)")
    cluster = raw["cluster"]
    if isinstance(cluster, dict):
        gcp_config = pulumi.Config("gcp")
        cluster.setdefault("project", gcp_config.get("project"))
        cluster.setdefault("location", gcp_config.get("zone") or gcp_config.get("region"))
        cluster.setdefault("universe", "s3ns" if gcp_config.get("universeDomain") == "s3nsapis.fr" else "google")
    stack = parse(StackConfig, raw)
    try:
        gke_version(stack.kubernetes_version)
    except UserError as error:
        raise error.under("kubernetesVersion") from None
    _check_scenario(stack)
    if stack.scenario == "cluster":
        plan_cluster(stack.cluster)  # every cluster rule, before any resource exists
    return stack


def _check_scenario(stack: StackConfig) -> None:
    """Each workload scenario needs its own section, and derives the cluster's slices itself."""
    if stack.scenario == "cluster":
        return
    if getattr(stack, stack.scenario) is None:
        raise UserError(stack.scenario, MISSING, f"is required for scenario {stack.scenario}", "see docs/" + stack.scenario + ".md")
    if stack.cluster.slices:
        raise UserError("cluster.slices", f"{len(stack.cluster.slices)} slice(s)",
                        f"are derived from the model in scenario {stack.scenario}", "remove cluster.slices")
