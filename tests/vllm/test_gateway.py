"""`vllm.gateway`: GKE Inference Gateway in front of the replicas, decided purely (gateway_plan) and declared under
mocks (gateway.py, the cluster's Gateway API and proxy-only subnet). Refusals are tested with inputs that break
each rule, and the resources against the objects they must agree with (pods, ports, Services)."""

import shutil
from pathlib import Path

import pulumi
import pytest
import yaml

from tests.clients import CLIENTS
from tests.mocks import capture
from tests.shipped import shipped
from tpu_stacks.catalog.engines import EPP, VLLM, EngineVersion, Metric
from tpu_stacks.catalog.gke_versions import INFERENCE_GATEWAY_CRDS_FLOOR
from tpu_stacks.catalog.inference_gateway import (
    CLASSES,
    EXT_PROC_PORT,
    EXTERNAL_CLASS,
    HEALTH_CHECK_RANGES,
    INTERNAL_CLASS,
    PICKER_CONFIG_API,
)
from tpu_stacks.catalog.published import publisher
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.cluster.spec import ClusterSpec, ProxyOnlySubnetSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring.dashboards import vllm_sections
from tpu_stacks.k8s.crd_files import INFERENCE_OBJECTIVE_CRD, crd_document
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks.vllm.gateway_plan import (
    MODEL_SERVER_PROTOCOL,
    PICKER_LABELS,
    PICKER_NAME,
    POOL_NAME,
    check_single_host,
    picker_metrics,
)
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.network import network
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import GatewaySpec, VllmSpec
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.monitoring import promql_metrics

ROOT = Path(__file__).resolve().parents[2]

CLUSTER = ClusterSpec(project="proj", location="us-central1-b", min_version=INFERENCE_GATEWAY_CRDS_FLOOR)
ON = {"enabled": True}


def plan(cluster: ClusterSpec = CLUSTER, **spec):
    return plan_vllm(
        VllmSpec(**{"model": "meta-llama/Llama-3.1-70B", "source_ranges": CLIENTS, **spec}),
        cluster,
        hf_token_given=True,
        api_key_given=False,
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


def test_a_public_gateway_is_refused_in_one_line_naming_both_ways_out():
    """sourceRanges on an L7 gateway would need Cloud Armor, which GKE does not list for the regional external
    class (catalog.inference_gateway.CLASSES): refused, not built unenforced."""
    error = refusal(gateway=ON, exposure="public", source_ranges=["203.0.113.0/24"])
    assert (error.key, error.value) == ("vllm.exposure", "public")
    assert "exposure internal" in str(error) and "sourceRanges" in str(error) and "\n" not in str(error)
    # the way out it names plans: the gateway off, the public L4 load balancer with the ranges
    assert plan(exposure="public", source_ranges=["203.0.113.0/24"]).gateway is None


def test_the_spec_names_the_documented_classes_and_the_plan_offers_the_internal_one():
    field = GatewaySpec.model_fields["class_name"]
    assert set(field.annotation.__args__[0].__args__) == {INTERNAL_CLASS, EXTERNAL_CLASS}
    assert CLASSES == {"internal": INTERNAL_CLASS}


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"exposure": "cluster"}, "vllm.exposure"),
        ({"gateway": {**ON, "className": "gke-l7-regional-external-managed"}}, "vllm.gateway.className"),
        (
            {
                "gateway": {**ON, "className": "gke-l7-regional-external-managed"},
                "exposure": "public",
                "source_ranges": ["203.0.113.0/24"],
            },
            "vllm.exposure",
        ),
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
    assert config["apiVersion"] == PICKER_CONFIG_API and config["kind"] == "EndpointPickerConfig"
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


def test_the_picker_is_pinned_hardened_and_may_read_what_it_watches(stack):
    pod = _one(stack, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == f"{EPP.images[0]}:{EPP.version}"
    assert container["securityContext"]["readOnlyRootFilesystem"] and pod["automountServiceAccountToken"]
    rules = {
        (g, r)
        for rule in _one(stack, "Role", PICKER_NAME)["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    assert {("", "pods"), ("inference.networking.k8s.io", "inferencepools")} <= rules
    binding = _one(stack, "RoleBinding", PICKER_NAME)
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"] == PICKER_NAME


def test_route_gateway_and_gke_policies_point_at_the_pool(stack):
    route = _one(stack, "HTTPRoute")["spec"]
    gateway = _one(stack, "Gateway")
    assert route["parentRefs"] == [{"name": gateway["metadata"]["name"]}]
    assert route["rules"][0]["backendRefs"][0]["name"] == POOL_NAME
    assert gateway["spec"]["gatewayClassName"] == "gke-l7-rilb"
    health = _one(stack, "HealthCheckPolicy")["spec"]
    assert health["targetRef"]["kind"] == "InferencePool" and health["default"]["config"]["httpHealthCheck"] == {
        "requestPath": "/health",
        "portSpecification": "USE_FIXED_PORT",
        "port": 8000,
    }
    backend = _one(stack, "GCPBackendPolicy")["spec"]
    assert backend["targetRef"]["name"] == POOL_NAME and "securityPolicy" not in backend["default"]  # internal


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


def _with_objectives(tmp_path, objectives):
    """The shipped vllm-gateway stack with `gateway.objectives` set, run as `tpu-stacks plan` runs it."""
    for file in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / file, tmp_path / file)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    document = yaml.safe_load((ROOT / "Pulumi.vllm-gateway.yaml").read_text())
    document["config"]["tpu-stacks:vllm"]["gateway"]["objectives"] = objectives
    (tmp_path / "Pulumi.objectives.yaml").write_text(yaml.safe_dump(document))
    capture_ = run_program(tmp_path, "objectives", preview=False)
    assert capture_.error is None, capture_.error
    return capture_


def test_objectives_come_with_their_crd_which_they_and_the_picker_wait_for(tmp_path):
    capture_ = _with_objectives(tmp_path, [{"name": "interactive", "priority": 10}])
    (crd,) = capture_.of_type("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition")
    upstream = crd_document(INFERENCE_OBJECTIVE_CRD)
    assert crd.inputs["metadata"]["name"] == upstream["metadata"]["name"]
    assert crd.inputs["spec"]["versions"][0]["schema"] == upstream["spec"]["versions"][0]["schema"]  # unchanged
    assert crd.options.retain_on_delete  # deleting a CRD deletes every object of its kind in the cluster
    (objective,) = capture_.of_type("kubernetes:inference.networking.x-k8s.io/v1alpha2:InferenceObjective")
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
    assert {decided.gateway.proxy_range, *HEALTH_CHECK_RANGES} <= _peers(picker, "ingress", EXT_PROC_PORT)
    assert str({"app": "vllm-tpu"}) in _peers(picker, "egress", 8000)
    assert len(network(plan(), {"app": "vllm-tpu"})) == 1  # no picker without a gateway


def test_the_dashboard_draws_the_pickers_metrics_only_behind_a_gateway():
    with_gateway = vllm_sections(vllm_target(plan(gateway=ON), "vllm-hpa", "vllm-tpu", "vllm-tpu"))
    assert with_gateway[-1].title == "Inference Gateway"
    queries = [ds.time_series_query.prometheus_query for w in with_gateway[-1].widgets for ds in w.xy_chart.data_sets]
    # every selector of every query, read from the query text (not from the catalogue): each names a metric the
    # pinned picker exports, and the section charts the pool's own gauges
    names = {name for query in queries for name in promql_metrics(query)}
    assert {"inference_pool_average_queue_size", "inference_pool_ready_pods"} <= names
    assert all(publisher(name, [EPP]) is not None for name in names), names
    assert publisher("inference_pool_made_up", [EPP]) is None
    without = vllm_sections(vllm_target(plan(), "vllm-hpa", "vllm-tpu", "vllm-tpu"))
    assert "Inference Gateway" not in [section.title for section in without]


def test_an_adopted_proxy_only_subnet_is_not_created_and_its_range_reaches_the_policy():
    cluster = {
        **CLUSTER_ARGS,
        "mode": "autopilot",
        "location": "us-central1",
        "gateway_api": {"proxy_only_subnet": {"existing": "shared-proxy", "range": "10.129.0.0/23"}},
    }
    args = {"cluster": cluster, "model": "meta-llama/Llama-3.1-70B", "gateway": {"enabled": True}}
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
