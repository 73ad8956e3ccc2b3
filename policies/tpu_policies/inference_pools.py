"""Rule 18: an InferencePool routes to model servers the endpoint picker can use, ours or hand-written.

Kubernetes accepts a pool that can never serve: its selector is only a label map, its target port only a
number, its picker only a name. GKE then builds a backend with no endpoints, or endpoints that refuse the
connection, or an ext-proc call to nothing (FailClose: every request fails), and the first sign is a 503
from the load balancer. All of it is visible in the plan, from the pool and the pods the stack declares:

- `spec.selector.matchLabels` must match a serving pod of the stack in the pool's namespace (Deployment,
  StatefulSet, LeaderWorkerSet, RayService pods, labelled as their controllers label them: serving_pods.py);
- every `spec.targetPorts[].number` must be a port every matched server listens on (the pool's endpoints are
  each matched pod at each target port): a container port, or the engine's HTTP port read from its arguments
  (`--port`), the engine catalogue's default when it has none;
- `spec.endpointPickerRef.name` must name a Service in the pool's namespace, with `port.number` among its ports;
- the matched servers must be ones the picker can front, as their engine answers it (catalog/inference_gateway
  `gateway_support`, the answer the components ask): OpenAI's Completions and Chat APIs and the Model Server
  Protocol's gauges (gateway-api-inference-extension v1.5.0, docs/proposals/003-model-server-protocol); the engine
  is identified by image or command through the engine catalogue. JetStream's HTTP server speaks neither, and
  SGLang-JAX 0.0.1.post1 speaks OpenAI but exports no gauges (llm-d's
  router v0.10.0, the stack's default picker, reads the same protocol: its built-in vLLM metric names are the
  same, pkg/epp/server/options.go:143-147 @ v0.10.0, and its ext-proc port is 9002 too: ledger: router.port.ext-proc);
- an HTTPRoute `backendRef` of kind InferencePool must name a pool of the stack;
- when the picker's EndpointPickerConfig (a ConfigMap its pods mount) declares llm-d's
  `precise-prefix-cache-producer`, every matched server must publish its KV-cache events under a topic the router
  reads: `--kv-events-config` with `enable_kv_cache_events`, a topic `kv@<pod>@<model>` whose model is the name the
  server answers to (the router hashes events with it and requests with the model they name), and, when the server
  says its `--max-model-len` and `--max-num-seqs` (or `--block-size`), the producer's `blockSizeTokens` must be the
  server's block size (catalog/kv_pages.py). Without events the index stays empty and the scorer silently adds
  nothing; with another model name or block size no request ever matches (vllm/kv_events.py has the ledger rows).

Values unknown at preview are skipped, never guessed; so is what a Helm v3 `Release` in the pool's namespace
may hold (its objects are not resources of the stack): a selector or picker the stack shows nothing for is then
not refused.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from pulumi_policy import EnforcementLevel, ReportViolation, Severity, StackValidationArgs, StackValidationPolicy

from tpu_policies.serving_pods import (
    DEFAULT_NAMESPACE,
    ServingPod,
    namespace_of,
    pod_tokens,
    same_namespace,
    serving_pods,
)
from tpu_policies.stack import Item, read_stack
from tpu_policies.values import UNKNOWN, as_dict, as_int, as_list, as_str, dig
from tpu_policies.workloads import kind_of, name_of, pod_templates
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.inference_gateway import INFERENCE_POOL_GROUP, gateway_support
from tpu_stacks.catalog.kv_pages import tpu_page_size
from tpu_stacks.catalog.upstream import number, text
from tpu_stacks.serving.engine_flags import flag_values

PRECISE_PRODUCER = text("router.plugin.precise-prefix-cache-producer")
TOPIC_PREFIX = text("router.kv-events.topic-filter")

GATEWAY_GROUP = "gateway.networking.k8s.io"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
"""Its chart's objects are not resources of the stack: the pack cannot see the pods or Services it makes."""


def _group(item: Item) -> str:
    """The object's API group ("" for core), from its apiVersion or else its type token."""
    api_version = as_str(item.props.get("apiVersion"))
    if api_version is None:
        parts = item.type.split(":")
        api_version = parts[1] if len(parts) == 3 else ""
    group = api_version.rpartition("/")[0]
    return "" if group == "core" else group


def _of_kind(stack_items: list[Item], kind: str, group: str) -> list[Item]:
    return [i for i in stack_items if kind_of(i.type, i.props) == kind and _group(i) == group]


def _services(stack_items: list[Item]) -> list[Item]:
    return [i for i in stack_items if kind_of(i.type, i.props) == "Service" and _group(i) == ""]


def _name(item: Item) -> str:
    """An object's name as written; Pulumi autonames one without (resource name and a random suffix)."""
    return as_str(dig(item.props, "metadata", "name")) or f"{item.name}-<random suffix>"


def _shown(selector: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in selector.items()) + "}"


def _selector_problem(selector: dict[str, Any], pods: list[ServingPod]) -> str | None:
    if pods:
        candidates = "; ".join(f"{p.item.label} ({p.shown_labels()})" for p in pods[:4])
        return (
            f"spec.selector.matchLabels {_shown(selector)} matches no serving pod of this stack in its namespace "
            f"(serving pods there: {candidates}); set it to labels of the model server's pod template"
        )
    return (
        f"spec.selector.matchLabels {_shown(selector)} matches no serving pod of this stack: no Deployment, "
        "StatefulSet, LeaderWorkerSet or RayService runs in its namespace; declare the model servers in this stack "
        "and select their pod labels"
    )


def _port_problems(matched: list[ServingPod], pool: dict[str, Any]) -> list[str]:
    """Each target port must be one every matched server listens on: "Every port will be treated as a distinctive
    endpoint by EPP, addressable as a 'podIP:portNumber' combination" (api/v1/inferencepool_types.go @ v1.5.0), so
    a port only some matched pods open is an endpoint that refuses connections."""
    listening: list[tuple[ServingPod, set[int]]] = []
    for pod in matched:
        ports = pod.ports()
        if ports is None:
            return []
        listening.append((pod, ports))
    problems = []
    for index, port in enumerate(as_list(dig(pool, "spec", "targetPorts"))):
        given = dig(port, "number")
        number = None if given is UNKNOWN else as_int(given)
        if number is None:
            continue
        missing = [(pod, ports) for pod, ports in listening if number not in ports]
        if not missing:
            continue
        pod, ports = missing[0]
        have = ", ".join(str(p) for p in sorted(ports)) or "none"
        problems.append(
            f"spec.targetPorts[{index}].number {number} is not a port every matched server listens on "
            f"({pod.item.label} listens on {have}); set it to the engine's HTTP port, and select only the servers "
            "that serve on it"
        )
    return problems


def _picker_problem(pool: dict[str, Any], namespace: Any, services: list[Item]) -> str | None:
    ref = as_dict(dig(pool, "spec", "endpointPickerRef"))
    name, kind = ref.get("name"), ref.get("kind", "Service")
    if not isinstance(name, str) or kind != "Service" or as_str(ref.get("group")):
        return None
    here = [s for s in services if same_namespace(namespace_of(s.props), namespace)]
    if any(dig(s.props, "metadata", "name") is UNKNOWN for s in here):
        return None
    named = [s for s in here if dig(s.props, "metadata", "name") == name]
    if not named:
        known = ", ".join(sorted(_name(s) for s in here)) or "none"
        return (
            f"spec.endpointPickerRef.name {name} names no Service in namespace {namespace} (Services there: {known}); "
            "name the endpoint picker's Service"
        )
    port = dig(ref, "port", "number")
    if port is None:  # the CRD's CEL rule, which the offline schema check cannot run
        return (
            f"spec.endpointPickerRef.port is required when kind is Service (the CRD's validation rule); set "
            f"port.number to Service {name}'s ext-proc port (9002 by default)"
        )
    if port is UNKNOWN or as_int(port) is None:
        return None
    ports = [dig(p, "port") for p in as_list(dig(named[0].props, "spec", "ports"))]
    if UNKNOWN in ports or as_int(port) in [as_int(p) for p in ports]:
        return None
    have = ", ".join(str(as_int(p)) for p in ports) or "none"
    return (
        f"spec.endpointPickerRef.port.number {as_int(port)} is not a port of Service {name} ({have}); "
        "use the picker's ext-proc port (9002 by default)"
    )


def _protocol_problems(matched: list[ServingPod]) -> list[str]:
    problems: list[str] = []
    for pod in matched:
        engine = pod.engine
        if engine is None or any(pod.item.label in p for p in problems):
            continue
        answer = gateway_support(engine)  # the engine's own answer, the one its component asks
        if not answer.fronts:
            problems.append(
                f"spec.selector.matchLabels selects {pod.item.label}, a {engine.engine} {engine.version} server, "
                f"which the endpoint picker cannot front: {answer.why}; route to it through its Service (an "
                "HTTPRoute backendRef of kind Service) or serve the model with vLLM"
            )
    return problems


def _opaque(items: list[Item], namespace: Any) -> bool:
    """A Helm v3 Release installs into this namespace: absent pods or Services may be in its chart."""
    for item in items:
        if item.type == HELM_RELEASE:
            given = item.props.get("namespace")
            if same_namespace(given if given is UNKNOWN else (as_str(given) or DEFAULT_NAMESPACE), namespace):
                return True
    return False


def _picker_configs(pool: dict[str, Any], items: list[Item]) -> list[dict[str, Any]]:
    """The EndpointPickerConfigs the pool's picker pods mount: its Service's selector, the workloads whose pods it
    selects, their ConfigMap volumes, those ConfigMaps' documents. Whatever is unknown or unreadable is skipped."""
    namespace = namespace_of(pool)
    name = dig(pool, "spec", "endpointPickerRef", "name")
    here = [i for i in items if same_namespace(namespace_of(i.props), namespace)]
    services = [s for s in _services(here) if dig(s.props, "metadata", "name") == name]
    selector = as_dict(dig(services[0].props, "spec", "selector")) if services else {}
    if not selector or UNKNOWN in selector.values():
        return []
    volumes: set[str] = set()
    for item in here:
        for template in pod_templates(item.type, item.props):
            labels = as_dict(dig(item.props, "spec", "template", "metadata", "labels"))
            if all(labels.get(k) == v for k, v in selector.items()):
                volumes |= {
                    n
                    for v in as_list(template.spec.get("volumes"))
                    if isinstance(n := dig(v, "configMap", "name"), str)
                }
    configs = []
    for item in here:
        if kind_of(item.type, item.props) != "ConfigMap" or dig(item.props, "metadata", "name") not in volumes:
            continue
        for value in as_dict(item.props.get("data")).values():
            try:
                document = yaml.safe_load(value) if isinstance(value, str) else None
            except yaml.YAMLError:
                continue
            if isinstance(document, dict) and document.get("kind") == "EndpointPickerConfig":
                configs.append(document)
    return configs


def _server_block(flags: dict[str, str]) -> int | None:
    """The server's block size when its arguments say it: `--block-size`, else tpu-inference's page size for its
    `--max-model-len` and `--max-num-seqs` (None when either is not given: its defaults are the model's)."""
    given = as_int(flags.get("--block-size"))
    if given is not None:
        return given
    length, sequences = as_int(flags.get("--max-model-len")), as_int(flags.get("--max-num-seqs"))
    return tpu_page_size(length, sequences) if length and sequences else None


def _precise_problems(configs: list[dict[str, Any]], matched: list[ServingPod]) -> list[str]:
    producers = [
        p
        for c in configs
        for p in as_list(c.get("plugins"))
        if isinstance(p, dict) and p.get("type") == PRECISE_PRODUCER
    ]
    if not producers:
        return []
    parameters = as_dict(producers[0].get("parameters"))
    processor = as_dict(parameters.get("tokenProcessorConfig"))
    router_block = (
        as_int(processor.get("blockSizeTokens"))
        or as_int(processor.get("blockSize"))
        or number("router.kvblock.default-block-size")
    )
    problems = []
    for pod in matched:
        if pod.engine != VLLM:  # the flags and the page size read here are vLLM TPU's
            continue
        tokens = pod_tokens(pod.template)
        if tokens is None:
            continue
        flags = flag_values(tokens, pod.engine)  # as vLLM's parser reads them: underscores as dashes
        raw = flags.get("--kv-events-config")
        try:
            events = json.loads(raw) if raw is not None else None
        except json.JSONDecodeError:
            continue  # split by the shell or written another way: not judged
        model = flags.get("--served-model-name") or flags.get("--model")
        topic = str(as_dict(events).get("topic", ""))
        parts = topic.split("@")
        if events is None or as_dict(events).get("enable_kv_cache_events") is not True:
            problems.append(
                f"the picker's {PRECISE_PRODUCER} indexes KV-cache events, but {pod.label} publishes none; give the "
                "server --kv-events-config with enable_kv_cache_events true, publisher zmq and topic kv@<pod>@<model>, "
                "or drop the producer for the approximate prefix scorer"
            )
        elif not topic.startswith(TOPIC_PREFIX) or len(parts) != 3 or (model and parts[2] != model):
            problems.append(
                f"{pod.label} publishes KV events under topic {topic!r}, which the router drops or hashes under "
                f"another model; use kv@<pod>@{model or '<served model name>'}"
            )
        server_block = _server_block(flags)
        if server_block is not None and server_block != router_block:
            problems.append(
                f"the picker's {PRECISE_PRODUCER} hashes {router_block}-token blocks, but {pod.label} caches "
                f"{server_block}-token blocks; set tokenProcessorConfig.blockSizeTokens: {server_block}"
            )
    return problems


def check_pool(
    pool: Item, pods: list[ServingPod], services: list[Item], opaque: bool = False, items: list[Item] | None = None
) -> list[str]:
    """Every way one InferencePool cannot serve, one line each, without the pool's name."""
    namespace = namespace_of(pool.props)
    problems = []
    selector = dig(pool.props, "spec", "selector", "matchLabels")
    if isinstance(selector, dict) and selector and UNKNOWN not in selector.values():
        here = [p for p in pods if same_namespace(p.namespace, namespace)]
        matched = [p for p in here if p.matches(selector)]
        if matched:
            problems += _port_problems(matched, pool.props)
            problems += _protocol_problems(matched)
            problems += _precise_problems(_picker_configs(pool.props, items or []), matched)
        elif not opaque:
            problems.append(_selector_problem(selector, here))
    picker = None if opaque else _picker_problem(pool.props, namespace, services)
    if picker:
        problems.append(picker)
    return [p for p in problems if p]


def route_problems(route: Item, pools: list[Item]) -> list[str]:
    """HTTPRoute backendRefs of kind InferencePool that name no pool of the stack."""
    problems = []
    namespace = namespace_of(route.props)
    for r, rule in enumerate(as_list(dig(route.props, "spec", "rules"))):
        for b, ref in enumerate(as_list(dig(rule, "backendRefs"))):
            if dig(ref, "kind") != "InferencePool" or not isinstance(dig(ref, "name"), str):
                continue
            name, group = ref["name"], dig(ref, "group")
            where = f"spec.rules[{r}].backendRefs[{b}]"
            wanted = as_str(dig(ref, "namespace")) or namespace
            if group is UNKNOWN or wanted is UNKNOWN:
                continue
            same = [p for p in pools if same_namespace(namespace_of(p.props), wanted)]
            if any(dig(p.props, "metadata", "name") is UNKNOWN for p in same):
                continue
            named = [p for p in same if dig(p.props, "metadata", "name") == name]
            if any(_group(p) == group for p in named):
                continue
            if named:
                problems.append(
                    f"{where}.group {group or '(core)'} is not InferencePool {name}'s API group; set group: "
                    f"{_group(named[0])}"
                )
            else:
                known = ", ".join(sorted(_name(p) for p in same)) or "none"
                problems.append(
                    f"{where} names InferencePool {name}, which this stack does not declare in namespace {wanted} "
                    f"(pools there: {known}); name one of them or declare the pool"
                )
    return problems


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    stack = read_stack(args)
    pools = _of_kind(stack.items, "InferencePool", INFERENCE_POOL_GROUP)
    every_pool = [i for i in stack.items if kind_of(i.type, i.props) == "InferencePool"]
    pods = serving_pods(stack)
    services = _services(stack.items)
    for pool in pools:
        opaque = _opaque(stack.items, namespace_of(pool.props))
        for problem in check_pool(pool, pods, services, opaque, stack.items):
            report_violation(f"InferencePool {name_of(pool.props, pool.name)}: {problem}", pool.urn)
    for route in _of_kind(stack.items, "HTTPRoute", GATEWAY_GROUP):
        for problem in route_problems(route, every_pool):
            report_violation(f"HTTPRoute {name_of(route.props, route.name)}: {problem}", route.urn)


POLICY = StackValidationPolicy(
    name="inference-pool-serves",
    description="An InferencePool selects serving pods of the stack, targets a port they listen on, names an "
    "endpoint picker Service (and one of its ports), and its servers are ones the picker can front, as their "
    "engine answers (not JetStream or SGLang-JAX), and publish KV-cache events under their model at the router's "
    "block size when its precise prefix producer indexes them; an HTTPRoute's InferencePool backendRef names a "
    "pool of the stack.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.HIGH,
)
