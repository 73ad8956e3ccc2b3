"""`TpuCluster`: a GKE cluster with TPU capacity, Workload Identity and the add-ons workloads need.

Everything is decided by `cluster.plan.plan_cluster` before the first resource is declared; this
module only turns the plan into resources: the cluster (or a look-up of an existing one), the
CPU system pool, one node pool per multi-host slice, the CPU pool for large Jobs when the plan has one, a
kubeconfig and a Kubernetes provider.
"""

from typing import Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.gke_metrics import kube_state_packages
from tpu_stacks.cluster.args import TpuClusterArgs
from tpu_stacks.cluster.compute_class import declare_compute_class
from tpu_stacks.cluster.kubeconfig import gke_kubeconfig
from tpu_stacks.cluster.node_pools import (
    CLOUD_PLATFORM_SCOPE,
    jobs_node_pool,
    node_service_account,
    system_node_pool,
    tpu_node_pool,
)
from tpu_stacks.cluster.outputs import SliceInfo
from tpu_stacks.cluster.plan import ClusterPlan, PoolPlan, plan_cluster
from tpu_stacks.cluster.proxy_subnet import DEFAULT_NETWORK, declare_proxy_subnet
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.cluster.versions import OfferedVersions, create_version
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.apis import CLUSTER_APIS, GATEWAY_APIS, MONITORING_APIS, enable_apis_by_name
from tpu_stacks.inputs.validation import parse

TYPE = "tpu-stacks:index:TpuCluster"
UNCATALOGUED_LABEL = "tpu-stacks-uncatalogued"
"""Cluster label set when `cluster.allowUncatalogued` accepted what the location catalogue does not list."""
_RAY_OPERATOR = gcp.container.ClusterAddonsConfigRayOperatorConfigArgs(enabled=True)


def _addons(plan: ClusterPlan) -> gcp.container.ClusterAddonsConfigArgs:
    addons = plan.spec.addons
    return gcp.container.ClusterAddonsConfigArgs(
        gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(enabled=addons.gcs_fuse),
        ray_operator_configs=[_RAY_OPERATOR] if addons.ray_operator else None,
        http_load_balancing=_HTTP_LOAD_BALANCING if plan.spec.gateway_api.enabled else None,
    )


_HTTP_LOAD_BALANCING = gcp.container.ClusterAddonsConfigHttpLoadBalancingArgs(disabled=False)
"""GKE's Gateway controller needs the HttpLoadBalancing add-on on (on by default; stated so nothing turns it off):
https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways#requirements."""


def _gateway_api(plan: ClusterPlan) -> gcp.container.ClusterGatewayApiConfigArgs | None:
    """The Gateway API's standard channel (the GA Gateway, HTTPRoute and GKE's classes), when a workload asks."""
    if not plan.spec.gateway_api.enabled:
        return None
    return gcp.container.ClusterGatewayApiConfigArgs(channel="CHANNEL_STANDARD")


def _control_plane(plan: ClusterPlan) -> dict[str, object]:
    """Authorized networks and the private endpoint, as the spec's `controlPlane` asks (docs/security.md)."""
    control = plan.spec.control_plane
    args: dict[str, object] = {}
    if control.authorized_networks is not None or control.private_endpoint:
        args["master_authorized_networks_config"] = gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
            cidr_blocks=[
                gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                    cidr_block=network.cidr_block, display_name=network.display_name
                )
                for network in control.authorized_networks or []
            ]
        )
    if control.private_endpoint:
        # The provider applies enable_private_endpoint only with private nodes (its schema description).
        args["private_cluster_config"] = gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_endpoint=True,
            enable_private_nodes=True,
            master_ipv4_cidr_block=control.master_ipv4_cidr_block,
        )
    return args


def _cluster_args(
    plan: ClusterPlan, nodes_account: pulumi.Input[str] | None, version: pulumi.Input[str] | None
) -> gcp.container.ClusterArgs:
    spec = plan.spec
    common = dict(
        **_control_plane(plan),
        name=spec.name,
        project=spec.project,
        location=spec.location,
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel=spec.release_channel),
        min_master_version=version,  # a version offered today, at or above the floor: create_version
        workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(workload_pool=plan.workload_pool),
        monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
            # Kube state packages (pods, deployments, HPAs, JobSets) feed the stacks' dashboards and alerts;
            # GKE accepts them only with Managed Prometheus on (catalog/gke_metrics.py).
            enable_components=[
                "SYSTEM_COMPONENTS",
                *(kube_state_packages(spec.min_version) if spec.addons.managed_prometheus else ()),
            ],
            managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(
                enabled=spec.addons.managed_prometheus
            ),
        ),
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),  # VPC-native (alias IPs)
        gateway_api_config=_gateway_api(plan),
        deletion_protection=spec.deletion_protection,
        # cluster.allowUncatalogued let a location or machine type through: said in the plan document too.
        resource_labels={"managed-by": "tpu-stacks", **({UNCATALOGUED_LABEL: "true"} if plan.beyond_catalogue else {})},
    )
    if plan.autopilot:
        ray = (
            gcp.container.ClusterAddonsConfigArgs(
                ray_operator_configs=[_RAY_OPERATOR] if spec.addons.ray_operator else None,
                http_load_balancing=_HTTP_LOAD_BALANCING if spec.gateway_api.enabled else None,
            )
            if spec.addons.ray_operator or spec.gateway_api.enabled
            else None
        )
        defaults = gcp.container.ClusterClusterAutoscalingArgs(
            auto_provisioning_defaults=gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs(
                service_account=nodes_account, oauth_scopes=[CLOUD_PLATFORM_SCOPE]
            )
        )
        return gcp.container.ClusterArgs(
            enable_autopilot=True, addons_config=ray, cluster_autoscaling=defaults, **common
        )
    return gcp.container.ClusterArgs(
        cluster_autoscaling=_fallback_autoscaling(plan),
        # Dataplane V2 enforces NetworkPolicy. ForceNew in the provider (terraform-provider-google
        # resource_container_cluster.go, `datapath_provider`: ForceNew), so `dataplaneV2: false` keeps a
        # cluster created without it instead of replacing it (docs/security.md).
        datapath_provider="ADVANCED_DATAPATH" if spec.dataplane_v2 else None,
        node_locations=list(plan.node_locations) if plan.regional and plan.node_locations else None,
        addons_config=_addons(plan),
        # The default pool is replaced by our own system pool, whose settings we control.
        remove_default_node_pool=True,
        initial_node_count=1,
        node_config=gcp.container.ClusterNodeConfigArgs(
            service_account=nodes_account, oauth_scopes=[CLOUD_PLATFORM_SCOPE]
        ),
        **common,
    )


FALLBACK_AUTOSCALING_PROFILE = "BALANCED"
"""The cluster autoscaler's profile when it creates TPU pools from a ComputeClass: stated, not left to a
default, because OPTIMIZE_UTILIZATION removes underused nodes sooner, and a TPU node comes back only
after minutes of provisioning plus the model's load and compile (GKE "About cluster autoscaling")."""


def _fallback_autoscaling(plan: ClusterPlan) -> gcp.container.ClusterClusterAutoscalingArgs | None:
    """A Standard cluster with ComputeClasses: node-pool auto-creation needs no cluster-level node
    auto-provisioning from GKE 1.33.3-gke.1136000 (checked in the plan), so only the profile is set."""
    if not plan.compute_classes:
        return None
    return gcp.container.ClusterClusterAutoscalingArgs(autoscaling_profile=FALLBACK_AUTOSCALING_PROFILE)


def create_version_output(
    plan: ClusterPlan, parent: pulumi.Resource, after: list[pulumi.Resource]
) -> pulumi.Output[str] | None:
    """The concrete version to create the cluster at (`cluster.versions.create_version`), from what GKE
    offers in the cluster's location now (`getEngineVersions`, no prefix: a newer minor also meets the
    floor); None without a floor, so GKE creates at the channel's default as before. A floor nothing
    reaches fails the run with the one-line UserError (RunError: Pulumi prints it without a traceback).
    `after`: the APIs the stack enables; `getServerConfig` is a Kubernetes Engine API call, refused in a
    fresh project until that API is on, so the query waits for it (and is unknown in a first preview)."""
    floor = plan.version_floor
    if floor is None:
        return None
    spec = plan.spec
    found = gcp.container.get_engine_versions_output(
        location=spec.location, project=spec.project, opts=pulumi.InvokeOutputOptions(parent=parent, depends_on=after)
    )

    def choose(result: gcp.container.GetEngineVersionsResult) -> str:
        offered = OfferedVersions(
            location=spec.location,
            valid_master=tuple(result.valid_master_versions or ()),
            channel_defaults=dict(result.release_channel_default_version or {}),
            channel_latest=dict(result.release_channel_latest_version or {}),
        )
        try:
            return create_version(floor, spec.release_channel, offered)
        except UserError as error:
            raise pulumi.RunError(str(error)) from error

    return found.apply(choose)


MIN_MASTER_VERSION = "minMasterVersion"
"""The Cluster input a later `up` must not diff once the cluster exists.

It is a create-time choice: the day's offer, at or above the floor. GKE then upgrades the master on
its own (release channels auto-upgrade), and the provider never reads the field back (no `d.Set` of
`min_master_version` in terraform-provider-google resource_container_cluster.go); it upgrades the master
when the configured value changes and is above `master_version` (`resourceContainerClusterUpdate`,
`d.HasChange("min_master_version")`). Without ignoring it, the next `up` would resolve a newer offer and
ask for an upgrade nobody wanted, or, on a channel that moved on, send a version GKE no longer has.
Pulumi still uses the program's value when there is no state, i.e. at create
(https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/). The cost: raising `cluster.minVersion`
on an existing cluster upgrades nothing (the plan checks the new floor; the master is upgraded with
`gcloud container clusters upgrade NAME --master --cluster-version V`, docs/capacity.md)."""


DEFAULT_POOL_NODE_CONFIG = "nodeConfig"
"""The Cluster input that describes only GKE's short-lived default pool (Standard mode)."""


def cluster_ignore_changes(plan: ClusterPlan) -> list[str]:
    """Inputs of the Cluster a second `up` must not diff.

    A Standard cluster sets `nodeConfig` (our node service account and scopes) only so that GKE's
    default pool, created and deleted at once (`removeDefaultNodePool`), never runs as the Compute
    Engine default account, and works in projects where that account is disabled. Once GKE deletes
    the pool it reports no nodeConfig for the cluster, and `nodeConfig` is ForceNew in the provider:
    every later `up` would plan to replace the cluster (hashicorp/terraform-provider-google#12070,
    #17511 (open: "cannot be done simultaneously" without this), pulumi/pulumi-gcp#744).
    GoogleCloudPlatform/cluster-toolkit modules/scheduler/gke-cluster/main.tf ignores `node_config`
    for this reason ("Ignore all changes to the default node pool. It's being removed after
    creation."), as does gruntwork-io/terraform-google-gke#60. `nodePoolDefaults` cannot carry
    a service account, and `clusterAutoscaling.autoProvisioningDefaults` only covers auto-created
    pools, so the create-time nodeConfig plus ignoreChanges is the way to keep the intent.
    Autopilot sets no nodeConfig (its nodes' account is in autoProvisioningDefaults).
    With a version floor, `minMasterVersion` too (MIN_MASTER_VERSION).
    """
    pool = [] if plan.autopilot else [DEFAULT_POOL_NODE_CONFIG]
    return [*pool, *([MIN_MASTER_VERSION] if plan.version_floor else [])]


def slice_infos(plan: ClusterPlan) -> list[SliceInfo]:
    """What workloads need to know of each pool: shape, labels to select, chips per VM."""
    return [
        SliceInfo(
            pool_name=pool.name,
            machine_type=pool.shape.machine_type,
            topology=pool.shape.topology,
            chips=pool.shape.chips,
            nodes=pool.shape.nodes,
            chips_per_vm=pool.shape.chips_per_vm,
            accelerator_label=pool.shape.accelerator_label,
            generation=pool.shape.generation,
            node_selector=pool.node_selector(),
        )
        for pool in plan.pools
    ]


def cluster_apis(plan: ClusterPlan) -> tuple[str, ...]:
    """What creating this cluster calls: GKE, Compute Engine, IAM; Monitoring with Managed Prometheus.
    Enabled only in Google Cloud's own universe: another universe's service names are not verified here
    (docs/sovereign.md), and a wrong name would stop the first `up`."""
    return (
        *CLUSTER_APIS,
        *(MONITORING_APIS if plan.spec.addons.managed_prometheus else ()),
        *(GATEWAY_APIS if plan.spec.gateway_api.enabled else ()),
    )


class TpuCluster(pulumi.ComponentResource):
    """A GKE cluster (Standard or Autopilot, or an existing one) with TPU slices sized from the catalogue."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name."""
    location: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    """The control plane's IP address."""
    workload_pool: pulumi.Output[str]
    """The Workload Identity pool, e.g. PROJECT.svc.id.goog (PROJECT.s3ns.svc.id.goog on S3NS)."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that authenticates with gke-gcloud-auth-plugin."""
    kubernetes_provider: pulumi.Output[k8s.Provider]
    """A Kubernetes provider for this cluster, for the workloads' resources."""
    slices: pulumi.Output[list[SliceInfo]]
    """Per node pool: name, machine type, topology, chips, nodes, accelerator label, chips per VM."""
    node_service_account: pulumi.Output[str]
    """Email of the account the nodes run as (image pulls and host-network pods use it); empty if unknown."""

    def __init__(self, name: str, args: TpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        self._declare(name, plan_cluster(parse(ClusterSpec, dict(args), "cluster")), opts)

    @classmethod
    def from_plan(cls, name: str, plan: ClusterPlan, opts: Optional[pulumi.ResourceOptions] = None) -> "TpuCluster":
        """The cluster a workload already decided (its sized slices included): declared as planned,
        with no second parse or plan. For the workload components; users pass args to the constructor."""
        cluster = cls.__new__(cls)
        cluster._declare(name, plan, opts)
        return cluster

    def pools_of(self, slice_index: int) -> tuple[PoolPlan, ...]:
        """The decided node pools of one slice spec, in order (what workloads schedule onto)."""
        return self._plan.pools_of(slice_index)

    def _declare(self, name: str, plan: ClusterPlan, opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(TYPE, name, {}, opts)
        self._plan = plan
        for line in plan.beyond_catalogue:  # what cluster.allowUncatalogued accepted, at every preview
            pulumi.log.warn(line, resource=self)
        ready: list[pulumi.Resource] = []
        self.pool_ready = []
        self.apis: list[pulumi.Resource] = []  # an existing cluster's project already has its APIs
        self.enabled_apis: dict[str, pulumi.Resource] = {}
        """The APIs this cluster enabled, by name (`monitoring`): a workload waits on them and does not
        enable them a second time."""
        nodes_account: pulumi.Input[str] | None = plan.spec.node_service_account
        if plan.spec.existing:
            existing = plan.spec.existing
            found = gcp.container.get_cluster_output(
                name=existing.name,
                location=existing.location,
                project=existing.project or plan.spec.project,
                opts=pulumi.InvokeOptions(parent=self),
            )
            cluster_name: pulumi.Output[str] = pulumi.Output.from_input(existing.name)
            location: pulumi.Output[str] = pulumi.Output.from_input(existing.location)
            endpoint = found.endpoint
            ca_certificate = found.master_auths.apply(lambda auths: auths[0].cluster_ca_certificate)
            self.proxy_subnet = declare_proxy_subnet(name, plan, found.network, self, [])
        else:
            self.enabled_apis = (
                enable_apis_by_name(name, plan.spec.project, cluster_apis(plan), self)
                if plan.universe.is_default
                else {}
            )
            self.apis = list(self.enabled_apis.values())
            nodes_account, grants = node_service_account(plan, name, self, after=self.apis)
            # Before the cluster, whose pod and Service ranges GKE then picks around it (cluster/proxy_subnet.py).
            self.proxy_subnet = declare_proxy_subnet(name, plan, DEFAULT_NETWORK, self, self.apis)
            subnet = [self.proxy_subnet] if self.proxy_subnet else []
            cluster = gcp.container.Cluster(
                name,
                _cluster_args(plan, nodes_account, create_version_output(plan, self, list(self.apis))),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    ignore_changes=cluster_ignore_changes(plan),
                    depends_on=[*self.apis, *grants, *subnet],
                ),
            )
            if not (plan.autopilot or plan.spec.dataplane_v2):
                # Visible in every plan: the workloads' NetworkPolicies are declared but nothing enforces them.
                pulumi.log.warn(
                    "cluster.dataplaneV2 is false: NetworkPolicies are declared but not enforced "
                    "(docs/security.md; turning it on replaces the cluster)",
                    resource=self,
                )
            cluster_name, location, endpoint = cluster.name, cluster.location, cluster.endpoint
            ca_certificate = cluster.master_auth.apply(lambda auth: auth.cluster_ca_certificate)
            if not plan.autopilot:
                ready.append(system_node_pool(plan, cluster.name, name, self, nodes_account))
            ready.insert(0, cluster)
        # IAM that names the workload pool must wait for the cluster that creates the pool
        # ("Identity Pool does not exist" in a project's first cluster otherwise).
        self.pool_ready: list[pulumi.Resource] = ready[:1]
        self.pools = [
            tpu_node_pool(plan, pool, cluster_name, name, self, nodes_account)
            for pool in plan.pools
            if not pool.autopilot
            and not pool.compute_class
            and (plan.spec.existing is None or plan.spec.existing.create_pools)
        ]
        jobs = jobs_node_pool(plan, cluster_name, name, self, nodes_account)
        self.jobs_pools: list[pulumi.Resource] = [jobs] if jobs is not None else []
        """The CPU pool for large Jobs (`cluster.jobsPool`), if any: what a Job placed there waits for."""
        context = pulumi.Output.all(cluster_name, location).apply(
            lambda parts: f"gke_{plan.spec.project}_{parts[1]}_{parts[0]}"
        )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(context, endpoint, ca_certificate).apply(lambda parts: gke_kubeconfig(*parts))
        )
        provider = k8s.Provider(
            f"{name}-k8s",
            k8s.ProviderArgs(kubeconfig=self.kubeconfig, enable_server_side_apply=True),
            opts=pulumi.ResourceOptions(parent=self, depends_on=ready),
        )
        # Fallback slices: GKE creates their pools from a ComputeClass; workloads wait for it as for a pool.
        self.compute_classes = [
            declare_compute_class(
                pool, plan.autopilot, nodes_account, name, pulumi.ResourceOptions(parent=self, provider=provider)
            )
            for pool in plan.compute_classes
            if plan.spec.existing is None or plan.spec.existing.create_pools
        ]
        self.pools = [*self.pools, *self.compute_classes]
        self.kubernetes_provider = pulumi.Output.from_input(provider)
        self.provider = provider
        self.cluster_name = cluster_name
        self.location = location
        self.endpoint = endpoint
        self.workload_pool = pulumi.Output.from_input(plan.workload_pool)
        self.slices = pulumi.Output.from_input(slice_infos(plan))
        self.node_service_account = pulumi.Output.from_input(nodes_account or "")
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "location": self.location,
                "endpoint": self.endpoint,
                "workload_pool": self.workload_pool,
                "kubeconfig": self.kubeconfig,
                "slices": self.slices,
                "node_service_account": self.node_service_account,
            }
        )

    @property
    def known_node_service_account(self) -> Optional[pulumi.Output[str]]:
        """The nodes' account for grants (image pulls, host-network pods), or None when unknown:
        an existing cluster whose node account was not given."""
        spec = self._plan.spec
        return self.node_service_account if spec.existing is None or spec.node_service_account else None

    @property
    def plan(self) -> ClusterPlan:
        """The decided cluster (pools, shapes, universe) for workloads built on top of it."""
        return self._plan
