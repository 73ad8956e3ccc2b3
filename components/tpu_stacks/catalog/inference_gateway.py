"""GKE Inference Gateway facts: the pinned Gateway API Inference Extension release, its API groups, and which
catalogued engines speak the protocol its endpoint picker (EPP) needs.

Why here: the component that declares the pool and the picker, the policy pack that judges pools (ours and
hand-written) and the offline schema check (the vendored CRDs' `bundle-version`, tests/preview) must agree on
one release and one list of servers the picker can route to. Pure data: no provider SDK.

Sources:
- The release: kubernetes-sigs/gateway-api-inference-extension v1.5.0 (df9f8909, 2026-04-18), the newest
  release that publishes the endpoint picker image: its `config/charts/inferencepool/values.yaml` pins
  `registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0`. v1.6.0 builds only the lightweight picker
  (`lwepp`, its cloudbuild.yaml) and removed InferenceObjective: the EPP and InferenceObjective moved to
  llm-d/llm-d-inference-scheduler (upstream commits c489161c "Added a note regarding the code move" and
  88fd4792 "Remove inference objective, model rewrite and endpoint picker config APIs").
- The protocol: v1.5.0 docs/proposals/003-model-server-protocol/README.md: "The model server MUST implement
  OpenAI's Completions and Chat APIs" and export queue, running-request and KV-cache gauges (vLLM, Triton
  TensorRT-LLM, trtllm-serve and SGLang are its table's servers).

- The gateway's own facts (the picker's ports, RBAC, classes, health-check ranges): the same release
  (EPP_REPOSITORY @ v1.5.0): api/v1 (InferencePool), apix/v1alpha2 (InferenceObjective),
  apix/config/v1alpha1 (EndpointPickerConfig), config/charts/epplib and config/charts/inferencepool (the
  Deployment, Service, RBAC and GKE policies the chart renders for `provider: gke`).
"""

from __future__ import annotations

from typing import Any

from tpu_stacks.catalog.engines import image_repository
from tpu_stacks.catalog.engines.declared import GatewaySupport, declarations
from tpu_stacks.catalog.engines.epp import EPP, EPP_REPOSITORY
from tpu_stacks.catalog.engines.record import EngineName, EngineVersion
from tpu_stacks.catalog.engines.serving_api import ServingApi as ServingApi
from tpu_stacks.catalog.upstream import fact, number, text

INFERENCE_EXTENSION_VERSION = EPP.version
"""The Gateway API Inference Extension release: CRDs vendored for the plan, and the picker image's tag."""
EPP_IMAGE = f"{EPP.images[0]}:{INFERENCE_EXTENSION_VERSION}"
INFERENCE_POOL_GROUP = "inference.networking.k8s.io"
INFERENCE_POOL_API_VERSION = f"{INFERENCE_POOL_GROUP}/v1"
INFERENCE_OBJECTIVE_API_VERSION = "inference.networking.x-k8s.io/v1alpha2"
"""Where v1.5.0 serves InferenceObjective (config/crd/bases/inference.networking.x-k8s.io_inferenceobjectives.yaml);
after the move to llm-d it lives in that project's own group."""
GATEWAY_API_VERSION = "v1.3.0"
"""Gateway API release of the vendored Gateway and HTTPRoute CRDs (standard channel): the one GKE installs at the
gateway's version floor (gke_versions.INFERENCE_GATEWAY_CRDS_FLOOR, 1.34.0-gke.1626000). GKE's GatewayClass
capabilities page, "Gateway API versions": 1.33.2-gke.1335000 or later: 1.3.0; 1.34.1-gke.1822000 or later: 1.4.0;
1.35.2-gke.1842000 or later: 1.5.0 ([D-GKE-GATEWAYCLASS]).
Newer bundles add fields, so an object this schema admits is admitted by every cluster at or above the floor."""


SAX_HTTP_REPOSITORY = "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http"
"""The Sax HTTP server ([K-SAX] sax-http.yaml): answers /generate for every published model and /publish,
/unpublish and /update without authentication."""

CATALOGUED_APIS: tuple[ServingApi, ...] = (
    ServingApi(
        engine="vllm",
        openai=True,
        port_flag="--port",
        default_port=number("vllm.flag.port"),
        why="`vllm serve` is vLLM's OpenAI-compatible server (/v1/completions, /v1/chat/completions, /metrics)",
        source="vllm-project/vllm vllm/entrypoints/openai/cli_args.py (`--port`, default 8000); "
        "docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
        serves_models=True,
    ),
    ServingApi(
        engine="epp",
        openai=False,
        port_flag=None,
        default_port=None,
        why="the endpoint picker is the gateway's ext-proc gRPC service (port 9002): it picks a server for a request "
        "and serves none itself",
        source=f"{EPP_REPOSITORY}/tree/v1.5.0/config/charts/epplib (`extProcPort`)",
        serves_models=False,
    ),
    ServingApi(
        engine="ray",
        openai=True,
        port_flag=None,
        default_port=number("ray.serve.http-port"),
        why="Ray Serve LLM's `ray.serve.llm:build_openai_app` serves OpenAI's Completions and Chat on Serve's HTTP "
        "port (8000 unless `http_options.port` says otherwise)",
        source="https://docs.ray.io/en/latest/serve/llm/serving-llms.html; Ray Serve `HTTPOptions.port` (default 8000)",
        serves_models=True,
    ),
)


def serving_apis() -> tuple[ServingApi, ...]:
    """Every catalogued engine's serving API: this module's, then each workload folder's engine's
    (catalog/engines/declared.py)."""
    return (*CATALOGUED_APIS, *(declared.api for declared in declarations()))


def __getattr__(name: str) -> Any:
    """`SERVING_APIS`, collected on use (PEP 562), so a folder's declaration can import this module."""
    if name == "SERVING_APIS":
        return serving_apis()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def front_end(image: str) -> ServingApi | None:
    """The serving API whose models an image fronts (Sax HTTP for Saxml), or None."""
    repository, _ = image_repository(image)
    return next((api for api in serving_apis() if repository in api.front_ends), None)


def serving_api(engine: EngineVersion | EngineName) -> ServingApi:
    """The serving API of a catalogued engine (every catalogued engine has one; a test checks it)."""
    name = engine if isinstance(engine, str) else engine.engine
    return next(api for api in serving_apis() if api.engine == name)


def _no(engine: EngineName) -> GatewaySupport:
    """A catalogued engine the picker cannot front for the reason its serving API gives."""
    return GatewaySupport(fronts=False, why=next(api.why for api in CATALOGUED_APIS if api.engine == engine))


CATALOGUED_GATEWAY: dict[EngineName, GatewaySupport] = {
    "vllm": GatewaySupport(
        fronts=True,
        why="`vllm serve` answers OpenAI's Completions and Chat and exports the Model Server Protocol's queue and "
        "KV-cache gauges on its API port, which the endpoint picker scores replicas by (vllm/gateway_plan.py)",
    ),
    "epp": _no("epp"),
    "ray": GatewaySupport(
        fronts=False,
        why="Ray Serve's proxy answers for the whole Ray cluster and Ray exports the engine's metrics on its own port "
        "under its own names, so the picker can neither pick a replica nor score it (vllm.gateway serves "
        "single-host replicas only: vllm/gateway_plan.check_single_host)",
    ),
}
"""The gateway's answer for the catalogue's own engines; a workload folder's engine declares its own
(EngineDeclaration.gateway)."""


def gateway_support(engine: EngineVersion | EngineName) -> GatewaySupport:
    """Whether the gateway's endpoint picker can front an engine's servers, and why (not): the one answer the
    components and the policy pack (inference-pool-serves) ask, for every catalogued engine."""
    name = engine if isinstance(engine, str) else engine.engine
    if name in CATALOGUED_GATEWAY:
        return CATALOGUED_GATEWAY[name]
    return next(d.gateway for d in declarations() if d.name == name)


PICKER_CONFIG_API = "inference.networking.x-k8s.io/v1alpha1"
"""EndpointPickerConfig, the picker's `--config-file` (apix/config/v1alpha1/endpointpickerconfig_types.go)."""
GATEWAY_API = "gateway.networking.k8s.io/v1"
GKE_POLICY_API = "networking.gke.io/v1"
"""HealthCheckPolicy and GCPBackendPolicy (https://googlecloudplatform.github.io/gke-gateway-api)."""

EXT_PROC_PORT = number("epp.port.ext-proc")
"""The picker's ext-proc gRPC port (`--grpc-port` default; the chart's `extProcPort`), which the pool's
endpointPickerRef names and the load balancer's Service Extension calls."""
HEALTH_PORT = number("epp.port.grpc-health")
"""The picker's gRPC health server (`--grpc-health-port`): plaintext, always on, SERVING once the pool synced
(ledger: epp.health-server-plaintext, epp.health-any-service-name). The kubelet probes it, and so does the load
balancer's health check of the picker's backend (the HealthCheckPolicy vllm/gateway.py pins on its Service). The
ext-proc port answers no health check unless `--health-checking` (epp.ext-proc-health-needs-flag)."""
METRICS_PORT = EPP.scrape_port()
OBJECTIVE_HEADER = text("epp.header.objective")
"""The request header that names an InferenceObjective (pkg/epp/metadata/consts.go `ObjectiveKey` @ v1.5.0)."""
FAILURE_MODE = text("epp.chart.failure-mode")
"""The chart's default: when the picker is down the gateway still routes (to any pool endpoint). Which is why its
health check must reach it (HEALTH_PORT): a picker the load balancer sees as unhealthy is routed around silently."""
FLOW_CONTROL_GATE = str(fact("epp.flow-control-gate").value)
"""The EndpointPickerConfig feature gate that makes InferenceObjective priorities order requests (ledger:
epp.flow-control-admission, epp.legacy-admission-sheddable: without it only priority < 0 means anything)."""
SCHEDULED_METRIC = f"{text('epp.metric.subsystem.extension')}_{text('epp.metric.scheduler-attempts')}"
"""The picker's counter of picks; `status` is `success` for one that chose an endpoint (the smoke test reads it)."""
SCHEDULED_STATUS = str(fact("epp.metric.scheduler-status-success").value)

PICKER_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("pods",)),
    ("inference.networking.k8s.io", ("inferencepools",)),
    ("inference.networking.x-k8s.io", ("inferenceobjectives", "inferencemodelrewrites")),
)
"""What the picker reads in its namespace, get/watch/list: its pool, the pool's pods, objectives and rewrites
(config/charts/epplib/templates/_rbac.yaml and config/charts/inferencepool/templates/rbac.yaml @ v1.5.0; its
controllers watch exactly these, pkg/epp/controller). No leader election with one replica, so no leases.
ledger: epp.rbac.pods, epp.rbac.pools, epp.rbac.objectives, epp.rbac.verbs."""
PICKER_VERBS = ("get", "watch", "list")

INTERNAL_CLASS = "gke-l7-rilb"
EXTERNAL_CLASS = "gke-l7-regional-external-managed"
CLASSES = {"internal": INTERNAL_CLASS, "public": EXTERNAL_CLASS}
"""The Inference Gateway class by exposure. The documented classes are `gke-l7-rilb` and
`gke-l7-regional-external-managed`, both regional Application Load Balancers that need a proxy-only subnet
(https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway;
https://cloud.google.com/kubernetes-engine/docs/concepts/gateway-api#gatewayclass).

A public gateway must admit only `sourceRanges`. An L7 load balancer's proxies, not the client, connect to the pods,
so no NetworkPolicy can name the clients: the ranges are enforced by a regional Cloud Armor policy attached to the
pool's backend by GCPBackendPolicy `securityPolicy` (vllm/gateway.py). Why that works on the regional external class:
- Cloud Armor covers it: "Cloud Armor security policies are available for the following load balancer and endpoint
  types: All external Application Load Balancers, including classic Application Load Balancers; Regional internal
  Application Load Balancer; ..." (https://cloud.google.com/armor/docs/security-policy-overview, read 2026-11-29).
- GKE's Gateway controller wires it: GoogleCloudPlatform/k8s-cloud-provider pull 172 (opened 2024-02-20, approved
  2024-02-21, merged), "Add method SetSecurityPolicy to RegionBackendServices so that GCESync can support regional
  Cloud Armor on regional Gateways" (https://github.com/GoogleCloudPlatform/k8s-cloud-provider/pull/172).
- The field: GCPBackendPolicy `securityPolicy`, a policy name resolved in the load balancer's scope (ledger:
  gke-gateway-api.backend-security-policy), so the policy is a regional one in the Gateway's region; production code
  does exactly this on `gke-l7-regional-external-managed` (hyperledger-labs/splice cluster/pulumi/infra/src/
  gcpLoadBalancer.ts and cloudArmor.ts @ 7cd6a12: a `gcp.compute.RegionSecurityPolicy`, after a global one failed
  with "The given security policy does not exist").
The one contrary source, a 2024 forum post quoting an older capabilities table
(https://discuss.google.dev/t/gateway-gcpbackendpolicy/148363), predates that controller change. What no offline
test settles is recorded as ledger: gke.regional-cloud-armor-regional-external-gateway, with the cluster check
that settles it (docs/verify-on-a-cluster.md).

The internal class is not given the same treatment: GKE's wiring of `securityPolicy` on `gke-l7-rilb` is found in no
source read here, so an internal gateway keeps to the VPC and relies on vLLM's API key (`vllm.apiKey`) rather than on
`sourceRanges` (vllm/gateway_plan.py refuses sourceRanges there)."""
ARMOR_RANGES_PER_RULE = 10
"""A Cloud Armor rule's `SRC_IPS_V1` match takes at most 10 ranges: "CIDR IP address range. Maximum number of
srcIpRanges allowed is 10." (pulumi-gcp 10.2.0 RegionSecurityPolicyRuleMatchConfigArgs.src_ip_ranges; magic-modules
mmv1/products/compute/RegionSecurityPolicy.yaml `max_size: 10`). More ranges are chunked into more rules."""
ARMOR_DEFAULT_RULE_PRIORITY = 2147483647
"""The default rule's priority, the lowest: "There must always be a default rule (rule with priority 2147483647 and
match "*")" (magic-modules RegionSecurityPolicy.yaml `rules`)."""
ARMOR_DENY = "deny(403)"
"""What every source outside `sourceRanges` gets: "deny(STATUS): deny access to target, returns the HTTP response code
specified. Valid values for STATUS are 403, 404, and 502." (RegionSecurityPolicyRuleArgs.action)."""
BACKEND_TIMEOUT_SECONDS = number("epp.chart.backend-timeout")
"""GCPBackendPolicy timeoutSec: the chart's `provider: gke` default (inferencepool templates/gke.yaml @ v1.5.0); a
completion of thousands of tokens outlasts the load balancer's 30 s default."""
CHART_SOURCE = f"{EPP_REPOSITORY}/tree/{INFERENCE_EXTENSION_VERSION}/config/charts"
