"""GKE Inference Gateway's facts, for the pinned endpoint picker (EPP, catalog/engines.py `EPP`) and GKE's
Gateway controller: API groups, ports, classes, the picker's RBAC, and the source ranges of the load
balancer's proxies and health checks. Pure data with sources; vllm/gateway_plan.py decides from it.

Upstream: kubernetes-sigs/gateway-api-inference-extension @ v1.5.0 (EPP_REPOSITORY): api/v1 (InferencePool),
apix/v1alpha2 (InferenceObjective), apix/config/v1alpha1 (EndpointPickerConfig), config/charts/epplib and
config/charts/inferencepool (the Deployment, Service, RBAC, GKE policies the chart renders for `provider: gke`).
"""

from __future__ import annotations

from tpu_stacks.catalog.engines import EPP, EPP_REPOSITORY

POOL_API = "inference.networking.k8s.io/v1"
"""InferencePool (api/v1/inferencepool_types.go @ v1.5.0): selector.matchLabels, targetPorts[].number,
appProtocol, endpointPickerRef{name, port.number, failureMode}."""
OBJECTIVE_API = "inference.networking.x-k8s.io/v1alpha2"
"""InferenceObjective at v1.5.0 (apix/v1alpha2/inferenceobjective_types.go): spec.priority and spec.poolRef; upstream
moved it out of the GA group (config/crd/bases/inference.networking.x-k8s.io_inferenceobjectives.yaml @ v1.5.0)."""
PICKER_CONFIG_API = "inference.networking.x-k8s.io/v1alpha1"
"""EndpointPickerConfig, the picker's `--config-file` (apix/config/v1alpha1/endpointpickerconfig_types.go)."""
GATEWAY_API = "gateway.networking.k8s.io/v1"
GKE_POLICY_API = "networking.gke.io/v1"
"""HealthCheckPolicy and GCPBackendPolicy (https://googlecloudplatform.github.io/gke-gateway-api)."""

EPP_IMAGE = f"{EPP.images[0]}:{EPP.version}"
EXT_PROC_PORT = 9002
"""The picker's ext-proc gRPC port (`--grpc-port` default; the chart's `extProcPort`), which the pool's
endpointPickerRef names and the load balancer's Service Extension calls."""
HEALTH_PORT = 9003
"""gRPC health (`--grpc-health-port`), service `inference-extension` for one replica (epplib _deployment.yaml)."""
METRICS_PORT = EPP.scrape_port()
OBJECTIVE_HEADER = "x-gateway-inference-objective"
"""The request header that names an InferenceObjective (pkg/epp/metadata/consts.go `ObjectiveKey` @ v1.5.0)."""
FAILURE_MODE = "FailOpen"
"""The chart's default: when the picker is down the gateway still routes (to any pool endpoint)."""

PICKER_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("pods",)),
    ("inference.networking.k8s.io", ("inferencepools",)),
    ("inference.networking.x-k8s.io", ("inferenceobjectives", "inferencemodelrewrites")),
)
"""What the picker reads in its namespace, get/watch/list: its pool, the pool's pods, objectives and rewrites
(config/charts/epplib/templates/_rbac.yaml and config/charts/inferencepool/templates/rbac.yaml @ v1.5.0; its
controllers watch exactly these, pkg/epp/controller). No leader election with one replica, so no leases."""
PICKER_VERBS = ("get", "watch", "list")

INTERNAL_CLASS = "gke-l7-rilb"
EXTERNAL_CLASS = "gke-l7-regional-external-managed"
CLASSES = {"internal": INTERNAL_CLASS, "public": EXTERNAL_CLASS}
"""The documented Inference Gateway classes by exposure: both are regional Application Load Balancers, so both
need a proxy-only subnet (https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway;
https://cloud.google.com/kubernetes-engine/docs/concepts/gateway-api#gatewayclass)."""
HEALTH_CHECK_RANGES = ("35.191.0.0/16", "130.211.0.0/22")
"""Google Cloud's health-check probe ranges (https://cloud.google.com/load-balancing/docs/health-check-concepts
#ip-ranges). Regional Envoy-based load balancers may also probe from the proxy-only subnet (distributed Envoy
health checks), which the proxies' own flow already admits."""
BACKEND_TIMEOUT_SECONDS = 300
"""GCPBackendPolicy timeoutSec: the chart's `provider: gke` default (inferencepool templates/gke.yaml @ v1.5.0); a
completion of thousands of tokens outlasts the load balancer's 30 s default."""
CHART_SOURCE = f"{EPP_REPOSITORY}/tree/v1.5.0/config/charts"
