"""What a user asks of a cluster: `ClusterSpec` and its parts, as config or component args write them.

`cluster.plan.plan_cluster` turns a spec into decisions; this module only declares the fields,
their aliases (the config spelling), bounds and defaults. Pure: no provider SDK.
"""

from __future__ import annotations

import ipaddress
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from tpu_stacks.catalog.tpu import QUEUED_TPU_GENERATIONS, generation_names, names_text
from tpu_stacks.inputs.field_rules import ComponentInput, K8sName, SpecModel


class _Spec(SpecModel):
    # Field docstrings are the fields' descriptions (described_fields): scripts/gen_args.py writes args.py.
    # SpecModel (field_rules.py): unknown keys refused, booleans/infinite numbers/secrets/invisible characters too.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Autoscaling(_Spec):
    """Node autoscaling. Single-host pools scale node by node between total min and max; a
    multi-host pool is one atomic slice, so it scales only between 0 and the whole slice."""

    min_nodes: int = Field(default=0, ge=0, alias="minNodes")
    """Lowest node count (a multi-host pool: 0 or the whole slice)."""
    max_nodes: int | None = Field(default=None, ge=1, alias="maxNodes")
    """Highest node count (a multi-host pool: the whole slice)."""


class SliceSpec(_Spec):
    """A TPU slice as users think of it: generation + topology, how many, and what capacity."""

    generation: str = Field(description=f"TPU generation: {names_text(generation_names())}.")
    topology: str
    """Slice shape such as 2x4, 4x8 or 2x2x2."""
    machine_type: str | None = Field(default=None, alias="machineType")
    """Machine type; derived from the catalogue when omitted (fewest VMs)."""
    count: int = Field(default=1, ge=1, le=64)
    """Identical slices; multi-host slices get one node pool each."""
    nodes: int | None = Field(default=None, ge=0)
    """Single-host only: fixed node count of the pool (default: one VM per slice)."""
    name: str | None = None
    """Node pool name (not `system` nor `jobs`, the CPU pools'); `{n}` places the slice number (tpu{n}: tpu1, tpu2),
    else -1, -2 is appended."""
    zone: str | None = None
    """The one zone of the pool (required in a regional cluster with several node locations)."""
    spot: bool = False
    """Spot TPU VMs: cheaper, preemptible at any time."""
    reservation: str | None = None
    """Name of a specific reservation to consume."""
    flex_start: bool = Field(default=False, alias="flexStart")
    """Flex-start (Dynamic Workload Scheduler) capacity, VMs for up to 7 days; the pool scales from zero with no
    reservation, no auto-repair and location policy ANY, as GKE requires."""
    queued_provisioning: bool = Field(
        default=False,
        alias="queuedProvisioning",
        description="Queued provisioning through ProvisioningRequests "
        f"(TPU {names_text(QUEUED_TPU_GENERATIONS, 'and')}): GKE runs it as flex-start with queued provisioning, so "
        "flexStart is turned on; scales from zero.",
    )
    autoscaling: Autoscaling | None = None
    """Node autoscaling (default: a fixed node count)."""
    threads_per_core: int | None = Field(default=None, ge=1, le=2, alias="threadsPerCore")
    """SMT threads per core of the TPU VMs (1 turns simultaneous multithreading off)."""
    max_run_duration: str | None = Field(default=None, alias="maxRunDuration")
    """How long a node may run before GKE deletes it, in seconds such as 86400s."""
    capacity: list[str | dict[str, str]] | None = None
    """Capacity kinds in the order GKE should try them: spot, onDemand, flexStart or {reservation: NAME}; one kind is
    a node pool of that kind, several a ComputeClass that falls back across them (docs/capacity.md)."""


class SystemPoolSpec(_Spec):
    """The CPU pool every Standard cluster needs for kube-system and add-on pods ([D-GKE-TPU])."""

    machine_type: str = Field(default="e2-standard-4", alias="machineType")
    """A CPU machine type (never a TPU one)."""
    nodes: int = Field(default=1, ge=1)
    """Nodes per zone of the cluster's node locations."""


class JobsPoolSpec(_Spec):
    """A CPU pool for Jobs the system pool cannot hold (a checkpoint conversion): it autoscales from 0, so its nodes
    exist only while a Job's pod asks for one, and it is tainted, so nothing else lands there (Standard clusters)."""

    machine_type: str | None = Field(default=None, alias="machineType")
    """A CPU machine type (default: sized from what the workload's Job requests, the smallest catalogued E2, else N2,
    type that holds it after GKE's reservations; required when no workload sizes it)."""
    max_nodes: int = Field(default=1, ge=1, le=16, alias="maxNodes")
    """Most nodes at once: one per Job pod that runs at the same time."""


class AddonsSpec(_Spec):
    """GKE add-ons the workloads use; a workload turns on what its pods need."""

    gcs_fuse: bool = Field(default=True, alias="gcsFuse")
    """The Cloud Storage FUSE CSI driver (weights and checkpoints mounted from buckets)."""
    ray_operator: bool = Field(default=False, alias="rayOperator")
    """GKE's Ray operator add-on (KubeRay); a Ray workload turns it on unless `cluster.kuberay` names your own."""
    managed_prometheus: bool = Field(default=True, alias="managedPrometheus")
    """Google Cloud Managed Service for Prometheus (PodMonitoring, the HPA's metrics)."""


class KubeRaySpec(_Spec):
    """A KubeRay operator you installed yourself, used instead of GKE's Ray add-on: the Ray heads admit their
    dashboard and job API only from the operator's pods in this namespace (docs/security.md, "Ray")."""

    # ledger: kuberay.operator.helm-namespace, kuberay.operator.kustomize-namespace
    namespace: K8sName
    """The operator's namespace: `helm install -n NAMESPACE` (KubeRay's chart installs into the release's namespace);
    `default` for KubeRay's kustomize manifests."""


class ExistingCluster(_Spec):
    """Bring your own cluster: a workload stack uses it instead of creating one."""

    name: str
    """The existing cluster's name."""
    location: str
    """Its zone or region."""
    project: str | None = None
    """Its project (default: the stack's project)."""
    create_pools: bool = Field(default=False, alias="createPools")
    """Add the declared slices as new node pools (otherwise they describe pools that exist)."""


class AuthorizedNetwork(_Spec):
    """A network allowed to reach the control plane's endpoint (GKE master authorized networks)."""

    cidr_block: str = Field(alias="cidrBlock")
    """An IPv4 CIDR range such as 203.0.113.0/24."""
    display_name: str | None = Field(default=None, alias="displayName")
    """A label for it in the console."""

    @field_validator("cidr_block")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            network = ipaddress.ip_network(value, strict=True)
        except ValueError:
            raise PydanticCustomError(
                "cidr", "write an IPv4 CIDR range with its network address, like 203.0.113.0/24"
            ) from None
        if network.version != 4 or "/" not in value:
            raise PydanticCustomError("cidr", "write an IPv4 CIDR range with a prefix length, like 203.0.113.0/24")
        return value


class ControlPlaneSpec(_Spec):
    """Who may reach the cluster's control plane (docs/security.md: "Control plane")."""

    authorized_networks: list[AuthorizedNetwork] | None = Field(default=None, alias="authorizedNetworks")
    """Only these networks may reach the endpoint (default: none set, the public endpoint is open to the internet,
    guarded by authentication only; the policy pack advises against it)."""
    private_endpoint: bool = Field(default=False, alias="privateEndpoint")
    """Only the private endpoint (inside the VPC); needs private nodes, which it turns on: nodes then reach the
    internet (Docker Hub, Hugging Face) only through a Cloud NAT you provide, and `pulumi up` must run from a
    network that reaches the VPC."""
    master_ipv4_cidr_block: str | None = Field(default=None, alias="masterIpv4CidrBlock")
    """privateEndpoint only: a /28 for the control plane's private addresses (default: chosen by GKE)."""

    @field_validator("master_ipv4_cidr_block")
    @classmethod
    def _master_cidr(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            network = ipaddress.ip_network(value, strict=True)
        except ValueError:
            raise PydanticCustomError("cidr", "write a private /28 range, like 172.16.0.0/28") from None
        if network.prefixlen != 28 or not network.is_private:
            raise PydanticCustomError("cidr", "write a private /28 range, like 172.16.0.0/28")
        return value


class ProxyOnlySubnetSpec(_Spec):
    """The proxy-only subnet (`purpose: REGIONAL_MANAGED_PROXY`, role ACTIVE) a regional Gateway's Envoy proxies take
    their addresses from (https://cloud.google.com/load-balancing/docs/proxy-only-subnets). A VPC network holds one
    active subnet per region: create it here, or name the one the network already has."""

    range: str = "192.168.64.0/23"
    """Its IPv4 range (the new subnet's, or the existing one's): the servers' NetworkPolicy admits the proxies from it.
    Default: a /23 (what Google recommends) outside the 10.0.0.0/8 GKE and auto-mode subnets draw from."""
    existing: str | None = Field(default=None, pattern=r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
    """Adopt this existing proxy-only subnet of the cluster's region and network instead of creating one (its
    Compute Engine name); give its `range` too: the program cannot read it offline, and the NetworkPolicies
    admit the proxies from it."""

    @model_validator(mode="after")
    def _existing_needs_its_range(self) -> ProxyOnlySubnetSpec:
        if self.existing is not None and "range" not in self.model_fields_set:
            raise PydanticCustomError(
                "existing_range",
                "adopts the subnet {existing} but gives no range: set proxyOnlySubnet.range to that subnet's range "
                "(gcloud compute networks subnets describe {existing} --format='value(ipCidrRange)'), which the "
                "NetworkPolicies admit the gateway's proxies from",
                {"existing": self.existing},
            )
        return self

    @field_validator("range")
    @classmethod
    def _range(cls, value: str) -> str:
        try:
            network = ipaddress.ip_network(value, strict=True)
        except ValueError:
            raise PydanticCustomError(
                "cidr", "write an IPv4 CIDR range with its network address, like 192.168.64.0/23"
            ) from None
        if network.version != 4 or "/" not in value or not network.is_private or network.prefixlen > 26:
            raise PydanticCustomError("cidr", "write a private IPv4 range of /26 or larger, like 192.168.64.0/23")
        return value


class GatewayApiSpec(_Spec):
    """GKE's Gateway API controller (release channel CHANNEL_STANDARD) and what its regional classes need."""

    enabled: bool = False
    """Turn on the Gateway API (a workload with `gateway.enabled` turns it on)."""
    proxy_only_subnet: ProxyOnlySubnetSpec = Field(default_factory=ProxyOnlySubnetSpec, alias="proxyOnlySubnet")
    """The region's proxy-only subnet, created with the cluster or adopted."""


class ClusterSpec(_Spec):
    """A GKE cluster with TPU slices: what users write as `cluster` (config) or TpuCluster args."""

    ARGS: ClassVar[str] = "TpuClusterArgs"

    name: str = "tpu-cluster"
    """GKE cluster name (at most 40 characters)."""
    project: str
    """Google Cloud project id."""
    location: str
    """A zone (zonal cluster) or a region (regional cluster)."""
    node_locations: list[str] = Field(default_factory=list, alias="nodeLocations")
    """Zones of a regional cluster (default: the zone of a zonal cluster)."""
    mode: Literal["standard", "autopilot"] = "standard"
    """standard or autopilot."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = Field(
        default="REGULAR", alias="releaseChannel"
    )
    """GKE release channel: RAPID, REGULAR, STABLE or EXTENDED."""
    min_version: str | None = Field(default=None, alias="minVersion")
    """Lowest GKE version; checked against every TPU generation the cluster hosts. The cluster is created at its
    minor (`1.33` for 1.33.3-gke.1136000), which GKE resolves to that minor's newest patch in the channel."""
    universe: str = "google"
    """google or s3ns (sovereign cloud): sets the workload pool and service-account domains."""
    addons: AddonsSpec = Field(default_factory=AddonsSpec)
    """Cluster add-ons (GCS FUSE and Managed Prometheus on, the Ray operator off)."""
    system_pool: SystemPoolSpec = Field(default_factory=SystemPoolSpec, alias="systemPool")
    """The CPU pool for kube-system and add-on pods (Standard clusters)."""
    jobs_pool: JobsPoolSpec | None = Field(default=None, alias="jobsPool")
    """A CPU pool from 0 nodes for large Jobs (Standard clusters; default: none, unless a workload's Job needs one:
    JetStream's checkpoint converter)."""
    slices: list[SliceSpec] = Field(default_factory=list)
    """TPU slices, one node pool each (one per multi-host slice); workloads derive theirs from the model."""
    deletion_protection: bool = Field(default=False, alias="deletionProtection")
    """GKE deletion protection (a protected cluster cannot be deleted until it is turned off)."""
    node_service_account: str | None = Field(default=None, alias="nodeServiceAccount")
    """Email of the service account the nodes run as (default: a new `<name>-nodes` account with only
    GKE's node role, never the Compute Engine default account, which often holds project Editor)."""
    existing: ExistingCluster | None = None
    """Use this existing cluster instead of creating one."""
    allow_uncatalogued: bool = Field(default=False, alias="allowUncatalogued")
    """Accept a region, zone or machine type that the location catalogue (catalog/locations.py) does not list, or a
    zone it does not list for the slice's TPU generation: for one newer than the catalogue. The plan records it."""
    control_plane: ControlPlaneSpec = Field(default_factory=ControlPlaneSpec, alias="controlPlane")
    """Authorized networks and a private endpoint for the control plane (new clusters only)."""
    gateway_api: GatewayApiSpec = Field(default_factory=GatewayApiSpec, alias="gatewayApi")
    """GKE's Gateway API and the proxy-only subnet of regional Gateways (docs/vllm.md, "Inference Gateway")."""
    kuberay: KubeRaySpec | None = None
    """A KubeRay operator you installed yourself (Ray workloads then leave GKE's Ray add-on off); default: GKE's add-on,
    which a Ray workload turns on (on an existing cluster: the add-on it has)."""
    dataplane_v2: bool = Field(default=True, alias="dataplaneV2")
    """GKE Dataplane V2, which enforces the workloads' NetworkPolicies (Autopilot always has it). Immutable: turning
    it on for a Standard cluster created without it replaces the cluster; set false to keep such a cluster."""


def operator_namespace(spec: ClusterSpec) -> str | None:
    """Where the KubeRay operator of a Ray workload runs: the namespace of the user's own (`cluster.kuberay`), or
    None for the one GKE's Ray add-on hosts."""
    return spec.kuberay.namespace if spec.kuberay is not None else None


def workload_cluster(doc: str) -> ComponentInput:
    """A workload component's `cluster` input: where it runs, parsed as a `ClusterSpec` of its own."""
    return ComponentInput("cluster", ClusterSpec, doc, required=True)
