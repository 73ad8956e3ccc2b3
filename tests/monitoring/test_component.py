"""What the components declare for monitoring, under mocks: channels reach every alert, `enabled: false`
declares nothing, and a bad monitoring input is refused before the first resource."""

from __future__ import annotations

import pulumi

from tests.clients import CLIENTS
from tests.mocks import capture, refused
from tpu_stacks.vllm.component import VllmStack

ARGS = {
    "cluster": {"project": "proj", "location": "us-central1-b"},
    "model": "meta-llama/Llama-3.1-70B",
    "source_ranges": CLIENTS,
    "hf_token": pulumi.Output.secret("hf_dummy"),
}
CHANNEL = "projects/proj/notificationChannels/1234"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"


def test_notification_channels_reach_every_alert():
    mocks = capture(lambda: VllmStack("vllm", {**ARGS, "monitoring": {"notification_channels": [CHANNEL]}}))
    alerts = mocks.of_type(ALERT)
    assert len(alerts) == 5
    assert all(a.inputs["notificationChannels"] == [CHANNEL] for a in alerts)
    assert all(a.inputs["project"] == "proj" for a in alerts)
    # created before the first scrape: the API must not refuse metrics that do not exist yet
    assert all(a.inputs["conditions"][0]["conditionPrometheusQueryLanguage"]["disableMetricValidation"] for a in alerts)


def test_without_channels_alerts_notify_nobody():
    mocks = capture(lambda: VllmStack("vllm", ARGS))
    assert all("notificationChannels" not in a.inputs for a in mocks.of_type(ALERT))


def test_monitoring_off_declares_no_dashboard_and_no_alert():
    mocks = capture(lambda: VllmStack("vllm", {**ARGS, "monitoring": {"enabled": False}}))
    assert mocks.of_type(ALERT) == [] and mocks.of_type("gcp:monitoring/dashboard:Dashboard") == []
    assert mocks.of_type("kubernetes:apps/v1:Deployment")  # the workload itself is unchanged


def test_an_unknown_alert_is_refused_before_anything_is_declared():
    message = refused(lambda: VllmStack("vllm", {**ARGS, "monitoring": {"alerts": {"queue-above-target": False}}}))
    assert message.startswith("vllm.monitoring.alerts.queue-above-target")
    assert "did you mean 'queue-above-target-at-max'" in message
