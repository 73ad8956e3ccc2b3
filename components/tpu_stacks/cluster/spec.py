"""What a user asks of a cluster: `ClusterSpec` and its parts, as config or component args write them.

`cluster.plan.plan_cluster` turns a spec into decisions; this module only declares the fields,
their aliases (the config spelling), bounds and defaults. Pure: no provider SDK.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Autoscaling(_Spec):
    """Node autoscaling. Single-host pools scale node by node between total min and max; a
    multi-host pool is one atomic slice, so it scales only between 0 and the whole slice."""

    min_nodes: int = Field(default=0, ge=0, alias="minNodes")
    max_nodes: int | None = Field(default=None, ge=1, alias="maxNodes")


class SliceSpec(_Spec):
    """A TPU slice as users think of it: generation + topology, how many, and what capacity."""

    generation: str
    topology: str
    machine_type: str | None = Field(default=None, alias="machineType")
    count: int = Field(default=1, ge=1, le=64)
    """Identical slices; multi-host slices get one node pool each."""
    nodes: int | None = Field(default=None, ge=0)
    """Single-host only: fixed node count of the pool (default: one VM per slice)."""
    name: str | None = None
    zone: str | None = None
    spot: bool = False
    reservation: str | None = None
    flex_start: bool = Field(default=False, alias="flexStart")
    queued_provisioning: bool = Field(default=False, alias="queuedProvisioning")
    autoscaling: Autoscaling | None = None
    threads_per_core: int | None = Field(default=None, ge=1, le=2, alias="threadsPerCore")
    max_run_duration: str | None = Field(default=None, alias="maxRunDuration")


class SystemPoolSpec(_Spec):
    """The CPU pool every Standard cluster needs for kube-system and add-on pods ([D-GKE-TPU])."""

    machine_type: str = Field(default="e2-standard-4", alias="machineType")
    nodes: int = Field(default=1, ge=1)
    """Per zone of the cluster's node locations."""


class AddonsSpec(_Spec):
    gcs_fuse: bool = Field(default=True, alias="gcsFuse")
    ray_operator: bool = Field(default=False, alias="rayOperator")
    managed_prometheus: bool = Field(default=True, alias="managedPrometheus")


class ExistingCluster(_Spec):
    """Bring your own cluster: a workload stack uses it instead of creating one."""

    name: str
    location: str
    project: str | None = None
    create_pools: bool = Field(default=False, alias="createPools")
    """Add the declared slices as new node pools (otherwise they describe pools that exist)."""


class ClusterSpec(_Spec):
    name: str = "tpu-cluster"
    project: str
    location: str
    node_locations: list[str] = Field(default_factory=list, alias="nodeLocations")
    mode: Literal["standard", "autopilot"] = "standard"
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = Field(
        default="REGULAR", alias="releaseChannel"
    )
    min_version: str | None = Field(default=None, alias="minVersion")
    universe: str = "google"
    addons: AddonsSpec = Field(default_factory=AddonsSpec)
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec, alias="systemPool")
    slices: list[SliceSpec] = Field(default_factory=list)
    deletion_protection: bool = Field(default=False, alias="deletionProtection")
    node_service_account: str | None = Field(default=None, alias="nodeServiceAccount")
    """Email of the service account the nodes run as (default: the project's Compute Engine account)."""
    existing: ExistingCluster | None = None
