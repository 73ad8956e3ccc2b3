"""The typed inputs and outputs of `TpuCluster`, as Pulumi's schema inference reads them.

These TypedDicts are the multi-language surface (`pulumi package add` turns them into SDK types);
`cluster.spec.ClusterSpec` validates the same fields. A test keeps the two in step.
"""

from typing import NotRequired, TypedDict


class AutoscalingArgs(TypedDict):
    min_nodes: NotRequired[int]
    """Lowest node count (a multi-host pool: 0 or the whole slice)."""
    max_nodes: NotRequired[int]
    """Highest node count (a multi-host pool: the whole slice)."""


class SliceArgs(TypedDict):
    generation: str
    """TPU generation: v4, v5e, v5p, v6e or tpu7x."""
    topology: str
    """Slice shape such as 2x4, 4x8 or 2x2x2."""
    machine_type: NotRequired[str]
    """Machine type; derived from the catalogue when omitted (fewest VMs)."""
    count: NotRequired[int]
    """Identical slices; each multi-host slice gets its own node pool."""
    nodes: NotRequired[int]
    """Single-host pools only: fixed node count."""
    name: NotRequired[str]
    """Node pool name; `{n}` places the slice number (tpu{n}: tpu1, tpu2), else -1, -2 is appended."""
    zone: NotRequired[str]
    """The one zone of the pool (required in a regional cluster with several node locations)."""
    spot: NotRequired[bool]
    reservation: NotRequired[str]
    """Name of a specific reservation to consume."""
    flex_start: NotRequired[bool]
    queued_provisioning: NotRequired[bool]
    autoscaling: NotRequired[AutoscalingArgs]
    threads_per_core: NotRequired[int]
    max_run_duration: NotRequired[str]


class SystemPoolArgs(TypedDict):
    machine_type: NotRequired[str]
    nodes: NotRequired[int]


class AddonsArgs(TypedDict):
    gcs_fuse: NotRequired[bool]
    ray_operator: NotRequired[bool]
    managed_prometheus: NotRequired[bool]


class ExistingClusterArgs(TypedDict):
    name: str
    location: str
    project: NotRequired[str]
    create_pools: NotRequired[bool]
    """Add the declared slices as new node pools (otherwise they describe pools that exist)."""


class TpuClusterArgs(TypedDict):
    project: str
    """Google Cloud project id."""
    location: str
    """A zone (zonal cluster) or a region (regional cluster)."""
    name: NotRequired[str]
    node_locations: NotRequired[list[str]]
    mode: NotRequired[str]
    """standard or autopilot."""
    release_channel: NotRequired[str]
    min_version: NotRequired[str]
    """Lowest GKE version; checked against every TPU generation the cluster hosts."""
    universe: NotRequired[str]
    """google or s3ns (sovereign cloud): sets the workload pool and service-account domains."""
    addons: NotRequired[AddonsArgs]
    system_pool: NotRequired[SystemPoolArgs]
    slices: NotRequired[list[SliceArgs]]
    deletion_protection: NotRequired[bool]
    node_service_account: NotRequired[str]
    """Email of the service account the nodes run as (default: the Compute Engine default account)."""
    existing: NotRequired[ExistingClusterArgs]
    """Use this existing cluster instead of creating one."""


class SliceInfo(TypedDict):
    """One node pool of the cluster as workloads see it."""

    pool_name: str
    machine_type: str
    topology: str
    chips: int
    nodes: int
    chips_per_vm: int
    accelerator_label: str
    generation: str
    node_selector: dict[str, str]
