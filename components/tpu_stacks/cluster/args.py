"""The typed inputs and outputs of `TpuCluster`, as Pulumi's schema inference reads them.

These TypedDicts are the multi-language surface (`pulumi package add` turns them into SDK types);
`cluster.spec.ClusterSpec` validates the same fields. A test keeps the two in step.
"""

from typing import Any, NotRequired, TypedDict


class AutoscalingArgs(TypedDict):
    min_nodes: NotRequired[int]
    """Lowest node count (a multi-host pool: 0 or the whole slice). Default: 0."""
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
    """Identical slices; multi-host slices get one node pool each. Default: 1."""
    nodes: NotRequired[int]
    """Single-host only: fixed node count of the pool (default: one VM per slice)."""
    name: NotRequired[str]
    """Node pool name (not `system`, the CPU pool's); `{n}` places the slice number (tpu{n}: tpu1, tpu2), else -1, -2
    is appended."""
    zone: NotRequired[str]
    """The one zone of the pool (required in a regional cluster with several node locations)."""
    spot: NotRequired[bool]
    """Spot TPU VMs: cheaper, preemptible at any time. Default: false."""
    reservation: NotRequired[str]
    """Name of a specific reservation to consume."""
    flex_start: NotRequired[bool]
    """Flex-start (Dynamic Workload Scheduler) capacity, VMs for up to 7 days; the pool scales from zero with no
    reservation, no auto-repair and location policy ANY, as GKE requires. Default: false."""
    queued_provisioning: NotRequired[bool]
    """Queued provisioning through ProvisioningRequests (TPU v6e and tpu7x): GKE runs it as flex-start with queued
    provisioning, so flexStart is turned on; scales from zero. Default: false."""
    autoscaling: NotRequired[AutoscalingArgs]
    """Node autoscaling (default: a fixed node count)."""
    threads_per_core: NotRequired[int]
    """SMT threads per core of the TPU VMs (1 turns simultaneous multithreading off)."""
    max_run_duration: NotRequired[str]
    """How long a node may run before GKE deletes it, in seconds such as 86400s."""
    capacity: NotRequired[list[Any]]
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""


class SystemPoolArgs(TypedDict):
    machine_type: NotRequired[str]
    """A CPU machine type (never a TPU one). Default: e2-standard-4."""
    nodes: NotRequired[int]
    """Nodes per zone of the cluster's node locations. Default: 1."""


class AddonsArgs(TypedDict):
    gcs_fuse: NotRequired[bool]
    """The Cloud Storage FUSE CSI driver (weights and checkpoints mounted from buckets). Default: true."""
    ray_operator: NotRequired[bool]
    """GKE's Ray operator add-on (KubeRay). Default: false."""
    managed_prometheus: NotRequired[bool]
    """Google Cloud Managed Service for Prometheus (PodMonitoring, the HPA's metrics). Default: true."""


class ExistingClusterArgs(TypedDict):
    name: str
    """The existing cluster's name."""
    location: str
    """Its zone or region."""
    project: NotRequired[str]
    """Its project (default: the stack's project)."""
    create_pools: NotRequired[bool]
    """Add the declared slices as new node pools (otherwise they describe pools that exist). Default: false."""


class AuthorizedNetworkArgs(TypedDict):
    cidr_block: str
    """An IPv4 CIDR range such as 203.0.113.0/24."""
    display_name: NotRequired[str]
    """A label for it in the console."""


class ControlPlaneArgs(TypedDict):
    authorized_networks: NotRequired[list[AuthorizedNetworkArgs]]
    """Only these networks may reach the endpoint (default: none set, the public endpoint is open to the internet,
    guarded by authentication only; the policy pack advises against it)."""
    private_endpoint: NotRequired[bool]
    """Only the private endpoint (inside the VPC); needs private nodes, which it turns on: nodes then reach the
    internet (Docker Hub, Hugging Face) only through a Cloud NAT you provide, and `pulumi up` must run from a
    network that reaches the VPC. Default: false."""
    master_ipv4_cidr_block: NotRequired[str]
    """privateEndpoint only: a /28 for the control plane's private addresses (default: chosen by GKE)."""


class TpuClusterArgs(TypedDict):
    project: str
    """Google Cloud project id."""
    location: str
    """A zone (zonal cluster) or a region (regional cluster)."""
    name: NotRequired[str]
    """GKE cluster name (at most 40 characters). Default: tpu-cluster."""
    node_locations: NotRequired[list[str]]
    """Zones of a regional cluster (default: the zone of a zonal cluster)."""
    mode: NotRequired[str]
    """standard or autopilot. Default: standard."""
    release_channel: NotRequired[str]
    """GKE release channel: RAPID, REGULAR, STABLE or EXTENDED. Default: REGULAR."""
    min_version: NotRequired[str]
    """Lowest GKE version; checked against every TPU generation the cluster hosts. The cluster is created at its
    minor (`1.33` for 1.33.3-gke.1136000), which GKE resolves to that minor's newest patch in the channel."""
    universe: NotRequired[str]
    """google or s3ns (sovereign cloud): sets the workload pool and service-account domains. Default: google."""
    addons: NotRequired[AddonsArgs]
    """Cluster add-ons (GCS FUSE and Managed Prometheus on, the Ray operator off). Default: gcsFuse true, rayOperator
    false, managedPrometheus true."""
    system_pool: NotRequired[SystemPoolArgs]
    """The CPU pool for kube-system and add-on pods (Standard clusters). Default: machineType e2-standard-4, nodes 1."""
    slices: NotRequired[list[SliceArgs]]
    """TPU slices, one node pool each (one per multi-host slice); workloads derive theirs from the model."""
    deletion_protection: NotRequired[bool]
    """GKE deletion protection (a protected cluster cannot be deleted until it is turned off). Default: false."""
    node_service_account: NotRequired[str]
    """Email of the service account the nodes run as (default: a new `<name>-nodes` account with only GKE's node
    role, never the Compute Engine default account, which often holds project Editor)."""
    existing: NotRequired[ExistingClusterArgs]
    """Use this existing cluster instead of creating one."""
    allow_uncatalogued: NotRequired[bool]
    """Accept a region, zone or machine type that the location catalogue (catalog/locations.py) does not list, or a
    zone it does not list for the slice's TPU generation: for one newer than the catalogue. The plan records it.
    Default: false."""
    control_plane: NotRequired[ControlPlaneArgs]
    """Authorized networks and a private endpoint for the control plane (new clusters only). Default: privateEndpoint
    false."""
    dataplane_v2: NotRequired[bool]
    """GKE Dataplane V2, which enforces the workloads' NetworkPolicies (Autopilot always has it). Immutable: turning
    it on for a Standard cluster created without it replaces the cluster; set false to keep such a cluster.
    Default: true."""


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
