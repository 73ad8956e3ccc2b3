"""gcp/monitoring/dashboards.py's choices on planned targets (each planned once): the endpoint picker's section per
picker release and per gate, the replica charts and cards, and the TPU section of a JobSet against a Deployment.

Sources: the pickers' metric names (ledger: router.metric.subsystem `llm_d_epp`, router.metric.prefix-hit-ratio,
router.metric.kv-index-hits; epp.metric.subsystem.pool `inference_pool`, epp.metric.pool-ready-pods,
epp.metric.scheduler-e2e-duration-seconds, epp.metric.flow-control-queue-size); docs/monitoring.md's sections
(the gateway's p50/p90 prefix match and p50/p99 picking latency; docs/vllm.md, Priorities: Flow Control's queue by
priority); kube-state-metrics' HPA and Deployment families (kube_horizontalpodautoscaler_status_current_replicas,
kube_deployment_status_replicas_available); a Deployment's `spec.replicas` defaulting to 1
(https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#replicas); JobSet's pod names,
`<jobset>-<replicatedJob>-<jobIndex>-<podIndex>-<suffix>` (an Indexed Job `<jobset>-<replicatedJob>-<jobIndex>`
names its pods `<job>-<index>-<suffix>`: https://jobset.sigs.k8s.io/docs/concepts/ and
https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode); a scorecard's BELOW threshold
turning at `value <= threshold`, so a card red below N draws N - 1
(https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards#Threshold)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.clients import CLIENTS
from tpu_stacks.catalog.gke_versions import INFERENCE_GATEWAY_CRDS_FLOOR
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.gcp.monitoring.dashboards import dashboard
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.saxml.monitoring import saxml_target
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import SaxmlSpec
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

SEL = 'cluster="tpu-cluster",namespace="vllm"'
CLUSTER = ClusterSpec(project="proj", location="us-central1-b", min_version=INFERENCE_GATEWAY_CRDS_FLOOR)


def vllm(**spec):
    """A vLLM stack's monitoring plan (HPA `vllm-hpa`, Deployment and container `vllm-tpu`); with the gateway on, its
    clients named by vLLM's key (an internal gateway refuses source ranges)."""
    clients = {"api_key": True} if (spec.get("gateway") or {}).get("enabled") else {"source_ranges": CLIENTS}
    spec = {"model": "meta-llama/Llama-3.1-70B", **clients, **spec}
    plan = plan_vllm(VllmSpec(**spec), CLUSTER, hf_token_given=True, api_key_given=True)
    return plan_monitoring(vllm_target(plan, "vllm-hpa", "vllm-tpu", "vllm-tpu"), "vllm")


def saxml():
    spec = SaxmlSpec(source_ranges=["10.0.0.0/8"], model="meta-llama/Meta-Llama-3-8B", models=[])
    plan = plan_saxml(spec, ClusterSpec(project="p", location="us-central1-a"))
    return saxml_target(plan, "sax-model-server-set", "sax-model-server")


def _picker(**gateway) -> dict:
    planned = vllm(gateway={"enabled": True, **gateway})
    section = next(s for s in planned.dashboard.sections if s.title == "Inference Gateway")
    return {"subtitle": section.subtitle, **{w.title: w for w in section.widgets}}


def _queries(widget) -> list[str]:
    return [d.time_series_query.prometheus_query for d in widget.xy_chart.data_sets]


@pytest.fixture(scope="module")
def router() -> dict:
    """llm-d's router, the default picker (docs/vllm.md `gateway.picker`), its prefix cache precise by default."""
    return _picker()


@pytest.fixture(scope="module")
def epp_with_objectives() -> dict:
    return _picker(picker="epp-v1.5.0", objectives=[{"name": "chat"}])


def test_the_routers_section_reads_its_own_names(router) -> None:
    assert router["subtitle"] == "endpoint picker llm-d-router-endpoint-picker v0.10.0"
    assert _queries(router["Pool: ready endpoints"]) == [f"max(llm_d_epp_ready_endpoints{{{SEL}}})"]
    assert _queries(router["Prefix cache: matched fraction of each prompt"]) == [
        f"histogram_quantile({q}, sum by (le) (rate(llm_d_epp_prefix_indexer_hit_ratio_bucket{{{SEL}}}[5m])))"
        for q in (0.5, 0.9)
    ]
    assert [d.legend_template for d in router["Picking latency"].xy_chart.data_sets] == ["p50", "p99"]
    assert _queries(router["Picking latency"]) == [
        f"histogram_quantile({q}, sum by (le) (rate(llm_d_epp_scheduler_e2e_duration_seconds_bucket{{{SEL}}}[5m])))"
        for q in (0.5, 0.99)
    ]
    assert not any(title.startswith("Flow Control") for title in router)  # no objectives: the gate is off


def test_the_precise_prefix_cache_draws_the_kv_block_index(router) -> None:
    lookups = _queries(router["Precise prefix cache: cached blocks found per request"])
    assert lookups == [
        f"sum (rate(llm_d_router_epp_kv_cache_index_lookup_hits_total{{{SEL}}}[5m])) / "
        f"sum (rate(llm_d_router_epp_kv_cache_index_lookup_requests_total{{{SEL}}}[5m]))"
    ]
    assert "KV events: subscribers and errors" in router
    approximate = _picker(prefixCache="approximate")
    assert not any(title.startswith(("Precise", "KV-block", "KV events")) for title in approximate)
    assert "Prefix cache: matched fraction of each prompt" in approximate


def test_v1_5_0_reads_its_names_and_draws_flow_control_with_objectives(epp_with_objectives) -> None:
    section = epp_with_objectives
    assert section["subtitle"] == "endpoint picker epp v1.5.0"
    assert _queries(section["Pool: ready endpoints"]) == [f"max(inference_pool_ready_pods{{{SEL}}})"]
    assert not any(title.startswith(("Prefix cache", "Precise")) for title in section)  # v1.5.0 has no such metric
    assert _queries(section["Flow Control: queued requests, by priority"]) == [
        f"sum by (priority) (inference_extension_flow_control_queue_size{{{SEL}}})"
    ]
    assert "Flow Control: time in queue (p99), by priority" in section


def test_an_hpa_charts_its_current_and_desired_replicas_against_its_maximum() -> None:
    widgets = {w.title: w for w in vllm(replicas={"min": 1, "max": 5}).dashboard.widgets}
    chart = widgets["Replicas (HPA 1..5)"]
    hpa = 'cluster="tpu-cluster",horizontalpodautoscaler="vllm-hpa",namespace="vllm"'
    assert _queries(chart) == [
        f"kube_horizontalpodautoscaler_status_current_replicas{{{hpa}}}",
        f"kube_horizontalpodautoscaler_status_desired_replicas{{{hpa}}}",
    ]
    assert [(t.value, t.color) for t in chart.xy_chart.thresholds] == [(5, "RED")]
    card = widgets["Replicas ready"]
    assert [(t.value, t.label) for t in card.scorecard.thresholds] == [(0, "fewer than 1")]  # the HPA's minimum


@pytest.fixture(scope="module")
def fixed():
    return vllm(replicas={"min": 3, "max": 3})


def test_fixed_replicas_chart_and_card_the_deployment(fixed) -> None:
    widgets = {w.title: w for w in fixed.dashboard.widgets}
    dep = 'cluster="tpu-cluster",deployment="vllm-tpu",namespace="vllm"'
    assert _queries(widgets["Replicas available (of 3)"]) == [
        f"kube_deployment_status_replicas_available{{{dep}}}",
        f"kube_deployment_spec_replicas{{{dep}}}",
    ]
    card = widgets["Replicas ready"]
    assert (
        card.scorecard.time_series_query.prometheus_query == f"sum(kube_deployment_status_replicas_available{{{dep}}})"
    )
    assert [(t.value, t.label, t.direction) for t in card.scorecard.thresholds] == [(2, "fewer than 3", "BELOW")]


def test_a_deployment_without_a_count_wants_kubernetes_default_one(fixed) -> None:
    target = dataclasses.replace(fixed.target, replicas=None)
    card = next(w for w in dashboard(target).widgets if w.title == "Replicas ready")
    assert [(t.value, t.label) for t in card.scorecard.thresholds] == [(0, "fewer than 1")]


def test_no_deployment_no_replica_card(fixed) -> None:
    target = dataclasses.replace(fixed.target, deployment=None, replicas=None)
    assert "Replicas ready" not in {w.title for w in dashboard(target).widgets}


def test_a_deployments_hbm_is_one_ratio_for_the_workload(fixed) -> None:
    chart = next(w for w in fixed.dashboard.widgets if w.title == "HBM used / total, whole workload")
    sel = 'cluster_name="tpu-cluster",container_name=~"vllm-tpu",namespace_name="vllm"'
    assert _queries(chart) == [
        f"sum by (namespace_name) (kubernetes_io:container_accelerator_memory_used{{{sel}}}) / "
        f"sum by (namespace_name) (kubernetes_io:container_accelerator_memory_total{{{sel}}})"
    ]
    assert chart.xy_chart.data_sets[0].legend_template == "all TPU pods"
    assert [t.value for t in chart.xy_chart.thresholds] == [0.95]  # hbmFraction's default (docs/monitoring.md)


@pytest.fixture(scope="module")
def jobset_board():
    return {w.title: w for w in dashboard(saxml()).widgets}


def test_a_jobsets_hbm_is_per_slice_read_off_the_pod_names(jobset_board) -> None:
    chart = jobset_board["HBM used / total per slice"]
    (query,) = _queries(chart)
    assert query.startswith("sum by (slice) (label_replace(kubernetes_io:container_accelerator_memory_used{")
    assert chart.xy_chart.data_sets[0].legend_template == "slice ${slice}"
    pattern = re.search(r'"pod_name", "([^"]+)"\)', query).group(1)
    # Slice 1, host 3 of the JobSet's replicated job `sax-model-server` (PromQL's regular expressions are anchored).
    assert re.fullmatch(pattern, "sax-model-server-set-sax-model-server-1-3-x7k2p").group(1) == "1"
    assert re.fullmatch(pattern, "sax-model-server-set-sax-model-server-12-0-abcde").group(1) == "12"
    assert re.fullmatch(pattern, "other-set-sax-model-server-1-3-x7k2p") is None


def test_a_jobsets_card_is_red_below_its_slices(jobset_board) -> None:
    card = jobset_board["Slices ready"]
    js = 'cluster="tpu-cluster",jobset_name="sax-model-server-set",namespace="saxml"'
    assert card.scorecard.time_series_query.prometheus_query == f"sum(kube_jobset_ready_replicas{{{js}}})"
    assert [(t.value, t.label, t.direction) for t in card.scorecard.thresholds] == [(1, "fewer than 2", "BELOW")]
    assert "Replicas ready" not in jobset_board  # no Deployment
