"""GKE Inference Gateway's resources for a VllmStack, built from the decided `GatewayPlan` (vllm/gateway_plan.py).

The endpoint picker the plan chose (catalog/pickers.py): llm-d's router at v0.10.0 by default, as its chart renders
it for `provider: gke` (config/charts/routerlib and config/charts/llm-d-router-gateway), or the picker of
kubernetes-sigs/gateway-api-inference-extension v1.5.0 (config/charts/epplib and config/charts/inferencepool), kept
for one release. The two charts render the same shape: a ServiceAccount with
the Role its controllers need, the EndpointPickerConfig in a ConfigMap, one replica (the prefix cache index lives in
the picker's memory), a Service for ext-proc and metrics; then the InferencePool selecting the servers, the
InferenceObjectives, GKE's HealthCheckPolicy and GCPBackendPolicy on the pool, a Gateway of the chosen class and an
HTTPRoute from it to the pool (https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway).
Beyond the chart: a GRPC HealthCheckPolicy on the picker's Service, pinned to its health port (the port GKE's
default check uses is documented only in llm-d's chart, and the NetworkPolicy must open the same port), and for a
public gateway a regional Cloud Armor policy that admits `sourceRanges` only (catalog.inference_gateway.CLASSES says
why it works on the regional external class).
(No `from __future__ import annotations`: the module is loaded with the component.)
"""

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from tpu_stacks.catalog.inference_gateway import (
    BACKEND_TIMEOUT_SECONDS,
    EXT_PROC_PORT,
    FAILURE_MODE,
    GATEWAY_API,
    GKE_POLICY_API,
    HEALTH_PORT,
    INFERENCE_POOL_API_VERSION,
    METRICS_PORT,
    PICKER_VERBS,
)
from tpu_stacks.catalog.pickers import LEGACY_PICKER, PICKER_ADVISORY
from tpu_stacks.catalog.upstream import fact, number
from tpu_stacks.k8s.huggingface import hf_env
from tpu_stacks.k8s.pod_monitoring import pod_monitoring
from tpu_stacks.k8s.security import harden
from tpu_stacks.objects.annotations import API_TOKEN_REASON, NO_CPU_LIMIT_REASON
from tpu_stacks.vllm.gateway_crd import objective_crd
from tpu_stacks.vllm.gateway_plan import (
    CONFIG_DIR,
    CONFIG_FILE,
    GATEWAY_NAME,
    LISTENER_PORT,
    PICKER_LABELS,
    PICKER_NAME,
    POOL_NAME,
    ROUTE_NAME,
    ROUTED_PREFIX,
    GatewayPlan,
)
from tpu_stacks.vllm.kv_events import (
    RENDER_CPU,
    RENDER_IMAGE,
    RENDER_MEMORY,
    RENDER_MEMORY_LIMIT,
    RENDER_PORT,
    render_command,
)
from tpu_stacks.vllm.pod import HF_SECRET_KEY, HF_TOKEN_DIR, SECRET_NAME

POOL_GROUP = INFERENCE_POOL_API_VERSION.split("/")[0]
PICKER_CPU = "1"
PICKER_MEMORY = "1Gi"
PICKER_MEMORY_LIMIT = "4Gi"
"""The chart asks 4 CPUs and 8Gi, "validated with scale testing at high QPS" (inferencepool values.yaml @ v1.5.0);
that pod does not fit the system pool's e2-standard-4, and one pool of a few TPU replicas is far from that load. No
CPU limit, as upstream: "CPU limits are intentionally unset to allow bursting to all available node CPUs during
scheduling spikes" (ledger: epp.chart-cpu-limit-unset); a throttled picker adds its stall to every request's
latency. Memory stays capped, as the chart caps it, so a leak cannot starve the node's system pods."""
PROBE_SERVICE = {"epp": str(fact("epp.chart.probe-service").value), "router": str(fact("router.probe-service").value)}
"""The gRPC health service the kubelet probes name, by the picker's ledger pin (both charts: `inference-extension`)."""
POOL_CHECK_SECONDS = number("epp.chart.pool-health-interval")
"""The pool's health check: every 2 s with a 2 s timeout, as the chart's `provider: gke`."""
NO_CPU_LIMIT = (
    "as upstream's chart: a CPU quota would throttle every pick during a burst (inferencepool values.yaml @ v1.5.0)"
)


@dataclass
class DeclaredGateway:
    gateway: k8s.apiextensions.CustomResource
    picker: k8s.apps.v1.Deployment
    pool: k8s.apiextensions.CustomResource
    route: k8s.apiextensions.CustomResource
    """What the smoke test's request goes through (it waits for all of them)."""


def _metadata(name: str, plan: GatewayPlan, labels: Optional[dict[str, str]] = None) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(name=name, namespace=plan.namespace, labels=labels)


def _picker_rbac(name: str, plan: GatewayPlan, opts: pulumi.ResourceOptions) -> k8s.core.v1.ServiceAccount:
    account = k8s.core.v1.ServiceAccount(f"{name}-epp-sa", metadata=_metadata(PICKER_NAME, plan), opts=opts)
    k8s.rbac.v1.Role(
        f"{name}-epp-role",
        metadata=_metadata(PICKER_NAME, plan),
        rules=[
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[group], resources=list(resources), verbs=list(PICKER_VERBS))
            for group, resources in plan.picker.rules
        ],
        opts=opts,
    )
    k8s.rbac.v1.RoleBinding(
        f"{name}-epp-role-binding",
        metadata=_metadata(PICKER_NAME, plan),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=PICKER_NAME, namespace=plan.namespace)],
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=PICKER_NAME),
        opts=opts,
    )
    return account


def render_container(plan: GatewayPlan) -> k8s.core.v1.ContainerArgs:
    """The precise path's render sidecar (vllm/kv_events.py says why one): `vllm launch render <model>` on the
    port the token producer calls on loopback, ready once its /health answers (the chart's probe). It fetches only
    the model's config and tokenizer into HOME (k8s.huggingface: no Xet chunk cache), with the stack's Hugging Face
    token read from a file only when the model is gated."""
    command, args = render_command(plan.model_id, plan.model, plan.tokenizer)
    env = hf_env()
    if plan.gated:
        env.append(k8s.core.v1.EnvVarArgs(name="HF_TOKEN_PATH", value=f"{HF_TOKEN_DIR}/{HF_SECRET_KEY}"))
    return k8s.core.v1.ContainerArgs(
        name="vllm-render",
        image=RENDER_IMAGE,
        command=command,
        args=args,
        ports=[k8s.core.v1.ContainerPortArgs(name="render-http", container_port=RENDER_PORT)],
        env=env,
        resources=k8s.core.v1.ResourceRequirementsArgs(
            requests={"cpu": RENDER_CPU, "memory": RENDER_MEMORY},
            limits={"memory": RENDER_MEMORY_LIMIT},
        ),
        readiness_probe=k8s.core.v1.ProbeArgs(
            http_get=k8s.core.v1.HTTPGetActionArgs(path="/health", port=RENDER_PORT),
            period_seconds=5,
        ),
        volume_mounts=[
            # An empty directory where the pod's Kubernetes API token would be: the picker needs the token, the
            # renderer does not, and the ServiceAccount admission plugin skips a container that already mounts that
            # path ("Existing mounts at the default mount path prevent mounting of the API token",
            # kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go).
            k8s.core.v1.VolumeMountArgs(name=NO_API_TOKEN, mount_path=API_TOKEN_PATH, read_only=True),
            *(
                [k8s.core.v1.VolumeMountArgs(name="hf-token", mount_path=HF_TOKEN_DIR, read_only=True)]
                if plan.gated
                else []
            ),
        ],
    )


NO_API_TOKEN = "no-api-token"
API_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def _token_volume() -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(
        name="hf-token",
        secret=k8s.core.v1.SecretVolumeSourceArgs(
            secret_name=SECRET_NAME,
            items=[k8s.core.v1.KeyToPathArgs(key=HF_SECRET_KEY, path=HF_SECRET_KEY)],
            default_mode=0o400,
        ),
    )


def picker_pod(plan: GatewayPlan) -> k8s.core.v1.PodTemplateSpecArgs:
    """The picker's pod: the pinned image, its flags, gRPC probes on the health port (epplib _deployment.yaml),
    hardened like every pod here and keeping its API token (its controllers watch pods, the pool, objectives).
    With the precise prefix cache, the render sidecar beside it (`render_container`), hardened the same way and
    running as the picker's user."""
    container = k8s.core.v1.ContainerArgs(
        name="epp",
        image=plan.picker.image,
        args=plan.picker_args(),
        ports=[
            k8s.core.v1.ContainerPortArgs(name="grpc", container_port=EXT_PROC_PORT),
            k8s.core.v1.ContainerPortArgs(name="grpc-health", container_port=HEALTH_PORT),
            k8s.core.v1.ContainerPortArgs(name="metrics", container_port=METRICS_PORT),
        ],
        env=[  # the picker's own namespace and name (ledger: router.env.namespace, router.env.pod-name)
            k8s.core.v1.EnvVarArgs(
                name="NAMESPACE",
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="metadata.namespace")
                ),
            ),
            k8s.core.v1.EnvVarArgs(
                name="POD_NAME",
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="metadata.name")
                ),
            ),
        ],
        resources=k8s.core.v1.ResourceRequirementsArgs(
            requests={"cpu": PICKER_CPU, "memory": PICKER_MEMORY}, limits={"memory": PICKER_MEMORY_LIMIT}
        ),
        liveness_probe=k8s.core.v1.ProbeArgs(
            grpc=k8s.core.v1.GRPCActionArgs(port=HEALTH_PORT, service=PROBE_SERVICE[plan.picker.ledger]),
            initial_delay_seconds=5,
            period_seconds=10,
        ),
        readiness_probe=k8s.core.v1.ProbeArgs(
            grpc=k8s.core.v1.GRPCActionArgs(port=HEALTH_PORT, service=PROBE_SERVICE[plan.picker.ledger]),
            period_seconds=2,
        ),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="picker-config", mount_path=CONFIG_DIR, read_only=True)],
    )
    containers = [container]
    volumes = [
        k8s.core.v1.VolumeArgs(name="picker-config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=PICKER_NAME))
    ]
    if plan.precise:
        containers.append(render_container(plan))
        volumes.append(
            k8s.core.v1.VolumeArgs(name=NO_API_TOKEN, empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit="1Mi"))
        )
        if plan.gated:  # the stack's Secret (vllm/pod.py), which holds the token for a gated model
            volumes.append(_token_volume())
    spec = harden(
        k8s.core.v1.PodSpecArgs(
            service_account_name=PICKER_NAME,
            # As the chart: the longest grace period of the pool's pods, so requests in flight finish.
            termination_grace_period_seconds=number("epp.chart.termination-grace"),
            containers=containers,
            volumes=volumes,
        ),
        plan.picker.record.image_user(),
        api_token=True,
    )
    reason = "the picker's controllers watch its InferencePool, InferenceObjectives and the pool's pods"
    return k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            labels=dict(PICKER_LABELS), annotations={API_TOKEN_REASON: reason, NO_CPU_LIMIT_REASON: NO_CPU_LIMIT}
        ),
        spec=spec,
    )


def _picker(name: str, plan: GatewayPlan, opts: pulumi.ResourceOptions) -> k8s.apps.v1.Deployment:
    account = _picker_rbac(name, plan, opts)
    config = k8s.core.v1.ConfigMap(
        f"{name}-epp-config",
        metadata=_metadata(PICKER_NAME, plan),
        data={CONFIG_FILE: plan.picker_config_text()},
        opts=opts,
    )
    deployment = k8s.apps.v1.Deployment(
        f"{name}-epp",
        metadata=_metadata(PICKER_NAME, plan, dict(PICKER_LABELS)),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=1,
            # Recreate, as upstream: one active picker, whose replacement takes over at once
            # (ledger: epp.chart.recreate).
            strategy=k8s.apps.v1.DeploymentStrategyArgs(type="Recreate"),
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(PICKER_LABELS)),
            template=picker_pod(plan),
        ),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[account, config])),
    )
    k8s.core.v1.Service(
        f"{name}-epp-service",
        metadata=_metadata(PICKER_NAME, plan),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=dict(PICKER_LABELS),
            ports=[
                k8s.core.v1.ServicePortArgs(name="grpc-ext-proc", port=EXT_PROC_PORT, protocol="TCP"),
                k8s.core.v1.ServicePortArgs(name="http-metrics", port=METRICS_PORT, protocol="TCP"),
            ],
        ),
        opts=opts,
    )
    k8s.apiextensions.CustomResource(
        f"{name}-epp-health-check-policy",
        api_version=GKE_POLICY_API,
        kind="HealthCheckPolicy",
        metadata=_metadata(PICKER_NAME, plan),
        spec=picker_health_check_policy(),
        opts=opts,
    )
    pod_monitoring(
        f"{name}-epp-pod-monitoring",
        f"{PICKER_NAME}-pod-monitoring",
        plan.namespace,
        dict(PICKER_LABELS),
        METRICS_PORT,
        opts,
    )
    return deployment


def pool_spec(plan: GatewayPlan, server_labels: dict[str, str], port: int) -> dict[str, object]:
    """The InferencePool (api/v1/inferencepool_types.go @ v1.5.0): the servers by their labels, their port, and
    the picker's Service on its ext-proc port."""
    return {
        "selector": {"matchLabels": dict(server_labels)},
        "targetPorts": [{"number": port}],
        "appProtocol": "http",
        "endpointPickerRef": {
            "name": PICKER_NAME,
            "port": {"number": EXT_PROC_PORT},
            "failureMode": FAILURE_MODE,
        },
    }


def _pool_ref() -> dict[str, str]:
    return {"group": POOL_GROUP, "kind": "InferencePool", "name": POOL_NAME}


def backend_policy(security_policy: Optional[pulumi.Input[str]] = None) -> dict[str, object]:
    """GCPBackendPolicy on the pool (config/crd/networking.gke.io_gcpbackendpolicies.yaml of
    GoogleCloudPlatform/gke-gateway-api, vendored for the plan): the chart's timeout and request logging, and for a
    public gateway its Cloud Armor policy by name (ledger: gke-gateway-api.backend-security-policy)."""
    default: dict[str, object] = {"timeoutSec": BACKEND_TIMEOUT_SECONDS, "logging": {"enabled": True}}
    if security_policy is not None:
        default[str(fact("gke-gateway-api.backend-security-policy").value)] = security_policy
    return {"targetRef": _pool_ref(), "default": default}


def health_check_policy(port: int) -> dict[str, object]:
    """HealthCheckPolicy on the pool: vLLM's /health on the serving port, every 2 s (the chart's `provider: gke`;
    ledger: epp.chart.pool-health-path, epp.chart.pool-health-interval, epp.chart.pool-health-timeout,
    gke-gateway-api.healthcheck.use-fixed-port, gke-gateway-api.healthcheck.port-needs-fixed).
    `portSpecification: USE_FIXED_PORT` with the port: GKE's CRD refuses a `port` without it ("port and portName
    must be unset for portSpecification being USE_SERVING_PORT (which is the default)", an
    x-kubernetes-validations rule of networking.gke.io_healthcheckpolicies.yaml, vendored for the plan), though
    the chart at v1.5.0 still renders one."""
    return {
        "targetRef": _pool_ref(),
        "default": {
            "timeoutSec": POOL_CHECK_SECONDS,
            "checkIntervalSec": POOL_CHECK_SECONDS,
            "config": {
                "type": "HTTP",
                "httpHealthCheck": {"requestPath": "/health", "portSpecification": "USE_FIXED_PORT", "port": port},
            },
        },
    }


def picker_health_check_policy() -> dict[str, object]:
    """HealthCheckPolicy on the picker's Service: gRPC health on the picker's health port. GKE's controller checks an
    ext-proc backend on gRPC 9003 by default, a claim only llm-d's GKE chart makes (ledger:
    gke.epp-health-check-port); pinning it here makes the port a decision of this stack, the one the picker is told
    (`--grpc-health-port`, gateway_plan.picker_args) and the NetworkPolicy opens (gateway_network). That port is the
    picker's own plaintext health server, SERVING once its pool synced (ledger: epp.health-server-plaintext,
    epp.health-any-service-name), so no grpcServiceName. Shape: GKE's CRD (ledger: gke-gateway-api.healthcheck-grpc,
    gke-gateway-api.healthcheck-fixed-port, gke-gateway-api.policy-target-any-kind), as llm-d's chart renders it."""
    return {
        "targetRef": {"group": "", "kind": "Service", "name": PICKER_NAME},
        "default": {
            "config": {
                "type": fact("gke-gateway-api.healthcheck-grpc").value,
                "grpcHealthCheck": {
                    "portSpecification": fact("gke-gateway-api.healthcheck-fixed-port").value,
                    "port": HEALTH_PORT,
                },
            }
        },
    }


def armor_policy_args(plan: GatewayPlan, project: str, region: str) -> gcp.compute.RegionSecurityPolicyArgs:
    """The public gateway's regional Cloud Armor policy (type CLOUD_ARMOR, in the Gateway's region: GCPBackendPolicy
    resolves the name in the load balancer's scope), its rules decided in gateway_plan.armor_rules: `sourceRanges`
    allowed, every other source denied by the default rule."""
    return gcp.compute.RegionSecurityPolicyArgs(
        name=plan.armor_policy,
        project=project,
        region=region,
        type="CLOUD_ARMOR",
        description=f"tpu-stacks: only vllm.sourceRanges reach Gateway {plan.namespace}/{GATEWAY_NAME}",
        rules=[
            gcp.compute.RegionSecurityPolicyRuleArgs(
                priority=rule.priority,
                action=rule.action,
                description="vllm.sourceRanges" if rule.action == "allow" else "everyone else",
                match=gcp.compute.RegionSecurityPolicyRuleMatchArgs(
                    versioned_expr="SRC_IPS_V1",
                    config=gcp.compute.RegionSecurityPolicyRuleMatchConfigArgs(src_ip_ranges=list(rule.ranges)),
                ),
            )
            for rule in plan.armor_rules()
        ],
    )


def route_spec() -> dict[str, object]:
    return {
        "parentRefs": [{"name": GATEWAY_NAME}],
        "rules": [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": ROUTED_PREFIX}}],
                "backendRefs": [{**_pool_ref()}],
            }
        ],
    }


def declare_gateway(
    name: str,
    plan: GatewayPlan,
    server_labels: dict[str, str],
    port: int,
    opts: pulumi.ResourceOptions,
    cloud: pulumi.ResourceOptions,
    project: str,
    region: str,
) -> DeclaredGateway:
    """Every gateway resource; `opts` carries the cluster's provider and the namespace dependency, `cloud` the
    options of a Google Cloud resource (the public gateway's Cloud Armor policy, in `project` and `region`). With
    objectives, their CRD first: the objectives need it, and the picker discovers the kind only when it starts
    (pkg/epp/server/controller_config.go @ v1.5.0), so it starts after the CRD."""
    if plan.picker_name == LEGACY_PICKER:
        pulumi.log.warn(PICKER_ADVISORY)
    after_crd = opts
    if plan.objectives:
        crd = objective_crd(name, plan.picker.objective_crd, opts)
        after_crd = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[crd]))
    picker = _picker(name, plan, after_crd)

    def custom(
        suffix: str, api: str, kind: str, object_name: str, spec: dict[str, object]
    ) -> k8s.apiextensions.CustomResource:
        return k8s.apiextensions.CustomResource(
            f"{name}-{suffix}", api_version=api, kind=kind, metadata=_metadata(object_name, plan), spec=spec, opts=opts
        )

    pool = custom(
        "inference-pool", INFERENCE_POOL_API_VERSION, "InferencePool", POOL_NAME, pool_spec(plan, server_labels, port)
    )
    for objective in plan.objectives:
        k8s.apiextensions.CustomResource(
            f"{name}-objective-{objective.name}",
            api_version=plan.picker.objective_api_version,
            kind="InferenceObjective",
            metadata=_metadata(objective.name, plan),
            spec={"priority": objective.priority, "poolRef": _pool_ref()},
            opts=after_crd,
        )
    custom("health-check-policy", GKE_POLICY_API, "HealthCheckPolicy", POOL_NAME, health_check_policy(port))
    armor = (
        gcp.compute.RegionSecurityPolicy(f"{name}-gateway-armor", armor_policy_args(plan, project, region), opts=cloud)
        if plan.public
        else None
    )
    custom("backend-policy", GKE_POLICY_API, "GCPBackendPolicy", POOL_NAME, backend_policy(armor and armor.name))
    gateway = custom(
        "gateway",
        GATEWAY_API,
        "Gateway",
        GATEWAY_NAME,
        {
            "gatewayClassName": plan.class_name,
            "listeners": [{"name": "http", "protocol": "HTTP", "port": LISTENER_PORT}],
        },
    )
    route = custom("http-route", GATEWAY_API, "HTTPRoute", ROUTE_NAME, route_spec())
    return DeclaredGateway(gateway=gateway, picker=picker, pool=pool, route=route)
