"""Pure monitoring decisions: the HPA line follows the spec the HPA is built from, alerts obey the user's
overrides and refuse unknown ids, the dashboard JSON is deterministic, links follow the universe."""

from __future__ import annotations

import json

import pytest

from tests.clients import CLIENTS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring.links import dashboard_url, first_links
from tpu_stacks.gcp.monitoring.model import Text, Widget, XyChart
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.jetstream.plan import plan_jetstream
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.vllm.monitoring import vllm_target
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")


def vllm(**spec):
    plan = plan_vllm(
        VllmSpec(**{"model": "meta-llama/Llama-3.1-70B", "source_ranges": CLIENTS, **spec}),
        CLUSTER,
        hf_token_given=True,
        api_key_given=False,
    )
    return plan_monitoring(vllm_target(plan, "vllm-hpa", "vllm-tpu", "vllm-tpu"), "vllm")


def chart(plan, title_start):
    return next(w for w in plan.dashboard.widgets if w.title.startswith(title_start))


@pytest.mark.parametrize("target", [3, 7.5, 42])
def test_the_queue_line_is_the_spec_target_the_hpa_uses(target):
    planned = vllm(replicas={"min": 1, "max": 5}, autoscaling={"target": target})
    (line,) = chart(planned, "Requests waiting").thresholds
    assert line.value == target
    assert chart(planned, "KV cache usage").thresholds == ()
    alert = next(a for a in planned.alerts if a.id == "queue-above-target-at-max")
    assert f"> {target:g})" in alert.query and ">= 5)" in alert.query
    assert alert.duration == "600s"  # queueMinutes default 10


def test_an_hpa_on_the_kv_cache_draws_its_target_on_the_cache_chart_and_has_no_queue_alert():
    planned = vllm(autoscaling={"metric": "kv_cache_usage_perc", "target": 0.8})
    assert chart(planned, "Requests waiting").thresholds == ()
    (line,) = chart(planned, "KV cache usage").thresholds
    assert line.value == 0.8
    assert "queue-above-target-at-max" not in {a.id for a in planned.alerts}


def test_fixed_replicas_chart_the_deployment_and_skip_the_hpa():
    planned = vllm(replicas={"min": 2, "max": 2})
    assert chart(planned, "Replicas available (of 2)")
    assert "kube_horizontalpodautoscaler" not in planned.dashboard.to_json()


def test_not_ready_waits_the_startup_budget():
    planned = vllm(startupMinutes=25)
    alert = next(a for a in planned.alerts if a.id == "serving-pods-not-ready")
    assert alert.minutes == 30 and alert.duration == "1800s"


def test_overrides_turn_alerts_on_and_off():
    planned = vllm(monitoring={"alerts": {"tpu-hbm-near-full": True, "pods-restarting": False}, "hbmFraction": 0.9})
    state = {a.id: a.enabled for a in planned.alerts}
    assert state["tpu-hbm-near-full"] is True and state["pods-restarting"] is False
    assert state["serving-pods-not-ready"] is True
    hbm = next(a for a in planned.alerts if a.id == "tpu-hbm-near-full")
    assert hbm.query.endswith("> 0.9")


def test_an_unknown_alert_id_is_refused_with_a_suggestion():
    with pytest.raises(UserError) as error:
        vllm(monitoring={"alerts": {"tpu-hbm-near-ful": True}})
    assert str(error.value).startswith("vllm.monitoring.alerts.tpu-hbm-near-ful")
    assert "did you mean 'tpu-hbm-near-full'" in str(error.value)


def test_a_malformed_notification_channel_is_refused_in_one_line():
    with pytest.raises(UserError) as error:
        vllm(monitoring={"notificationChannels": ["projects/p/notificationChannels/1", "my-channel"]})
    message = str(error.value)
    assert message.startswith("vllm.monitoring.notificationChannels[1]") and "my-channel" in message
    assert "projects/PROJECT/notificationChannels/ID" in message and "\n" not in message
    good = vllm(monitoring={"notificationChannels": ["projects/p/notificationChannels/1"]})
    assert good.target.monitoring.notification_channels == ["projects/p/notificationChannels/1"]


def test_monitoring_off_drops_jetstreams_metrics_flag():
    spec = dict(model="google/gemma-7b-it", topology="2x4", tpuGeneration="v5e", zone="us-west4-a")
    cluster = ClusterSpec(project="proj", location="us-west4")
    on = plan_jetstream(JetStreamSpec(**spec), cluster, hf_token_given=True)
    off = plan_jetstream(JetStreamSpec(**spec, monitoring={"enabled": False}), cluster, hf_token_given=True)
    assert on.server_args()[-1] == "--prometheus_port=9090"
    assert off.server_args() == on.server_args()[:-1]


def test_the_dashboard_json_is_deterministic_and_compact():
    first, second = vllm().dashboard.to_json(), vllm().dashboard.to_json()
    assert first == second
    document = json.loads(first)
    assert json.dumps(document, sort_keys=True, separators=(",", ":")) == first
    tiles = document["mosaicLayout"]["tiles"]
    assert tiles[0]["widget"]["sectionHeader"] is not None and tiles[0]["width"] == 48
    assert all(t.get("xPos", 0) + t["width"] <= 48 for t in tiles)  # xPos 0 is not sent (read-back)


def test_a_widget_holds_exactly_one_content():
    with pytest.raises(ValueError):
        Widget(title="two", text=Text(content="a"), xy_chart=XyChart(data_sets=()))
    with pytest.raises(ValueError):
        Widget(title="none")


def test_links_use_the_universes_console():
    assert dashboard_url("google", "p", "projects/123/dashboards/abc") == (
        "https://console.cloud.google.com/monitoring/dashboards/builder/abc?project=p"
    )
    links = first_links("s3ns", "s3ns:p", "u-france-east1", "c", "ns")
    assert all(url.startswith("https://console.cloud.s3nscloud.fr/") for url in links.values())
    assert "kubernetes/clusters/details/u-france-east1/c/details" in links["cluster"]


def test_the_jobset_package_is_asked_only_of_clusters_that_can_have_it():
    from tpu_stacks.catalog.gke_metrics import kube_state_packages

    assert kube_state_packages(None) == ("POD", "DEPLOYMENT", "HPA", "JOBSET")
    assert kube_state_packages("1.33") == ("POD", "DEPLOYMENT", "HPA", "JOBSET")
    assert kube_state_packages("1.31.5-gke.100") == ("POD", "DEPLOYMENT", "HPA")
