"""Each workload's `network.py`: the contract follows the plan (exposure, source ranges, host network,
metrics, converter), with no resources and no mocks."""

from __future__ import annotations

from tests.clients import CLIENTS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.k8s import metrics_adapter
from tpu_stacks.k8s.connectivity import ANY, External, Group, Hosts, Pods
from tpu_stacks.k8s.platform_flows import (
    KONNECTIVITY_AGENT,
    MANAGED_PROMETHEUS,
    api_endpoint,
    api_server_calls,
    dns,
    metadata_server,
    tpu_device_plugin_metrics,
    tpu_runtime,
    workload_egress,
)
from tpu_stacks.serving.smoke_plan import SMOKE_TEST_LABELS

CLUSTER = ClusterSpec(project="proj", location="us-central1-a")


def _by_name(groups: tuple[Group, ...]) -> dict[str, Group]:
    return {g.name: g for g in groups}


def _ingress(group: Group) -> list[tuple[object, int | None]]:
    return [(f.peer, f.port) for f in group.of("ingress")]


def _vllm(**spec):
    from tests.vllm.test_plan import plan
    from tpu_stacks.vllm.network import network

    return network(plan(**spec), {"app": "vllm"}, [8000])


def test_vllm_behind_an_internal_load_balancer_takes_its_clients_ranges_and_the_smoke_test():
    (server,) = _vllm()
    assert (server.name, server.namespace, server.labels) == ("vllm-server", "vllm", {"app": "vllm"})
    assert _ingress(server) == [
        (External(CLIENTS[0]), 8000),  # never every address: an internal load balancer names its clients
        (Pods("vllm", SMOKE_TEST_LABELS), 8000),
        (MANAGED_PROMETHEUS, 8000),
    ]
    assert server.of("egress") == workload_egress(tpu=True) and tpu_runtime()[0] in server.flows


def test_vllm_public_names_its_source_ranges_and_cluster_exposure_takes_every_pod():
    (public,) = _vllm(exposure="public", source_ranges=["203.0.113.0/24"])
    assert _ingress(public)[0] == (External("203.0.113.0/24"), 8000)
    assert External("0.0.0.0/0") not in [peer for peer, _ in _ingress(public)]
    (cluster,) = _vllm(exposure="cluster")
    assert _ingress(cluster)[0] == (Pods("*", {}), 8000)
    assert not any(isinstance(peer, External) for peer, _ in _ingress(cluster))


def _saxml(**spec):
    from tpu_stacks.saxml.network import network
    from tpu_stacks.saxml.plan import plan_saxml
    from tpu_stacks.saxml.spec import SaxmlSpec

    return _by_name(network(plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **spec), CLUSTER), [8888]))


def test_saxml_host_network_servers_are_hosts_peers_and_have_no_group_of_their_own():
    groups = _saxml()  # the default slice is multi-host: host network
    assert set(groups) == {"sax-admin-server", "sax-http", "sax-publisher"}
    servers = Hosts("Saxml model servers (host network)")
    admin, http = groups["sax-admin-server"], groups["sax-http"]
    assert _ingress(admin) == [(servers, 10000), (Pods("saxml", {"app": "sax-http"}), 10000)]
    assert [(f.peer, f.port) for f in admin.of("egress")][-1] == (servers, 10001)
    assert [(f.peer, f.port) for f in http.of("egress")][-2:] == [
        (Pods("saxml", {"app": "sax-admin-server"}), 10000),
        (servers, 10001),
    ]
    assert _ingress(http) == [
        (External(CLIENTS[0]), 8888),
        (Pods("saxml", {"app": "sax-publisher"}), 8888),
        (Pods("saxml", SMOKE_TEST_LABELS), 8888),
    ]
    publisher = groups["sax-publisher"]
    assert publisher.of("ingress") == () and publisher.of("egress")[-1].peer == Pods("saxml", {"app": "sax-http"})
    assert not any(tpu_runtime()[0] in g.flows for g in groups.values())  # no TPU pod is guarded here


def test_saxml_single_host_servers_are_pods_with_their_own_group_and_the_tpu_runtime():
    groups = _saxml(model="meta-llama/Meta-Llama-3-8B", models=[], exposure="cluster")
    servers = Pods("saxml", {"app": "sax-model-server"})
    model = groups["sax-model-server"]
    assert _ingress(model) == [
        (Pods("saxml", {"app": "sax-admin-server"}), 10001),
        (Pods("saxml", {"app": "sax-http"}), 10001),
        (servers, 8471),
    ]
    assert tpu_runtime()[0] in model.flows and (servers, 8471) in [(f.peer, f.port) for f in model.of("egress")]
    assert _ingress(groups["sax-admin-server"])[0] == (servers, 10000)
    assert _ingress(groups["sax-http"])[0] == (Pods("*", {}), 8888)


def _jetstream(**spec):
    from tpu_stacks.jetstream.network import network
    from tpu_stacks.jetstream.plan import plan_jetstream
    from tpu_stacks.jetstream.spec import JetStreamSpec

    cluster = ClusterSpec(project="proj", location="us-west4", system_pool={"machine_type": "e2-standard-4"})
    plan = plan_jetstream(JetStreamSpec(model="google/gemma-7b-it", zone="us-west4-a", **spec), cluster, True)
    # the ports the component's smoke test calls, as the component hands them over
    from tpu_stacks.gcp.monitoring.plan import plan_monitoring
    from tpu_stacks.jetstream.component import APP, smoke_test
    from tpu_stacks.jetstream.monitoring import jetstream_target
    from tpu_stacks.jetstream.spec import METRICS_PORT

    monitoring = plan_monitoring(jetstream_target(plan, APP, APP, METRICS_PORT), "jetstream")
    smoke = smoke_test(plan, monitoring) if plan.spec.smoke_test else None  # as JetStreamStack decides it
    return _by_name(network(plan, {"app": "jetstream"}, smoke.ports if smoke else ()))


def test_jetstream_scrapes_and_smoke_tests_the_metrics_port_only_when_the_engine_serves_it():
    groups = _jetstream()
    server = groups["jetstream-server"]
    assert _ingress(server) == [
        (Pods("*", {}), 8000),
        (Pods("jetstream", SMOKE_TEST_LABELS), 8000),
        (Pods("jetstream", SMOKE_TEST_LABELS), 9090),
        (MANAGED_PROMETHEUS, 9090),
    ]
    assert server.of("egress") == workload_egress(tpu=True)
    converter = groups["jetstream-converter"]
    assert converter.of("ingress") == () and converter.of("egress") == workload_egress(tpu=False)
    quiet = _jetstream(monitoring={"enabled": False})["jetstream-server"]
    assert _ingress(quiet) == [(Pods("*", {}), 8000), (Pods("jetstream", SMOKE_TEST_LABELS), 8000)]


def test_the_jetstream_download_flow_has_no_converter_group():
    assert set(_jetstream(flow="download")) == {"jetstream-server"}


def test_ray_workers_reach_the_tpu_runtime_and_the_head_takes_the_job_api_only_from_its_callers():
    from tests.raytrain.test_plan import plan_of
    from tpu_stacks.raytrain.network import network
    from tpu_stacks.raytrain.pods import submitter_labels

    groups = _by_name(network(plan_of()))
    ray = Pods("raytrain", {"tpu-stacks.dev/ray-cluster": "maxtext-tpu-cluster"})
    head, worker, submitter = groups["ray-head"], groups["ray-worker"], groups["ray-job-submitter"]
    # The job API runs code as the namespace's account without authentication: never from any pod. GKE's Ray
    # add-on (the default) reaches the head through konnectivity-agent only: no operator label is admitted.
    submitter_pods = Pods("raytrain", submitter_labels(plan_of()))
    assert _ingress(head) == [
        (ray, None),
        (submitter_pods, 8265),
        (KONNECTIVITY_AGENT, 8265),
        (MANAGED_PROMETHEUS, 8080),
    ]
    assert _ingress(worker) == [(ray, None), (MANAGED_PROMETHEUS, 8080)]
    assert tpu_runtime()[0] in worker.flows and tpu_runtime()[0] not in head.flows
    # the TPU webhook points each TPU host's dashboard agent at the node's device plugin (port-only, like 8353)
    assert tpu_device_plugin_metrics()[0] in worker.flows and tpu_device_plugin_metrics()[0] not in head.flows
    head_pods = Pods("raytrain", {**ray.labels, "tpu-stacks.dev/ray-node": "head"})
    assert [(f.peer, f.port) for f in submitter.of("egress")][-1] == (head_pods, 8265)
    assert submitter.of("ingress") == ()


def test_a_self_installed_kuberay_is_admitted_from_its_namespace_only():
    """A label is no identity (any pod of any namespace may carry it): the operator's namespace is always named."""
    from tests.raytrain.test_plan import TUTORIAL, plan_of
    from tpu_stacks.raytrain.network import network

    own = {**TUTORIAL["cluster"], "kuberay": {"namespace": "ray-system"}}
    decided = plan_of(cluster=own)
    head = _by_name(network(decided))["ray-head"]
    operator = Pods("ray-system", {"app.kubernetes.io/component": "kuberay-operator"})
    assert (operator, 8265) in _ingress(head)
    assert not [peer for peer, _ in _ingress(head) if peer.namespace == "*" or peer == KONNECTIVITY_AGENT]
    assert decided.cluster.spec.addons.ray_operator is False  # GKE's add-on stays off beside the user's own


def test_the_metrics_adapter_is_called_by_the_api_server_and_calls_the_api_endpoint():
    (group,) = metrics_adapter.network({"k8s-app": "adapter"})
    assert (group.name, group.namespace) == ("custom-metrics-adapter", "custom-metrics")
    assert group.flows == (*api_server_calls(6443), *dns(), *metadata_server(), *api_endpoint())
    assert any(f.peer == ANY and f.port == 443 and f.direction == "egress" for f in group.flows)


def test_every_workload_states_its_contract_in_a_network_module_of_the_same_name():
    import importlib

    for workload in ("vllm", "saxml", "jetstream", "raytrain"):
        module = importlib.import_module(f"tpu_stacks.{workload}.network")
        assert callable(module.network), workload


def test_without_a_smoke_test_no_server_admits_smoke_test_pods():
    """`smokeTest: false`: no Job, so no rule for its pods (the analyzer would report a peer matching no pod)."""
    from tests.vllm.test_plan import plan
    from tpu_stacks.saxml.network import network as saxml_network
    from tpu_stacks.saxml.plan import plan_saxml
    from tpu_stacks.saxml.spec import SaxmlSpec
    from tpu_stacks.vllm.network import network as vllm_network

    groups = [
        *vllm_network(plan(), {"app": "vllm"}),
        *saxml_network(plan_saxml(SaxmlSpec(source_ranges=CLIENTS), CLUSTER)),
    ]
    assert not [f for g in groups for f in g.flows if getattr(f.peer, "labels", None) == SMOKE_TEST_LABELS]
    off = _jetstream(smoke_test=False)["jetstream-server"]
    assert (Pods("jetstream", SMOKE_TEST_LABELS), 8000) not in _ingress(off)
