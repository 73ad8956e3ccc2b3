"""`vllm.gateway`: GKE Inference Gateway in front of the replicas, decided purely (gateway_plan) and declared under
mocks (gateway.py, the cluster's Gateway API and proxy-only subnet). Refusals are tested with inputs that break
each rule, and the resources against the objects they must agree with (pods, ports, Services)."""

import ast
import shutil
from pathlib import Path

import pulumi
import pytest
import yaml

from tests.clients import CLIENTS
from tests.mocks import RecordingMocks, capture
from tests.shipped import shipped
from tpu_stacks.catalog.engines.record import EngineVersion, Metric
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.gke_versions import INFERENCE_GATEWAY_CRDS_FLOOR
from tpu_stacks.catalog.inference_gateway import (
    CLASSES,
    EXT_PROC_PORT,
    EXTERNAL_CLASS,
    HEALTH_PORT,
    INTERNAL_CLASS,
)
from tpu_stacks.catalog.pickers import ROUTER_PICKER
from tpu_stacks.catalog.published import publisher
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.catalog.upstream import fact
from tpu_stacks.cluster.spec import ClusterSpec, ProxyOnlySubnetSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.universe import universe
from tpu_stacks.k8s.crd_files import crd_document
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks.vllm.gateway_plan import (
    CONFIG_FILE,
    MODEL_SERVER_PROTOCOL,
    PICKER_LABELS,
    PICKER_NAME,
    POOL_NAME,
    ROUTE_NAME,
    check_single_host,
    picker_metrics,
)
from tpu_stacks.vllm.monitoring import vllm_sections, vllm_target
from tpu_stacks.vllm.network import network
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import GatewaySpec, VllmSpec
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.monitoring import promql_metrics

ROOT = Path(__file__).resolve().parents[2]
HEALTH_CHECK_RANGES = universe("google").health_check_ranges
SCORERS = ("queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer")
"""The picker's scorers, in the upstream chart's order (ledger: epp.plugin.<name>)."""

CLUSTER = ClusterSpec(project="proj", location="us-central1-b", min_version=INFERENCE_GATEWAY_CRDS_FLOOR)
ON = {"enabled": True}
KEY = {"api_key": True, "api_key_secret": "k"}
"""An internal gateway's clients: vLLM's key (check_gateway refuses it without)."""


def plan(cluster: ClusterSpec = CLUSTER, **spec):
    """A vLLM plan whose clients are named the way its exposure needs: behind an internal gateway by vLLM's key
    (which guards all the gateway routes), else by source ranges."""
    internal_gateway = (spec.get("gateway") or {}).get("enabled") and spec.get("exposure", "internal") == "internal"
    gateway_on = (spec.get("gateway") or {}).get("enabled")
    clients = {"api_key": True} if internal_gateway else {} if gateway_on else {"source_ranges": CLIENTS}
    return plan_vllm(
        VllmSpec(**{"model": "meta-llama/Llama-3.1-70B", **clients, **spec}),
        cluster,
        hf_token_given=True,
        api_key_given=True,
    )


def refusal(**kwargs) -> UserError:
    with pytest.raises(UserError) as caught:
        plan(**kwargs)
    return caught.value


# -- decisions ------------------------------------------------------------------------------------------------


def test_an_internal_gateway_is_gke_l7_rilb_and_turns_on_the_clusters_gateway_api():
    decided = plan(gateway=ON)
    assert decided.gateway.class_name == "gke-l7-rilb" == CLASSES["internal"]
    assert decided.cluster.spec.gateway_api.enabled
    assert decided.gateway.proxy_range == ProxyOnlySubnetSpec().range
    assert plan().gateway is None and not plan().cluster.spec.gateway_api.enabled  # off by default


def test_a_public_gateway_is_the_regional_external_class_with_its_ranges_and_needs_ranges():
    """sourceRanges on an L7 gateway are enforced by regional Cloud Armor (catalog.inference_gateway.CLASSES); a
    public gateway without them is refused in one line, by the check every public endpoint goes through."""
    decided = plan(gateway=ON, exposure="public", source_ranges=["203.0.113.0/24"]).gateway
    assert decided.class_name == EXTERNAL_CLASS == "gke-l7-regional-external-managed" and decided.public
    assert decided.source_ranges == ("203.0.113.0/24",)
    assert decided.armor_policy == "tpu-cluster-vllm-gateway-armor"
    error = refusal(gateway=ON, exposure="public")
    assert (error.key, error.value) == ("vllm.sourceRanges", []) and "\n" not in str(error)
    internal = plan(gateway=ON).gateway
    assert not internal.public and internal.armor_rules() == () and internal.armor_policy == ""


def test_the_cloud_armor_rules_allow_the_ranges_in_chunks_of_ten_then_deny_everyone_else():
    ranges = [f"203.0.{i}.0/24" for i in range(23)]
    rules = plan(gateway=ON, exposure="public", source_ranges=ranges).gateway.armor_rules()
    allow, default = rules[:-1], rules[-1]
    assert [len(rule.ranges) for rule in allow] == [10, 10, 3]  # at most 10 srcIpRanges per rule
    assert [r for rule in allow for r in rule.ranges] == ranges and {rule.action for rule in allow} == {"allow"}
    assert sorted(rule.priority for rule in allow) == [rule.priority for rule in allow]
    assert len({rule.priority for rule in rules}) == len(rules)
    assert (default.priority, default.action, default.ranges) == (2147483647, "deny(403)", ("*",))
    assert max(rule.priority for rule in allow) < default.priority
    # The allow rules are numbered from 1000, as gcloud's own example numbers a first rule
    # (https://cloud.google.com/sdk/gcloud/reference/compute/security-policies/rules/create): numbers a deployed
    # policy already has, so an upgrade does not renumber (rewrite) every rule of a live policy.
    assert [rule.priority for rule in allow] == [1000, 1001, 1002]


def test_the_spec_names_the_documented_classes_and_the_plan_offers_both():
    field = GatewaySpec.model_fields["class_name"]
    assert set(field.annotation.__args__[0].__args__) == {INTERNAL_CLASS, EXTERNAL_CLASS}
    assert CLASSES == {"internal": INTERNAL_CLASS, "public": EXTERNAL_CLASS}


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"exposure": "cluster"}, "vllm.exposure"),
        ({"gateway": {**ON, "className": "gke-l7-regional-external-managed"}}, "vllm.gateway.className"),
        (
            {"gateway": {**ON, "className": "gke-l7-rilb"}, "exposure": "public", "source_ranges": ["203.0.113.0/24"]},
            "vllm.gateway.className",
        ),
        # the internal class has no documented Cloud Armor: its sourceRanges would be ignored
        ({"source_ranges": ["10.0.0.0/8"]}, "vllm.sourceRanges"),
        (
            {"gateway": {**ON, "objectives": [{"name": "a"}, {"name": "a", "priority": 2}]}},
            "vllm.gateway.objectives[1].name",
        ),
        ({"exposure": "public", "source_ranges": []}, "vllm.sourceRanges"),  # public still needs source ranges
        ({"gateway": {"className": "gke-l7-rilb"}}, "vllm.gateway.enabled"),  # settings of a gateway that is off
        ({"gateway": {"objectives": [{"name": "a"}]}}, "vllm.gateway.enabled"),
    ],
)
def test_settings_the_gateway_cannot_serve_are_refused_naming_the_key(kwargs, key):
    kwargs.setdefault("gateway", ON)
    assert refusal(**kwargs).key == key


def test_the_cluster_floor_is_where_gke_installs_the_pool_crd():
    no_floor = ClusterSpec(project="proj", location="us-central1-b")
    # unset: the plan decides the floor itself
    assert plan(cluster=no_floor, gateway=ON).cluster.spec.min_version == INFERENCE_GATEWAY_CRDS_FLOOR
    low = no_floor.model_copy(update={"min_version": "1.33.3-gke.1136000"})
    error = refusal(cluster=low, gateway=ON)
    assert error.key == "cluster.minVersion" and INFERENCE_GATEWAY_CRDS_FLOOR in str(error)
    assert plan(cluster=no_floor).cluster.spec.min_version is None  # without the gateway no floor is set
    existing = ClusterSpec(
        project="proj", location="us-central1-b", existing={"name": "c", "location": "us-central1-b"}
    )
    assert plan(cluster=existing, gateway=ON).gateway is not None  # an existing cluster's version is not known


def test_the_gateway_sets_no_minimum_version_on_an_adopted_cluster():
    """The InferencePool CRD's floor is a create-time version: an adopted cluster (`cluster.existing`) runs the
    version it has, which is not known offline, so the gateway neither sets `cluster.minVersion` on it nor refuses
    one below the floor (docs/vllm.md says to check it); a cluster the stack creates gets the floor."""
    adopted = {"project": "proj", "location": "us-central1-b", "existing": {"name": "c", "location": "us-central1-b"}}
    decided = plan(cluster=ClusterSpec(**adopted), gateway=ON)
    assert decided.gateway is not None and decided.cluster.spec.gateway_api.enabled
    assert decided.cluster.spec.min_version is None and decided.cluster.version_floor is None
    old = plan(cluster=ClusterSpec(**adopted, min_version="1.33.3-gke.1136000"), gateway=ON)
    assert old.cluster.spec.min_version == "1.33.3-gke.1136000" and old.cluster.version_floor is None
    created = plan(cluster=ClusterSpec(project="proj", location="us-central1-b"), gateway=ON).cluster
    assert created.spec.min_version == created.version_floor == INFERENCE_GATEWAY_CRDS_FLOOR


def test_a_cluster_that_turned_the_gateway_api_off_is_refused():
    off = CLUSTER.model_validate({**CLUSTER.model_dump(by_alias=True), "gatewayApi": {"enabled": False}})
    assert refusal(cluster=off, gateway=ON).key == "cluster.gatewayApi.enabled"


def test_multi_host_replicas_are_refused_behind_the_gateway():
    spec = VllmSpec(model="meta-llama/Llama-3.1-405B", gateway=ON)
    with pytest.raises(UserError) as caught:
        check_single_host(spec, slice_shape("v5p", "2x2x2"))
    assert caught.value.key == "vllm.gateway.enabled"
    check_single_host(spec, slice_shape("v6e", "2x4"))  # one host passes
    check_single_host(VllmSpec(model="meta-llama/Llama-3.1-405B"), slice_shape("v5p", "2x2x2"))  # gateway off


@pytest.mark.parametrize("bad", ["8.8.8.0/24", "192.168.64.0/27", "192.168.64.1/23", "fd00::/64"])
def test_the_proxy_only_range_is_a_private_ipv4_network_of_at_least_26_bits(bad):
    with pytest.raises(ValueError):
        ProxyOnlySubnetSpec(range=bad)
    assert ProxyOnlySubnetSpec(range="10.129.0.0/23").range == "10.129.0.0/23"


# -- the picker reads the pinned vLLM's names ------------------------------------------------------------------


def _engine_with(*names: str) -> EngineVersion:
    return VLLM.model_copy(update={"metrics": tuple(Metric(name=n, kind="gauge") for n in names)})


def test_the_picker_reads_the_kv_cache_name_the_pinned_vllm_exports():
    required = ("vllm:num_requests_waiting", "vllm:num_requests_running")
    with pytest.raises(ValueError):  # the pre-0.9 name is not the pinned engine's: a catalogue fault, not a fallback
        picker_metrics(_engine_with(*required, "vllm:gpu_cache_usage_perc"))
    assert picker_metrics(_engine_with(*required, "vllm:kv_cache_usage_perc"))["kvUsageSpec"] == (
        "vllm:kv_cache_usage_perc"
    )
    optional = picker_metrics(_engine_with(*required, "vllm:kv_cache_usage_perc"))
    assert optional["loraSpec"] == optional["cacheInfoSpec"] == ""  # not exported: the extractor skips them
    with pytest.raises(ValueError):
        picker_metrics(_engine_with("vllm:num_requests_running", "vllm:kv_cache_usage_perc"))


def test_every_name_the_picker_is_given_is_catalogued_for_the_pinned_vllm():
    chosen = picker_metrics()
    assert set(chosen) == set(MODEL_SERVER_PROTOCOL)
    assert all(VLLM.metric(name) is not None for name in chosen.values() if name)


def test_the_picker_config_carries_the_names_and_no_refused_metric_flag():
    decided = plan(gateway=ON).gateway
    config = decided.picker_config()
    assert config["apiVersion"] == ROUTER_PICKER.config_api == "llm-d.ai/v1alpha1"
    assert config["kind"] == "EndpointPickerConfig"
    (extractor,) = [p for p in config["plugins"] if p["type"] == "core-metrics-extractor"]
    assert extractor["parameters"]["engineConfigs"] == [{"name": "vllm", **picker_metrics()}]
    args = " ".join(decided.picker_args())
    # v1.5.0 refuses these flags at start (pkg/epp/server/options.go Validate): the config carries the names.
    assert "--kv-cache-usage-percentage-metric" not in args and "--total-queued-requests-metric" not in args
    assert f"--pool-name={POOL_NAME}" in args and "--pool-namespace=vllm" in args


# -- resources ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack():
    capture_ = shipped("vllm-gateway")
    assert capture_.error is None, capture_.error
    return capture_


def _one(capture_, kind, name=None):
    found = [r for r in capture_.sorted_resources() if r.type.endswith(f":{kind}")]
    if name is not None:
        found = [r for r in found if (r.inputs.get("metadata") or {}).get("name") == name]
    assert len(found) == 1, (kind, name, [r.name for r in found])
    return found[0].inputs


def test_the_pool_selects_the_servers_on_their_port_and_names_the_pickers_service(stack):
    pool = _one(stack, "InferencePool")["spec"]
    server = _one(stack, "Deployment", "vllm-tpu")["spec"]["template"]
    assert pool["selector"]["matchLabels"] == server["metadata"]["labels"]
    (container,) = server["spec"]["containers"]
    assert [p["number"] for p in pool["targetPorts"]] == [container["ports"][0]["containerPort"]]
    picker_service = _one(stack, "Service", pool["endpointPickerRef"]["name"])["spec"]
    assert pool["endpointPickerRef"]["port"]["number"] in [p["port"] for p in picker_service["ports"]]
    assert picker_service["selector"] == PICKER_LABELS
    assert _one(stack, "Service", "vllm-service")["spec"]["type"] == "ClusterIP"  # the Gateway is the LB now


def _picker_container(pod: dict) -> dict:
    """The picker's own container (with the precise prefix cache, the render sidecar runs beside it)."""
    (container,) = [c for c in pod["containers"] if c["name"] == "epp"]
    return container


def test_the_picker_is_pinned_hardened_and_may_read_what_it_watches(stack):
    pod = _one(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    container = _picker_container(pod)
    assert container["image"] == f"{ROUTER.images[0]}:{ROUTER.version}"
    assert container["image"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    assert container["securityContext"]["readOnlyRootFilesystem"] and pod["automountServiceAccountToken"]
    rules = {
        (g, r)
        for rule in _one(stack, "Role", PICKER_NAME)["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    assert {
        ("", "pods"),
        ("inference.networking.k8s.io", "inferencepools"),
        ("llm-d.ai", "inferenceobjectives"),
    } <= rules
    assert ("inference.networking.x-k8s.io", "inferenceobjectives") in rules  # read when llm-d.ai is absent
    binding = _one(stack, "RoleBinding", PICKER_NAME)
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"] == PICKER_NAME


def test_route_gateway_and_gke_policies_point_at_the_pool(stack):
    route = _one(stack, "HTTPRoute")["spec"]
    gateway = _one(stack, "Gateway")
    assert route["parentRefs"] == [{"name": gateway["metadata"]["name"]}]
    assert route["rules"][0]["backendRefs"][0]["name"] == POOL_NAME
    assert gateway["spec"]["gatewayClassName"] == "gke-l7-rilb"
    health = _one(stack, "HealthCheckPolicy", POOL_NAME)["spec"]
    assert health["targetRef"]["kind"] == "InferencePool" and health["default"]["config"]["httpHealthCheck"] == {
        "requestPath": "/health",
        "portSpecification": "USE_FIXED_PORT",
        "port": 8000,
    }
    backend = _one(stack, "GCPBackendPolicy")["spec"]
    assert backend["targetRef"]["name"] == POOL_NAME and "securityPolicy" not in backend["default"]  # internal


def test_the_gateway_listens_on_plain_http_port_80_where_the_curl_output_points(stack):
    """docs/vllm.md: "the Gateway is the load balancer, on port 80", plain HTTP on both classes until the stack
    declares TLS; the stack's `curl` output calls that port on the Gateway's address."""
    assert _one(stack, "Gateway")["spec"]["listeners"] == [{"name": "http", "protocol": "HTTP", "port": 80}]
    assert ":80/v1/completions" in stack.stack_outputs["curl"]


def test_the_cluster_runs_the_gateway_api_with_its_proxy_only_subnet_first(stack):
    cluster = next(r for r in stack.sorted_resources() if r.type == "gcp:container/cluster:Cluster")
    assert cluster.inputs["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    assert cluster.inputs["addonsConfig"]["httpLoadBalancing"] == {"disabled": False}
    subnet = _one(stack, "Subnetwork")
    assert (subnet["purpose"], subnet["role"], subnet["ipCidrRange"]) == (
        "REGIONAL_MANAGED_PROXY",
        "ACTIVE",
        ProxyOnlySubnetSpec().range,
    )
    assert subnet["region"] == "us-central1" and subnet["network"] == "default"
    apis = {r.inputs["service"] for r in stack.sorted_resources() if r.type == "gcp:projects/service:Service"}
    assert "networkservices.googleapis.com" in apis


def test_the_vllm_stack_without_a_gateway_has_none_of_it():
    capture_ = shipped("vllm")
    types = {r.type.rsplit(":", 1)[-1] for r in capture_.sorted_resources()}
    assert not types & {"InferencePool", "Gateway", "HTTPRoute", "Subnetwork", "GCPBackendPolicy"}


CLUSTER_ARGS = {"project": "proj", "location": "us-central1-b", "min_version": INFERENCE_GATEWAY_CRDS_FLOOR}


def _inputs(mocks, typ):
    return [r.inputs for r in mocks.of_type(typ)]


def _stack_with(tmp_path, gateway=None, **vllm):
    """The shipped vllm-gateway stack with `vllm.gateway` and `vllm` settings changed, run as `tpu-stacks plan`
    runs it."""
    for file in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / file, tmp_path / file)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    document = yaml.safe_load((ROOT / "Pulumi.vllm-gateway.yaml").read_text())
    document["config"]["tpu-stacks:vllm"]["gateway"].update(gateway or {})
    document["config"]["tpu-stacks:vllm"].update(vllm)
    (tmp_path / "Pulumi.changed.yaml").write_text(yaml.safe_dump(document))
    capture_ = run_program(tmp_path, "changed", preview=False)
    assert capture_.error is None, capture_.error
    return capture_


def _with_objectives(tmp_path, objectives):
    return _stack_with(tmp_path, {"objectives": objectives})


def test_objectives_come_with_their_crd_which_they_and_the_picker_wait_for(tmp_path):
    capture_ = _with_objectives(tmp_path, [{"name": "interactive", "priority": 10}])
    (crd,) = capture_.of_type("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition")
    upstream = crd_document(ROUTER_PICKER.objective_crd)
    assert upstream["spec"]["group"] == "llm-d.ai"
    assert crd.inputs["metadata"]["name"] == upstream["metadata"]["name"]
    assert crd.inputs["spec"]["versions"][0]["schema"] == upstream["spec"]["versions"][0]["schema"]  # unchanged
    assert crd.options.retain_on_delete  # deleting a CRD deletes every object of its kind in the cluster
    (objective,) = capture_.of_type("kubernetes:llm-d.ai/v1alpha2:InferenceObjective")
    assert capture_.of_type("kubernetes:inference.networking.x-k8s.io/v1alpha2:InferenceObjective") == []
    assert objective.inputs["spec"] == {
        "priority": 10,
        "poolRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": POOL_NAME},
    }
    assert crd.urn in objective.dependencies
    (picker,) = [
        r for r in capture_.of_type("kubernetes:apps/v1:Deployment") if r.inputs["metadata"]["name"] == PICKER_NAME
    ]
    assert crd.urn in picker.dependencies  # it discovers the kind only when it starts


def test_without_objectives_no_crd_is_declared(stack):
    assert stack.of_type("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition") == []
    assert stack.of_type("kubernetes:inference.networking.x-k8s.io/v1alpha2:InferenceObjective") == []
    assert stack.of_type("kubernetes:llm-d.ai/v1alpha2:InferenceObjective") == []


# -- connectivity and monitoring --------------------------------------------------------------------------------


def _peers(group, direction, port):
    return {
        f.peer.json().get("cidr") or str(f.peer.json().get("labels")) for f in group.of(direction) if f.port == port
    }


def test_the_contract_admits_the_proxies_and_health_checks_and_the_picker():
    decided = plan(gateway=ON)
    server, picker = network(decided, {"app": "vllm-tpu"})
    assert {decided.gateway.proxy_range, *HEALTH_CHECK_RANGES} <= _peers(server, "ingress", 8000)
    assert str(PICKER_LABELS) in _peers(server, "ingress", 8000)
    assert "0.0.0.0/0" not in _peers(server, "ingress", 8000)  # no load-balancer clients straight to the pods
    assert _peers(picker, "ingress", EXT_PROC_PORT) == {decided.gateway.proxy_range}  # ext-proc: the proxies only
    assert {decided.gateway.proxy_range, *HEALTH_CHECK_RANGES} <= _peers(picker, "ingress", HEALTH_PORT)
    assert str({"app": "vllm-tpu"}) in _peers(picker, "egress", 8000)
    assert len(network(plan(), {"app": "vllm-tpu"})) == 1  # no picker without a gateway


def test_the_dashboard_draws_the_pickers_metrics_only_behind_a_gateway():
    with_gateway = vllm_sections(vllm_target(plan(gateway=ON), "vllm-hpa", "vllm-tpu", "vllm-tpu"))
    assert with_gateway[-1].title == "Inference Gateway"
    queries = [ds.time_series_query.prometheus_query for w in with_gateway[-1].widgets for ds in w.xy_chart.data_sets]
    # every selector of every query, read from the query text (not from the catalogue): each names a metric the
    # pinned picker exports, and the section charts the pool's own gauges
    names = {name for query in queries for name in promql_metrics(query)}
    assert {"llm_d_epp_average_queue_size", "llm_d_epp_ready_endpoints"} <= names
    # the router's decisions: picks by the server chosen, and how much of each prompt its prefix index matched
    assert {"llm_d_epp_scheduler_attempts_total", "llm_d_epp_prefix_indexer_hit_ratio_bucket"} <= names
    assert "vllm:num_requests_waiting" in names  # each server's queue, what the queue scorer weighs
    assert all(publisher(name, [ROUTER, VLLM]) is not None for name in names), names
    assert not any(name.startswith("inference_") for name in names)  # the router's own names, not the deprecated
    assert publisher("llm_d_epp_made_up", [ROUTER]) is None
    without = vllm_sections(vllm_target(plan(), "vllm-hpa", "vllm-tpu", "vllm-tpu"))
    assert "Inference Gateway" not in [section.title for section in without]


def test_an_adopted_proxy_only_subnet_is_not_created_and_its_range_reaches_the_policy():
    cluster = {
        **CLUSTER_ARGS,
        "mode": "autopilot",
        "location": "us-central1",
        "gateway_api": {"proxy_only_subnet": {"existing": "shared-proxy", "range": "10.129.0.0/23"}},
    }
    args = {"cluster": cluster, "model": "meta-llama/Llama-3.1-70B", "gateway": {"enabled": True}, **KEY}
    mocks = capture(lambda: VllmStack("vllm", {**args, "hf_token": pulumi.Output.secret("hf_x")}))
    assert _inputs(mocks, "gcp:compute/subnetwork:Subnetwork") == []
    (cluster_inputs,) = _inputs(mocks, "gcp:container/cluster:Cluster")
    assert cluster_inputs["enableAutopilot"] and cluster_inputs["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}
    assert cluster_inputs["addonsConfig"]["httpLoadBalancing"] == {"disabled": False}
    server = next(
        p
        for p in _inputs(mocks, "kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p["metadata"]["name"] == "vllm-server"
    )
    blocks = {
        peer["ipBlock"]["cidr"]
        for rule in server["spec"]["ingress"]
        for peer in rule.get("from", [])
        if "ipBlock" in peer
    }
    assert "10.129.0.0/23" in blocks and "192.168.64.0/23" not in blocks


# -- the picker as upstream runs it: its health check, flags, resources ----------------------------------------


def _ingress_cidrs(policy: dict, port: int) -> set[str]:
    """The ipBlock CIDRs a rendered NetworkPolicy admits on `port`."""
    return {
        peer["ipBlock"]["cidr"]
        for rule in policy["spec"]["ingress"]
        if any(entry.get("port") == port for entry in rule.get("ports", []))
        for peer in rule.get("from", [])
        if "ipBlock" in peer
    }


def test_the_pickers_health_check_port_is_its_flag_and_the_port_its_policy_admits_the_checks_on(stack):
    """Both ends of the load balancer's health check of the picker, from the rendered objects: the HealthCheckPolicy
    on the picker's Service names a port; the picker is started on it (--grpc-health-port), probed on it, and its
    NetworkPolicy admits Google's health-check ranges and the proxy-only subnet on it."""
    policy = _one(stack, "HealthCheckPolicy", PICKER_NAME)["spec"]
    assert policy["targetRef"] == {"group": "", "kind": "Service", "name": PICKER_NAME}
    assert _one(stack, "Service", PICKER_NAME)["spec"]["selector"] == PICKER_LABELS  # the target exists
    check = policy["default"]["config"]
    assert check["type"] == "GRPC" and check["grpcHealthCheck"]["portSpecification"] == "USE_FIXED_PORT"
    port = check["grpcHealthCheck"]["port"]
    container = _picker_container(_one(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"])
    assert f"--grpc-health-port={port}" in container["args"]
    assert {"name": "grpc-health", "containerPort": port} in container["ports"]
    assert container["readinessProbe"]["grpc"]["port"] == container["livenessProbe"]["grpc"]["port"] == port
    network_policy = next(
        r.inputs
        for r in stack.sorted_resources()
        if r.type.endswith(":NetworkPolicy") and r.inputs["metadata"]["name"] == PICKER_NAME
    )
    assert {*HEALTH_CHECK_RANGES, ProxyOnlySubnetSpec().range} <= _ingress_cidrs(network_policy, port)
    assert not set(HEALTH_CHECK_RANGES) & _ingress_cidrs(network_policy, EXT_PROC_PORT)  # ext-proc answers none


def test_the_picker_runs_without_pprof_or_a_cpu_limit_and_says_why(stack):
    template = _one(stack, "Deployment", PICKER_NAME)["spec"]["template"]
    container = _picker_container(template["spec"])
    assert "--enable-pprof=false" in container["args"]  # on by default, served on the metrics port
    assert "cpu" not in container["resources"]["limits"] and container["resources"]["limits"]["memory"]
    assert "chart" in template["metadata"]["annotations"]["tpu-stacks.dev/no-cpu-limit-reason"]


def test_the_pickers_configmap_holds_the_charts_scorers_with_their_weights(stack):
    """The ConfigMap the picker reads its --config-file from holds the whole EndpointPickerConfig: the upstream
    chart's default scorers and weights (queue 2, KV cache 2, prefix cache 3: config/charts/epplib/templates/
    _config.yaml @ v1.5.0), the metrics source on vLLM's /metrics and the extractor with the pinned vLLM's names;
    the shipped stack's prefix cache scorer reads the precise producer (tests/vllm/test_kv_events.py has its parts),
    the approximate one the producer the router wires itself. An empty config, a missing scorer or another weight
    would route differently from what docs/vllm.md describes."""
    config_map = _one(stack, "ConfigMap", PICKER_NAME)
    assert set(config_map["data"]) == {CONFIG_FILE}
    document = yaml.safe_load(config_map["data"][CONFIG_FILE])
    # What `kubectl get configmap vllm-epp -o yaml` shows: JSON (which is YAML), two spaces an indent, apiVersion and
    # kind first as in any Kubernetes-style file; the same bytes from one release to the next, so an upgrade does not
    # rewrite the ConfigMap.
    assert config_map["data"][CONFIG_FILE].splitlines()[:3] == [
        "{",
        f'  "apiVersion": "{ROUTER_PICKER.config_api}",',
        '  "kind": "EndpointPickerConfig",',
    ]
    scorers = [fact(f"router.plugin.{name}").value for name in SCORERS]
    precise = plan(gateway=ON).gateway
    assert precise is not None and precise.precise
    assert document == precise.picker_config()
    approximate = plan(gateway={**ON, "prefix_cache": "approximate"}).gateway
    assert approximate is not None and not approximate.precise
    assert approximate.picker_config() == {
        "apiVersion": ROUTER_PICKER.config_api,
        "kind": "EndpointPickerConfig",  # no objectives in the shipped stack: no featureGates
        "plugins": [
            *({"type": scorer} for scorer in scorers),
            {
                "type": fact("epp.plugin.metrics-data-source").value,
                "parameters": {"scheme": "http", "path": "/metrics"},
            },
            {
                "type": fact("epp.plugin.core-metrics-extractor").value,
                "parameters": {"engineConfigs": [{"name": "vllm", **picker_metrics()}]},
            },
        ],
        "schedulingProfiles": [
            {
                "name": "default",
                "plugins": [
                    {"pluginRef": scorer, "weight": weight} for scorer, weight in zip(scorers, (2, 2, 3), strict=True)
                ],
            }
        ],
    }
    # the picker mounts this ConfigMap where its --config-file flag points
    template = _one(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    (volume,) = [v for v in template["volumes"] if "configMap" in v]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"] == PICKER_NAME
    container = _picker_container(template)
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert f"--config-file={mount['mountPath']}/{CONFIG_FILE}" in container["args"]


def test_objectives_turn_on_flow_control_and_its_charts_and_none_turn_it_off():
    """Priorities >= 0 order nothing unless the picker's flowControl gate is on (ledger epp.legacy-admission-
    sheddable): with objectives the EndpointPickerConfig names the gate, and the dashboard draws its queue."""
    with_objectives = plan(gateway={**ON, "objectives": [{"name": "interactive", "priority": 10}]})
    assert with_objectives.gateway.picker_config()["featureGates"] == ["flowControl"]
    assert "featureGates" not in plan(gateway=ON).gateway.picker_config()

    def section(decided):
        sections = vllm_sections(vllm_target(decided, "vllm-hpa", "vllm-tpu", "vllm-tpu"))
        return [w.title for w in sections[-1].widgets]

    titles = section(with_objectives)
    assert any("Flow Control" in title for title in titles)
    assert not any("Flow Control" in title for title in section(plan(gateway=ON)))


def test_the_flow_control_charts_read_what_the_pinned_picker_exports():
    decided = plan(gateway={**ON, "objectives": [{"name": "batch", "priority": -1}]})
    (section,) = [s for s in vllm_sections(vllm_target(decided, "h", "d", "c")) if s.title == "Inference Gateway"]
    queries = [ds.time_series_query.prometheus_query for w in section.widgets for ds in w.xy_chart.data_sets]
    names = {name for query in queries for name in promql_metrics(query)}
    assert {
        "llm_d_epp_flow_control_queue_size",
        "llm_d_epp_flow_control_request_queue_duration_seconds_bucket",
    } <= names
    assert all(publisher(name, [ROUTER, VLLM]) is not None for name in names), names


# -- a public gateway: regional Cloud Armor from sourceRanges ---------------------------------------------------


def _public(tmp_path, ranges):
    return _stack_with(tmp_path, exposure="public", sourceRanges=ranges)


def test_a_public_gateway_attaches_a_regional_armor_policy_of_its_ranges_to_the_pool(tmp_path):
    ranges = [f"198.51.{i}.0/24" for i in range(12)]
    capture_ = _public(tmp_path, ranges)
    gateway = _one(capture_, "Gateway")
    assert gateway["spec"]["gatewayClassName"] == "gke-l7-regional-external-managed"
    (armor,) = capture_.of_type("gcp:compute/regionSecurityPolicy:RegionSecurityPolicy")
    assert armor.inputs["type"] == "CLOUD_ARMOR" and armor.inputs["region"] == "us-central1"
    rules = armor.inputs["rules"]
    allowed = [r for rule in rules if rule["action"] == "allow" for r in rule["match"]["config"]["srcIpRanges"]]
    assert allowed == ranges and all(len(rule["match"]["config"]["srcIpRanges"]) <= 10 for rule in rules)
    assert {rule["match"]["versionedExpr"] for rule in rules} == {"SRC_IPS_V1"}
    (default,) = [rule for rule in rules if rule["priority"] == 2147483647]
    assert default["action"].startswith("deny") and default["match"]["config"]["srcIpRanges"] == ["*"]
    backend = _one(capture_, "GCPBackendPolicy")["spec"]
    assert backend["targetRef"]["name"] == POOL_NAME
    assert backend["default"]["securityPolicy"] == armor.inputs["name"]


def test_behind_a_public_gateway_the_smoke_test_calls_the_service_not_cloud_armor(tmp_path):
    """Cloud Armor admits only sourceRanges, and the smoke pod's request would leave through an address the ranges
    need not hold (403): behind a public gateway it calls the Service, and reads no Gateway."""
    capture_ = _public(tmp_path, ["198.51.100.0/24"])
    (job,) = [r.inputs for r in capture_.sorted_resources() if r.type.endswith(":Job")]
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["SMOKE_URL"].startswith("http://vllm-service.") and "SMOKE_GATEWAY" not in env
    roles = capture_.of_type("kubernetes:rbac.authorization.k8s.io/v1:Role")
    assert [r.inputs["metadata"]["name"] for r in roles] == [PICKER_NAME]  # the picker's own; no Gateway reader


# -- the proxy-only subnet: adopted first, kept on destroy, a found one named ------------------------------------


def test_the_created_proxy_only_subnet_is_kept_on_destroy_and_looked_for_first(stack):
    (subnet,) = stack.of_type("gcp:compute/subnetwork:Subnetwork")
    assert subnet.options.retain_on_delete  # other regional load balancers may use it by then


def _with_found_subnet(subnetworks, cluster=None):
    mocks = RecordingMocks()
    mocks.subnetworks = subnetworks
    pulumi.runtime.set_mocks(mocks, preview=False)
    args = {
        "cluster": cluster or CLUSTER_ARGS,
        "model": "meta-llama/Llama-3.1-70B",
        "gateway": {"enabled": True},
        **KEY,
    }

    @pulumi.runtime.test
    def run():
        return VllmStack("vllm", {**args, "hf_token": pulumi.Output.secret("hf_x")}).kubeconfig

    try:
        run()
    except pulumi.RunError as error:
        return mocks, str(error)
    return mocks, None


DEFAULT_NETWORK_URL = "https://www.googleapis.com/compute/v1/projects/proj/global/networks/default"


def test_an_active_proxy_only_subnet_the_stack_did_not_adopt_stops_up_in_one_line_naming_it():
    found = {"name": "shared-proxy", "ipCidrRange": "10.129.0.0/23", "network": DEFAULT_NETWORK_URL}
    mocks, error = _with_found_subnet([{**found, "networkName": "default"}])
    assert error is not None and "\n" not in error
    assert error.startswith("cluster.gatewayApi.proxyOnlySubnet.existing ")
    assert "shared-proxy" in error and "10.129.0.0/23" in error
    assert mocks.of_type("gcp:compute/subnetwork:Subnetwork") == []  # nothing created
    (call,) = mocks.calls_of("gcp:compute/getSubnetworks:getSubnetworks")
    assert call["filter"] == '(purpose = "REGIONAL_MANAGED_PROXY") (role = "ACTIVE")'
    assert (call["project"], call["region"]) == ("proj", "us-central1")


def test_the_stacks_own_subnet_and_another_networks_do_not_stop_up():
    own = {"name": "tpu-cluster-proxy-only", "ipCidrRange": "192.168.64.0/23", "networkName": "default"}
    other_network = {"name": "elsewhere", "ipCidrRange": "10.9.0.0/23", "networkName": "other-vpc"}
    mocks, error = _with_found_subnet([own, other_network])
    assert error is None, error
    assert len(mocks.of_type("gcp:compute/subnetwork:Subnetwork")) == 1


def test_the_universes_health_check_ranges_are_the_ones_the_policies_admit():
    """S3NS's regional load balancers health-check from their own range (gcp/universe.py cites its firewall-rules
    page); the gateway there admits that range, not Google Cloud's, on the servers' port and the picker's."""
    s3ns = ClusterSpec(
        project="s3ns:proj", location="u-france-east1-a", universe="s3ns", min_version=INFERENCE_GATEWAY_CRDS_FLOOR
    )
    decided = plan_vllm(
        VllmSpec(model="Qwen/Qwen2.5-1.5B-Instruct", gateway=ON, api_key=True),
        s3ns,
        hf_token_given=True,
        api_key_given=True,
    )
    assert decided.gateway.health_check_ranges == universe("s3ns").health_check_ranges == ("177.222.80.0/23",)
    server, picker = network(decided, {"app": "vllm-tpu"})
    for group, port in ((server, 8000), (picker, HEALTH_PORT)):
        assert "177.222.80.0/23" in _peers(group, "ingress", port)
        assert not set(HEALTH_CHECK_RANGES) & _peers(group, "ingress", port)


# -- who reaches an internal gateway: the VPC, so vLLM's API key ------------------------------------------------


def test_the_shipped_internal_gateway_requires_vllms_key_and_the_checks_need_none(stack):
    """The internal class answers the VPC and no source documents Cloud Armor on it: the shipped stack turns vLLM's
    API key on. The key guards only the paths the ledger records (vllm.api-key.guarded-prefixes): the load balancer's
    health check and the picker's scrape stay open, the completion the smoke test sends does not."""
    guarded = ast.literal_eval(fact("vllm.api-key.guarded-prefixes").literal.split("=", 1)[1].strip())
    (server,) = _one(stack, "Deployment", "vllm-tpu")["spec"]["template"]["spec"]["containers"]
    key = next(e for e in server["env"] if e["name"] == "VLLM_API_KEY")
    assert key["valueFrom"]["secretKeyRef"]["key"] == "api_key"
    health = _one(stack, "HealthCheckPolicy", POOL_NAME)["spec"]["default"]["config"]["httpHealthCheck"]
    config = plan(gateway=ON).gateway.picker_config()
    (source,) = [p for p in config["plugins"] if p["type"] == "metrics-data-source"]
    for open_path in (health["requestPath"], source["parameters"]["path"]):
        assert not open_path.startswith(guarded), open_path
    assert "/v1/completions".startswith(guarded)  # hence the smoke test sends the key (tests/test_smoke.py)


def test_an_internal_gateway_without_the_key_is_refused_in_one_line():
    error = refusal(gateway=ON, api_key=False)
    assert error.key == "vllm.apiKey" and "whole VPC" in str(error)


def test_the_route_sends_the_pool_only_what_the_key_guards(stack):
    """vLLM answers completions at /invocations without the key (ledger: vllm.api-key.invocations-unguarded): the
    gateway must not route it, so every path it routes starts with a prefix the key guards."""
    guarded = ast.literal_eval(fact("vllm.api-key.guarded-prefixes").literal.split("=", 1)[1].strip())
    (rule,) = _one(stack, "HTTPRoute", ROUTE_NAME)["spec"]["rules"]
    prefixes = [match["path"]["value"] for match in rule["matches"]]
    assert prefixes and all(prefix.startswith(guarded) for prefix in prefixes), prefixes
    assert not any("/invocations".startswith(prefix) for prefix in prefixes)


def test_on_an_existing_cluster_the_subnet_is_looked_for_in_that_clusters_network():
    existing = {"project": "proj", "location": "us-central1-b", "existing": {"name": "c", "location": "us-central1-b"}}
    found = {"name": "shared-proxy", "ipCidrRange": "10.129.0.0/23", "networkName": "default"}
    _, error = _with_found_subnet([found], cluster=existing)  # the mocks' getCluster answers network `default`
    assert error is not None and "shared-proxy" in error
    _, error = _with_found_subnet([{**found, "networkName": "other-vpc"}], cluster=existing)
    assert error is None, error


def test_every_flag_the_picker_gets_is_one_the_pinned_picker_defines():
    """The picker parses its flags with pflag, which exits on an unknown one (cmd/epp/runner/runner.go @ v1.5.0):
    a flag name the ledger did not read in options.go (say `--None`, from a row that lost its value) crash-loops it.
    zap's flags are controller-runtime's (ledger: epp.flag.zap-encoder)."""
    from tpu_stacks.catalog.upstream import ledger

    defined = {row.value for row in ledger().rows if row.id.startswith("epp.flag.") and row.value} | {"zap-encoder"}
    args = plan(gateway=ON).gateway.picker_args()
    names = [arg.removeprefix("--").split("=", 1)[0] for arg in args]
    assert all(arg.startswith("--") for arg in args) and set(names) <= defined, sorted(set(names) - defined)
    assert len(names) == len(set(names))


def test_the_servers_own_exposure_is_decided_once_in_the_plan():
    """Behind a gateway the Service is ClusterIP whatever `exposure` says (the Gateway is the load balancer); without
    one it is `exposure`. The component's Service, its address and the network contract all read this one answer."""
    assert plan(gateway=ON).service_exposure == "cluster"
    assert plan(gateway=ON, exposure="internal").spec.exposure == "internal"
    assert plan().service_exposure == "internal"
    assert plan(exposure="cluster").service_exposure == "cluster"
    for module in ("component.py", "network.py"):
        text = (ROOT / "components/tpu_stacks/vllm" / module).read_text()
        assert "spec.exposure" not in text, module
