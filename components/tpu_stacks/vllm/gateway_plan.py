"""Every decision of `vllm.gateway` (GKE Inference Gateway in front of the replicas), made before any resource:
the class, the cluster's Gateway API and proxy-only subnet, the picker's configuration (its flags, the metric names
it reads from the pinned vLLM, the Flow Control gate when objectives are given), and for a public gateway the Cloud
Armor rules that enforce `sourceRanges`. Pure: no provider SDK; vllm/gateway.py builds from it.

What the gateway is for and what it costs: docs/vllm.md, "Inference Gateway".
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.gke_versions import INFERENCE_GATEWAY_CRDS_FLOOR
from tpu_stacks.catalog.inference_gateway import (
    ARMOR_DEFAULT_RULE_PRIORITY,
    ARMOR_DENY,
    ARMOR_RANGES_PER_RULE,
    CLASSES,
    EXT_PROC_PORT,
    FLOW_CONTROL_GATE,
    HEALTH_PORT,
    INFERENCE_POOL_API_VERSION,
    INTERNAL_CLASS,
    gateway_support,
)
from tpu_stacks.catalog.pickers import (
    DEFAULT_PICKER,
    DEFAULT_WORKLOAD,
    WORKLOAD_WEIGHTS,
    Picker,
    ScorerWeights,
    picker,
)
from tpu_stacks.catalog.tpu import SliceShape, gke_version
from tpu_stacks.catalog.upstream import fact, text
from tpu_stacks.cluster.decided import ClusterPlan
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import universe
from tpu_stacks.names import RESOURCE_NAME, bounded
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.vllm.gateway_disaggregation import check_disaggregation
from tpu_stacks.vllm.kv_events import (
    APPROXIMATE,
    PRECISE,
    RENDER_PORT,
    PrefixCache,
    check_prefix_cache,
    prefix_cache,
    server_block_size,
    tokenizer_args,
)
from tpu_stacks.vllm.spec import ObjectiveSpec, VllmSpec

POOL_NAME = "vllm-inference-pool"
PICKER_NAME = "vllm-epp"
GATEWAY_NAME = "vllm-gateway"
ROUTE_NAME = "vllm-route"
PICKER_LABELS = {"app": PICKER_NAME}
CONFIG_FILE = "picker-config.yaml"
CONFIG_DIR = "/config"
LISTENER_PORT = 80
ROUTED_PREFIX = "/v1"
"""The only path the HTTPRoute sends to the pool: OpenAI's API, which vLLM's API key guards. vLLM also serves the
same completions at /invocations, which the key does not guard (ledger: vllm.api-key.guarded-prefixes,
vllm.api-key.invocations-unguarded); routing only /v1 keeps that path off the gateway, so behind an internal gateway
the key closes everything the VPC can reach (the pods themselves admit only the gateway's proxies, the picker and
the smoke test)."""
PRECISE_PRODUCER = text("router.plugin.precise-prefix-cache-producer")
TOKEN_PRODUCER = text("router.plugin.token-producer")
ENDPOINT_SOURCE = text("router.plugin.endpoint-notification-source")
ARMOR_SUFFIX = "-gateway-armor"
ARMOR_FIRST_PRIORITY = 1000
"""The first allow rule's priority; each further chunk of ranges takes the next one (lower numbers win)."""

MODEL_SERVER_PROTOCOL: dict[str, tuple[str, ...]] = {
    # The Model Server Protocol's metrics and their vLLM names (docs/proposals/003-model-server-protocol @ v1.5.0):
    # the picker's core-metrics-extractor reads one name per role, here the one the pinned vLLM exports (a name
    # vLLM renamed is the catalogue's to know: VLLM.renamed). The picker's built-in vLLM names are the same
    # (pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go @ v1.5.0). The keys: ledger:
    # epp.msp.key.engine-name, epp.msp.key.queued-requests, epp.msp.key.running-requests, epp.msp.key.kv-usage,
    # epp.msp.key.lora, epp.msp.key.cache-info. The picker's built-in names: ledger: epp.msp.vllm.queued-requests,
    # epp.msp.vllm.running-requests, epp.msp.vllm.kv-usage, epp.msp.vllm.lora, epp.msp.vllm.cache-info. vLLM's own:
    # ledger: vllm.metric.num-requests-waiting, vllm.metric.num-requests-running, vllm.metric.kv-cache-usage-perc,
    # vllm.metric.lora-requests-info, vllm.metric.cache-config-info.
    "queuedRequestsSpec": ("vllm:num_requests_waiting",),
    "runningRequestsSpec": ("vllm:num_requests_running",),
    "kvUsageSpec": ("vllm:kv_cache_usage_perc",),
    "loraSpec": ("vllm:lora_requests_info",),
    "cacheInfoSpec": ("vllm:cache_config_info",),
}
OPTIONAL_ROLES = ("loraSpec", "cacheInfoSpec")
"""Roles the extractor accepts empty (upstream's own sglang and trtllm entries leave them empty)."""


def picker_metrics(engine: EngineVersion = VLLM) -> dict[str, str]:
    """The picker's metric name per Model Server Protocol role: the one the pinned engine's catalogue entry
    exports. A required role the engine exports under none of its names is an error in the catalogue, not input."""
    chosen: dict[str, str] = {}
    for role, names in MODEL_SERVER_PROTOCOL.items():
        found = next((name for name in names if engine.metric(name) is not None), None)
        if found is None and role not in OPTIONAL_ROLES:
            raise ValueError(f"{engine.engine} {engine.version} exports none of {names} ({role})")
        chosen[role] = found or ""
    return chosen


class ArmorRule(BaseModel):
    """One rule of the public gateway's Cloud Armor policy: allow these source ranges, or deny every source."""

    model_config = ConfigDict(frozen=True)

    priority: int
    action: str
    ranges: tuple[str, ...]
    """`("*",)` for the default rule."""


class GatewayPlan(BaseModel):
    """The gateway, decided."""

    model_config = ConfigDict(frozen=True)

    class_name: str
    namespace: str
    proxy_range: str
    """The proxy-only subnet's range: where the gateway's Envoy proxies connect from."""
    health_check_ranges: tuple[str, ...]
    """Where the load balancer's health checks come from, in the cluster's universe (gcp/universe.py)."""
    objectives: tuple[ObjectiveSpec, ...] = ()
    metrics: dict[str, str]
    picker_name: str = DEFAULT_PICKER
    """`vllm.gateway.picker`: which release runs (catalog/pickers.py)."""
    workload: str = DEFAULT_WORKLOAD
    """`vllm.gateway.workload`: the scorer weights (catalog/pickers.py WORKLOAD_WEIGHTS)."""
    source_ranges: tuple[str, ...] = ()
    """Who may reach a public gateway (enforced by Cloud Armor, `armor_rules`); empty for the internal class."""
    armor_policy: str = ""
    """The public gateway's regional Cloud Armor policy's name: `<cluster>-<namespace>-gateway-armor` within 63
    characters (one per stack on a cluster); empty for the internal class."""
    prefix_cache: PrefixCache = APPROXIMATE
    """`vllm.gateway.prefixCache`: precise (the servers' KV events, vllm/kv_events.py) or approximate."""
    model: str = ""
    """The name the servers answer to: the token producer's modelName (the render sidecar answers to it), and the
    KV-events topic's model part."""
    model_id: str = ""
    """What the servers' `--model` loads: what the render sidecar loads (vllm/kv_events.render_command)."""
    tokenizer: tuple[str, ...] = ()
    """The servers' tokenizer flags from `extraArgs`, passed on to the render sidecar (vllm/kv_events.py)."""
    block_size: int
    """Tokens per KV block on the servers (vllm/kv_events.server_block_size): the router's `blockSizeTokens`."""
    gated: bool = False
    """The model is gated on Hugging Face: the render sidecar reads the stack's token to fetch its tokenizer."""

    @property
    def precise(self) -> bool:
        return self.prefix_cache == PRECISE

    @property
    def public(self) -> bool:
        return self.class_name != INTERNAL_CLASS

    @property
    def smoke_through(self) -> bool:
        """The smoke test goes through the Gateway's address only on an internal gateway. A public one is behind
        Cloud Armor, which admits `sourceRanges` only: the smoke pod's request leaves through the node's or Cloud NAT's
        address, which the ranges need not hold, and would get 403. There the smoke test calls the Service, and the
        public path is for `verify` to check from a client in the ranges (docs/verify-on-a-cluster.md)."""
        return not self.public

    @property
    def picker(self) -> Picker:
        return picker(self.picker_name)

    @property
    def weights(self) -> ScorerWeights:
        return WORKLOAD_WEIGHTS[self.workload]

    @property
    def flow_control(self) -> bool:
        """Objectives are given, so their priorities must order requests: the picker's Flow Control layer, which
        only the `flowControl` gate turns on (ledger: epp.flow-control-admission, epp.legacy-admission-sheddable;
        without it a priority of 0 or more does nothing). The batch workload asks for it too (its guide does)."""
        return bool(self.objectives) or self.weights.flow_control

    def armor_rules(self) -> tuple[ArmorRule, ...]:
        """A public gateway's Cloud Armor rules: `sourceRanges` allowed in chunks of at most ARMOR_RANGES_PER_RULE,
        then the default rule denying everyone else. Empty for the internal class (no policy)."""
        if not self.public:
            return ()
        chunks = [
            self.source_ranges[start : start + ARMOR_RANGES_PER_RULE]
            for start in range(0, len(self.source_ranges), ARMOR_RANGES_PER_RULE)
        ]
        allow = [ArmorRule(priority=ARMOR_FIRST_PRIORITY + i, action="allow", ranges=c) for i, c in enumerate(chunks)]
        return (*allow, ArmorRule(priority=ARMOR_DEFAULT_RULE_PRIORITY, action=ARMOR_DENY, ranges=("*",)))

    def picker_config(self) -> dict[str, Any]:
        """The EndpointPickerConfig: the queue, KV cache and prefix cache scorers at the workload's weights
        (catalog/pickers.py WORKLOAD_WEIGHTS, each set citing where llm-d uses it) with the pinned vLLM's metric
        names, in the chosen picker's config API. The metric flags (`--kv-cache-usage-percentage-metric`, ...) are
        refused at v1.5.0 and deprecated at the router: "configure metrics via engineConfigs in EndpointPickerConfig
        instead" (pkg/epp/server/options.go of both). With Flow Control, its feature gate: gates are set here, not by
        a flag (ledger: epp.config.feature-gates, router.flow-control-gate), and the gate's own section is optional
        (its defaults: ledger: epp.flow-control-gate). The prefix cache scorer reads, with `prefixCache: precise`,
        the precise producer the router recommends over its deprecated precise scorer (ledger:
        router.precise-scorer-deprecated), fed by the servers' KV events, which a TPU server publishes (ledger:
        vllm.kv-events.scheduler-publishes, vllm.kv-events.block-stored, vllm.kv-events.off-by-default,
        vllm.kv-events.endpoint, tpu-inference.dp-scheduler-only-above-one), with tokens rendered by a sidecar
        because the token producer sends no API key (ledger: router.render-no-auth, router.kv-events-port;
        `_precise_config`); with `approximate`, the producer the router auto-wires (it hashes the prompts it routed).
        The plugin types (ledger: epp.plugin.queue-scorer,
        epp.plugin.kv-cache-utilization-scorer, epp.plugin.prefix-cache-scorer, epp.plugin.metrics-data-source,
        epp.plugin.core-metrics-extractor, router.plugin.metrics-data-source, router.plugin.core-metrics-extractor,
        router.config.feature-gates, router.plugin.queue-scorer, router.plugin.kv-cache-utilization-scorer,
        router.plugin.prefix-cache-scorer);
        vLLM's metrics route (ledger: vllm.server.metrics-route)."""
        gates = {fact("epp.config.feature-gates").value: [FLOW_CONTROL_GATE]} if self.flow_control else {}
        weights = self.weights
        prefix: dict[str, Any] = {"type": "prefix-cache-scorer"}
        precise: list[dict[str, Any]] = []
        data_layer: dict[str, Any] = {}
        if self.precise:
            prefix, precise, data_layer = self._precise_config()
        return {
            "apiVersion": self.picker.config_api,
            "kind": "EndpointPickerConfig",
            **gates,
            "plugins": [
                *precise,
                {"type": "queue-scorer"},
                {"type": "kv-cache-utilization-scorer"},
                prefix,
                {"type": "metrics-data-source", "parameters": {"scheme": "http", "path": "/metrics"}},
                {
                    "type": "core-metrics-extractor",
                    "parameters": {"engineConfigs": [{"name": "vllm", **self.metrics}]},
                },
            ],
            **data_layer,
            "schedulingProfiles": [
                {
                    "name": "default",
                    "plugins": [
                        {"pluginRef": "queue-scorer", "weight": weights.queue},
                        {"pluginRef": "kv-cache-utilization-scorer", "weight": weights.kv_cache},
                        {"pluginRef": "prefix-cache-scorer", "weight": weights.prefix_cache},
                    ],
                }
            ],
        }

    def _precise_config(self) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        """The precise path's pieces of the config: the prefix cache scorer reading the precise producer (ledger:
        router.prefix-scorer.producer-name); the token producer rendering through the sidecar on loopback (ledger:
        router.plugin.token-producer, router.token-producer.model-name, router.token-producer.vllm,
        router.token-producer.vllm-fields); the precise producer at the servers' block size with the index's
        metrics on (ledger: router.plugin.precise-prefix-cache-producer, router.precise.token-processor-config,
        router.kvblock.block-size-tokens, router.precise.indexer-config, router.kvcache.index-config,
        router.kvblock.enable-metrics), its subscribers on the router's defaults (5557, `kv@`, per pool endpoint);
        and the data layer feeding it the pool's endpoints, which it does not ask for itself (ledger:
        router.precise.endpoint-events, router.plugin.endpoint-notification-source, router.config.data-layer,
        router.config.data-layer-sources, router.config.data-layer-extractors), beside the metrics source, which
        the router then no longer injects (ledger: router.config.metrics-source-not-injected)."""
        scorer = {
            "type": "prefix-cache-scorer",
            "parameters": {text("router.prefix-scorer.producer-name"): PRECISE_PRODUCER},
        }
        plugins: list[dict[str, Any]] = [
            {
                "type": TOKEN_PRODUCER,
                "parameters": {
                    text("router.token-producer.model-name"): self.model,
                    text("router.token-producer.vllm"): {
                        text("router.token-producer.vllm-fields"): f"http://localhost:{RENDER_PORT}"
                    },
                },
            },
            {
                "type": PRECISE_PRODUCER,
                "parameters": {
                    text("router.precise.token-processor-config"): {
                        text("router.kvblock.block-size-tokens"): self.block_size
                    },
                    text("router.precise.indexer-config"): {
                        text("router.kvcache.index-config"): {text("router.kvblock.enable-metrics"): True}
                    },
                },
            },
            {"type": ENDPOINT_SOURCE},
        ]
        sources, extractors = text("router.config.data-layer-sources"), text("router.config.data-layer-extractors")
        data_layer = {
            text("router.config.data-layer"): {
                sources: [
                    {"pluginRef": "metrics-data-source", extractors: [{"pluginRef": "core-metrics-extractor"}]},
                    {"pluginRef": ENDPOINT_SOURCE, extractors: [{"pluginRef": PRECISE_PRODUCER}]},
                ]
            }
        }
        return scorer, plugins, data_layer

    def picker_config_text(self) -> str:
        """The config as the ConfigMap holds it (JSON is YAML; keys kept in order)."""
        return json.dumps(self.picker_config(), indent=2)

    def picker_args(self) -> list[str]:
        """The picker's flags (pkg/epp/server/options.go of the chosen release; both name them alike).
        `--metrics-endpoint-auth=false`: Managed Prometheus and the smoke test read it without a token, and the
        NetworkPolicy admits only them to the port. The health port explicitly: the HealthCheckPolicy and the
        NetworkPolicy name the same number. pprof off: on by default and served on the metrics port (ledger:
        epp.pprof-default-on, epp.pprof-on-metrics-server, router.pprof-default-on). Every flag's name is the one
        its ledger row read in that release's options.go (`<release>.flag.<name>`: ledger: router.flag.pool-name,
        router.flag.pool-namespace, router.flag.pool-group, router.flag.config-file, router.flag.tracing,
        router.flag.metrics-endpoint-auth, router.flag.grpc-port, router.flag.grpc-health-port,
        router.flag.enable-pprof; ledger: epp.flag.pool-name, epp.flag.pool-namespace, epp.flag.pool-group,
        epp.flag.config-file, epp.flag.tracing, epp.flag.metrics-endpoint-auth, epp.flag.grpc-port,
        epp.flag.grpc-health-port, epp.flag.enable-pprof)."""

        def flag(name: str) -> str:
            return text(f"{self.picker.ledger}.flag.{name}")

        return [
            f"--{flag('pool-name')}={POOL_NAME}",
            f"--{flag('pool-namespace')}={self.namespace}",
            f"--{flag('pool-group')}={INFERENCE_POOL_API_VERSION.split('/')[0]}",
            f"--{flag('config-file')}={CONFIG_DIR}/{CONFIG_FILE}",
            "--zap-encoder=json",  # zap options (ledger: epp.flag.zap-encoder, router.flag.zap-encoder)
            f"--{flag('tracing')}=false",
            f"--{flag('metrics-endpoint-auth')}=false",
            f"--{flag('grpc-port')}={EXT_PROC_PORT}",
            f"--{flag('grpc-health-port')}={HEALTH_PORT}",
            f"--{flag('enable-pprof')}=false",
        ]

    @property
    def objective_header(self) -> str:
        return self.picker.objective_header


def check_gateway(spec: VllmSpec, cluster: ClusterSpec) -> ClusterSpec:
    """Refuse a gateway setting that cannot work, in one line naming the key; return the cluster with the
    Gateway API turned on. Runs before the slice is sized and the cluster planned."""
    check_disaggregation(spec)
    gateway = spec.gateway
    if not gateway.enabled:
        settings = (
            ("className", gateway.class_name),
            ("objectives", gateway.objectives),
            ("picker", gateway.picker),
            ("workload", gateway.workload),
            ("prefixCache", gateway.prefix_cache),
        )
        given = [key for key, value in settings if value]
        if given:  # settings of a gateway that is off would be ignored without a word
            raise UserError(
                "vllm.gateway.enabled",
                False,
                f"is off, so vllm.gateway.{given[0]} would be ignored",
                f"set vllm.gateway.enabled: true, or remove vllm.gateway.{given[0]}",
            )
        return cluster
    chosen = universe(cluster.universe, "cluster.universe")
    if not chosen.health_check_ranges:  # the NetworkPolicies could not admit the gateway's health checks
        raise UserError(
            "vllm.gateway.enabled",
            True,
            f"needs the health-check ranges of {chosen.title} ({chosen.name})'s load balancers, which its "
            "documentation read here does not give",
            "turn vllm.gateway off (the Service's internal load balancer serves the replicas)",
        )
    if spec.exposure == "cluster":
        raise UserError(
            "vllm.exposure",
            "cluster",
            "has no load balancer, and the gateway is one (a regional Application Load Balancer)",
            "use exposure internal (gke-l7-rilb), or public with sourceRanges, or turn vllm.gateway off",
        )
    if spec.exposure == "internal" and spec.source_ranges:  # why: catalog.inference_gateway.CLASSES
        raise UserError(
            "vllm.sourceRanges",
            spec.source_ranges,
            "cannot be enforced on the internal gateway (gke-l7-rilb): its proxies connect to the pods, and no source "
            "documents GKE attaching Cloud Armor to that class",
            "remove vllm.sourceRanges and set vllm.apiKey: true, or use exposure public (Cloud Armor enforces them)",
        )
    if spec.exposure == "internal" and not spec.api_key:  # the route passes only what the key guards: route_prefix()
        raise UserError(
            "vllm.apiKey",
            False,
            "leaves the internal gateway (gke-l7-rilb) open to the whole VPC: only vLLM's API key closes the paths "
            "it routes",
            "set vllm.apiKey: true and the secret tpu-stacks:vllmApiKey, or use exposure public with sourceRanges",
        )
    expected = CLASSES[spec.exposure]
    if gateway.class_name is not None and gateway.class_name != expected:
        raise UserError(
            "vllm.gateway.className",
            gateway.class_name,
            f"does not serve exposure {spec.exposure}",
            f"use {expected} with exposure {spec.exposure}, or leave className out",
        )
    check_prefix_cache(spec)
    names = [objective.name for objective in gateway.objectives]
    for index, name in enumerate(names):
        if name in names[:index]:
            raise UserError(
                f"vllm.gateway.objectives[{index}].name", name, "is given twice", "name each objective once"
            )
    cluster = _with_floor(cluster)
    api = cluster.gateway_api
    if "enabled" in api.model_fields_set and api.enabled is False:
        raise UserError(
            "cluster.gatewayApi.enabled", False, "is required by vllm.gateway", "remove it or set it to true"
        )
    return cluster.model_copy(update={"gateway_api": api.model_copy(update={"enabled": True})})


def _with_floor(cluster: ClusterSpec) -> ClusterSpec:
    """A new cluster is created at or above the version from which GKE installs the InferencePool CRD: the floor
    when `cluster.minVersion` is unset (decided here, so nobody has to know it), refused in one line when it is
    set below. An existing cluster's version is not known offline (docs/vllm.md says to check it)."""
    if cluster.existing is not None:
        return cluster
    if cluster.min_version is None:
        return cluster.model_copy(update={"min_version": INFERENCE_GATEWAY_CRDS_FLOOR})
    if gke_version(cluster.min_version) < gke_version(INFERENCE_GATEWAY_CRDS_FLOOR):
        raise UserError(
            "cluster.minVersion",
            cluster.min_version,
            f"is older than {INFERENCE_GATEWAY_CRDS_FLOOR}, from which GKE installs the InferencePool CRD",
            f"set cluster.minVersion to {INFERENCE_GATEWAY_CRDS_FLOOR} or later (or remove it: the gateway sets it), "
            "or turn vllm.gateway off",
        )
    return cluster


def check_single_host(spec: VllmSpec, shape: SliceShape) -> None:
    """The gateway serves single-host replicas only: the picker scrapes vLLM's metrics on each pod the pool
    selects, and a multi-host replica is a Ray cluster whose engine metrics Ray exports (its own port and names):
    Ray Serve's gateway answer (catalog/inference_gateway.gateway_support), which the policy pack asks too."""
    if spec.gateway.enabled and shape.multi_host and not gateway_support("ray").fronts:
        raise UserError(
            "vllm.gateway.enabled",
            True,
            f"needs single-host replicas, and {spec.model} is served from a multi-host {shape.topology} slice",
            "turn vllm.gateway off for this model, or choose a tpuGeneration that holds it on one host",
        )


def plan_gateway(spec: VllmSpec, cluster: ClusterPlan, model_id: str, gated: bool) -> GatewayPlan | None:
    """The gateway of a checked spec (check_gateway ran), or None when it is off; `model_id` is what `--model`
    loads, `gated` whether Hugging Face gates it."""
    if not spec.gateway.enabled:
        return None
    class_name = spec.gateway.class_name or CLASSES[spec.exposure]
    public = class_name != INTERNAL_CLASS
    cluster_name = cluster.spec.existing.name if cluster.spec.existing else cluster.spec.name
    assert RESOURCE_NAME.max_length is not None
    return GatewayPlan(
        class_name=class_name,
        namespace=spec.namespace,
        proxy_range=cluster.spec.gateway_api.proxy_only_subnet.range,
        health_check_ranges=cluster.universe.health_check_ranges,
        objectives=tuple(spec.gateway.objectives),
        metrics=picker_metrics(),
        picker_name=spec.gateway.picker or DEFAULT_PICKER,
        workload=spec.gateway.workload or DEFAULT_WORKLOAD,
        source_ranges=tuple(spec.source_ranges) if public else (),
        armor_policy=bounded(f"{cluster_name}-{spec.namespace}", RESOURCE_NAME.max_length, ARMOR_SUFFIX)
        if public
        else "",
        prefix_cache=prefix_cache(spec),
        # The name requests use (ledger: vllm.flag.served-model-name): the topic's model part must be it.
        model=flag_value(spec.extra_args, "--served-model-name", VLLM) or model_id,
        model_id=model_id,
        tokenizer=tuple(tokenizer_args(spec.extra_args)),
        block_size=server_block_size(spec.max_model_len, spec.max_num_seqs, spec.extra_args),
        gated=gated,
    )
