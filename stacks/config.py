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

NAMESPACE = "tpu-stacks"
SCENARIOS = ("cluster",)


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

    scenario: Literal["cluster"] = "cluster"
    kubernetes_version: str = Field(default="1.33", alias="kubernetesVersion")
    cluster: ClusterSpec
    identity: IdentitySpec = Field(default_factory=IdentitySpec)


# Keys read as structured objects (the rest are plain strings).
OBJECT_KEYS = ("cluster", "identity")
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


def load() -> StackConfig:
    """Read and check the current stack's config; errors name the `tpu-stacks:` key."""
    try:
        return _load()
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
    plan_cluster(stack.cluster)  # every cluster rule, before any resource exists
    return stack
