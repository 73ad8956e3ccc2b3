"""Multi-host vLLM (a RayService) is watched through Ray: every chart and alert reads a name Ray Serve or vLLM
exports through Ray at the pinned versions, the dashboard passes the offline plan's checks (the Monitoring API's
Dashboard schema, the grid, legends, the catalogue) and reads back unchanged, and the numbers drawn are the plan's.

The plan here is the 70B tutorial's, moved onto the 405B model's sized v6e 4x8 slice (8 hosts): the vllm-405b
stack's own plan is checked by the shipped-stack tests once it exists.
"""

from __future__ import annotations

import json

import pytest

from tests.clients import CLIENTS
from tpu_stacks.catalog.engines.ray import RAY, RAY_SERVE, through_ray
from tpu_stacks.catalog.engines.record import Metric
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.published import publisher
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring import rayserve
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.sizing import ServingRequest, judge
from tpu_stacks.vllm.monitoring_multihost import multihost_target
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.monitoring import check_dashboard, check_monitoring, engines_in, known_prometheus_metrics

from ..preview.test_dashboard_check import record
from .test_metrics_exist import SELECTOR
from .test_read_back import api_answer, provider_sees_a_change

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")
MODEL = "meta-llama/Llama-3.1-405B-Instruct"
WORKER = "ray-worker"


def multihost_plan(**spec):
    plan = plan_vllm(
        VllmSpec(**{"model": "meta-llama/Llama-3.1-70B", "source_ranges": CLIENTS, **spec}),
        CLUSTER,
        hf_token_given=True,
        api_key_given=False,
    )
    model = lookup_model(MODEL)
    verdict = judge(ServingRequest(model=model), slice_shape(generation("v6e"), "4x8"))
    return plan.model_copy(update={"verdict": verdict, "model": model})


def monitored(target_ongoing_requests=None, **spec):
    target = multihost_target(multihost_plan(**spec), WORKER, target_ongoing_requests=target_ongoing_requests)
    return plan_monitoring(target, "vllm")


def names_read(planned) -> list[str]:
    """The metric names of every dashboard query and alert condition, read off the JSON sent."""
    found = []

    def walk(node, key=""):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif key == "prometheusQuery":
            found.extend(SELECTOR.findall(node))

    walk(json.loads(planned.dashboard.to_json()))
    for alert in planned.alerts:
        found.extend(SELECTOR.findall(alert.query))
    return found


def board_record(planned):
    return record("gcp:monitoring/dashboard:Dashboard", {"dashboardJson": planned.dashboard.to_json()})


def test_every_metric_read_has_a_publisher_with_a_source():
    planned = monitored(target_ongoing_requests=32, replicas={"min": 1, "max": 3})
    read = names_read(planned)
    assert {"ray_serve_num_http_requests_total", "ray_serve_deployment_replica_healthy"} <= set(read)
    assert any(name.startswith("ray_vllm_") for name in read)
    for name in read:
        found = publisher(name, [RAY_SERVE])
        assert found is not None, name
        assert found.by and found.source.startswith("https://"), found
    # vLLM's own names and the Ray Train entry's are not what this mode exports
    assert not [n for n in read if n.startswith("vllm:")]
    ray_train_only = [n for n in read if publisher(n, [RAY]) is None]
    assert "ray_serve_num_http_requests_total" in ray_train_only


def test_the_dashboard_passes_the_plans_check_and_fails_it_without_the_ray_serve_entry():
    planned = monitored(target_ongoing_requests=32, replicas={"min": 1, "max": 3})
    board = board_record(planned)
    assert check_dashboard(board, known_prometheus_metrics([RAY_SERVE]), set(), "ray") == []
    # The same board against the single-host vLLM catalogue: every Ray name is flagged
    problems = check_dashboard(board, known_prometheus_metrics([VLLM]), set(), "vllm")
    assert problems and all("is not exported by vllm" in p.message for p in problems)
    assert any("ray_serve_num_http_requests_total" in p.message for p in problems)


def test_the_dashboard_reads_back_unchanged():
    sent = monitored(target_ongoing_requests=32, replicas={"min": 1, "max": 3}).dashboard.to_json()
    assert json.loads(sent) == api_answer(json.loads(sent))
    assert not provider_sees_a_change(sent)


def test_a_rayservice_in_a_plan_brings_the_ray_serve_catalogue():
    service = record("kubernetes:ray.io/v1:RayService", {"spec": {}}, name="vllm")
    board = board_record(monitored())
    capture = Capture(config=None, preview=False, resources=[service, board])  # type: ignore[arg-type]
    assert RAY_SERVE in engines_in(capture)
    assert check_monitoring(capture) == []
    without = Capture(config=None, preview=False, resources=[board])  # type: ignore[arg-type]
    assert engines_in(without) == [] and check_monitoring(without)  # no RayService: nothing exports them


@pytest.mark.parametrize(("low", "high"), [(1, 1), (1, 4), (2, 5)])
def test_the_numbers_drawn_are_the_plans(low, high):
    planned = monitored(target_ongoing_requests=24, replicas={"min": low, "max": high}, startupMinutes=60)
    widgets = {w.title: w for w in planned.dashboard.widgets}
    replicas = widgets[f"Serve replicas, one slice each ({low}..{high})"]
    assert {(t.value, t.direction) for t in replicas.xy_chart.thresholds} == {(high, "ABOVE"), (low, "BELOW")}
    workers = widgets["Ray TPU worker pods ready (8 hosts per slice)"]
    assert workers.xy_chart.thresholds[0].value == low * 8
    card = widgets["Serve replicas healthy"]
    assert card.scorecard.thresholds[0].value == low - 1
    alerts = {a.id: a for a in planned.alerts}
    assert alerts["serving-pods-not-ready"].minutes == 65 and f"({low} - sum(" in alerts["serving-pods-not-ready"].query
    in_flight = widgets["Requests in flight per replica, and queued"]
    if high > low:
        assert in_flight.xy_chart.thresholds[0].value == 24
        assert "> 24)" in alerts["queue-above-target-at-max"].query
        assert f">= {high})" in alerts["queue-above-target-at-max"].query
    else:  # a fixed count: no autoscaler to watch
        assert in_flight.xy_chart.thresholds == () and "queue-above-target-at-max" not in alerts


def test_the_alerts_of_the_mode_and_their_defaults():
    planned = monitored(target_ongoing_requests=32, replicas={"min": 1, "max": 3})
    state = {a.id: a.enabled for a in planned.alerts}
    assert state == {
        "serving-pods-not-ready": True,
        "serve-errors": True,
        "queue-above-target-at-max": True,
        "tpu-hbm-near-full": False,  # the engine reserves HBM for the KV cache
        "tpu-nodes-idle": True,
        "pods-restarting": True,
    }
    errors = next(a for a in planned.alerts if a.id == "serve-errors")
    assert 'error_code=~"5.."' in errors.query and errors.query.endswith(f"> {rayserve.ERROR_RATIO:g}")
    not_ready = next(a for a in planned.alerts if a.id == "serving-pods-not-ready")
    assert "absent(ray_serve_deployment_replica_healthy{" in not_ready.query  # fires before any replica reports
    with pytest.raises(UserError) as error:
        monitored(monitoring={"alerts": {"serve-error": False}})
    assert "did you mean 'serve-errors'" in str(error.value)
    off = monitored(monitoring={"alerts": {"serve-errors": False}})
    assert {a.id: a.enabled for a in off.alerts}["serve-errors"] is False


def test_queries_scope_the_app_and_the_engine_deployment():
    planned = monitored(target_ongoing_requests=32, replicas={"min": 1, "max": 3})
    text = planned.dashboard.to_json()
    assert 'application=\\"llm\\"' in text  # the proxy's own health checks carry application=""
    assert 'deployment=~\\"LLMServer:.*\\"' in text
    assert 'container=\\"ray-worker\\"' in text and 'container_name=~\\"ray-worker\\"' in text


def test_a_single_host_plan_is_refused():
    plan = plan_vllm(VllmSpec(model="meta-llama/Llama-3.1-70B", source_ranges=CLIENTS), CLUSTER, True, False)
    with pytest.raises(ValueError, match="one host"):
        multihost_target(plan, WORKER)


# Names Ray's own Serve LLM Grafana dashboard queries (ray-2.60.0 wheel, python/ray/dashboard/modules/metrics/
# dashboards/serve_llm_dashboard_panels.py): a model of the export names that is not ours.
RAY_DASHBOARD_VLLM_NAMES = (
    "ray_vllm_num_requests_running",
    "ray_vllm_num_requests_waiting",
    "ray_vllm_kv_cache_usage_perc",
    "ray_vllm_generation_tokens_total",
    "ray_vllm_prompt_tokens_total",
    "ray_vllm_request_success_total",
    "ray_vllm_time_to_first_token_seconds",
    "ray_vllm_request_time_per_output_token_seconds",
    "ray_vllm_e2e_request_latency_seconds",
    "ray_vllm_request_queue_time_seconds",
    "ray_vllm_request_prompt_tokens",
)


def test_names_through_ray_are_the_ones_rays_own_dashboard_reads():
    """`through_ray` on every vLLM name the catalogue shares with Ray's dashboard gives Ray's exact name; the
    vLLM-side name (with `:`) is never what Ray exports."""
    derived = {through_ray(m).name: m.name for m in VLLM.metrics}
    shared = [name for name in RAY_DASHBOARD_VLLM_NAMES if name in derived]
    assert len(shared) >= 8, shared  # queue, running, tokens, successes, TTFT, e2e, queue time, prompt lengths
    for name in shared:
        assert RAY_SERVE.metric(name) is not None
        assert derived[name].replace(":", "_") == name.removeprefix("ray_")
    counter = through_ray(Metric(name="vllm:prompt_tokens_total", kind="counter"))
    assert counter == Metric(name="ray_vllm_prompt_tokens_total", kind="counter")
    assert RAY_SERVE.metric("ray_vllm:num_requests_waiting") is None
    assert publisher("ray_vllm:num_requests_waiting", [RAY_SERVE]) is None


def test_engine_metric_names_what_the_pinned_vllm_exports_through_ray():
    assert rayserve.engine_metric("vllm:num_requests_waiting") == "ray_vllm_num_requests_waiting"
    with pytest.raises(KeyError):
        rayserve.engine_metric("vllm:made_up")
    with pytest.raises(KeyError):  # renamed in vLLM 0.9: the pinned engine no longer exports it
        rayserve.engine_metric("vllm:gpu_cache_usage_perc")
    cache = rayserve.engine_metric(rayserve.KV_CACHE_USAGE)
    assert cache == "ray_vllm_kv_cache_usage_perc"
    assert RAY_SERVE.metric(cache) is not None
