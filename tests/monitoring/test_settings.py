"""The `monitoring:` section (gcp/monitoring/spec.py) and its plan (gcp/monitoring/plan.py): the settings' edges and
defaults as docs/monitoring.md's Settings block writes them (`queueMinutes: 10`, `hbmFraction: 0.95`), a notification
channel's name as the Monitoring API v3 spells it (`projects/PROJECT/notificationChannels/ID`,
https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.notificationChannels), and what the plan carries."""

from __future__ import annotations

import pytest

from tests.spec_edges import refusal
from tpu_stacks.errors import UserError
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
from tpu_stacks.inputs.validation import parse


def test_the_defaults_are_the_documented_ones() -> None:
    spec = MonitoringSpec()
    assert (spec.enabled, spec.queue_minutes, spec.hbm_fraction, spec.notification_channels) == (True, 10, 0.95, [])


@pytest.mark.parametrize(("minutes", "ok"), [(1, True), (1440, True), (0, False), (1441, False)])
def test_queue_minutes_from_one_minute_to_a_day(minutes: int, ok: bool) -> None:
    data = {"queueMinutes": minutes}
    if ok:
        assert parse(MonitoringSpec, data, "vllm.monitoring").queue_minutes == minutes
    else:
        bound = "greater than or equal to 1" if minutes < 1 else "less than or equal to 1440"
        assert refusal(MonitoringSpec, "vllm.monitoring", data) == (
            f"vllm.monitoring.queueMinutes: {minutes} is not accepted; input should be {bound}"
        )


@pytest.mark.parametrize(("fraction", "ok"), [(0.01, True), (1, True), (0, False), (1.01, False), (-0.5, False)])
def test_the_hbm_fraction_above_zero_up_to_all_of_it(fraction: float, ok: bool) -> None:
    data = {"hbmFraction": fraction}
    if ok:
        assert parse(MonitoringSpec, data, "vllm.monitoring").hbm_fraction == fraction
    else:
        bound = "greater than 0" if fraction <= 0 else "less than or equal to 1"
        assert refusal(MonitoringSpec, "vllm.monitoring", data) == (
            f"vllm.monitoring.hbmFraction: {fraction} is not accepted; input should be {bound}"
        )


def _target(**monitoring: object):
    from tests.monitoring.test_alert_rules import vllm

    return vllm(monitoring=monitoring)


def test_a_channels_name_is_checked_and_the_plan_carries_the_dashboard_and_alerts() -> None:
    good = "projects/my-tpu-project/notificationChannels/1234567890"  # docs/monitoring.md's example
    plan = plan_monitoring(_target(notificationChannels=[good]), "vllm")
    assert plan.enabled is True and plan.step_log_metric is None  # a server has no step log
    assert [s.title for s in plan.dashboard.sections][0] == "Now"  # docs/monitoring.md: the status row first
    assert [alert.id for alert in plan.alerts][:1] == ["serving-pods-not-ready"]
    with pytest.raises(UserError) as caught:
        plan_monitoring(_target(notificationChannels=[good, "my-channel"]), "vllm")
    assert str(caught.value) == (
        "vllm.monitoring.notificationChannels[1]: 'my-channel' is not a notification channel's name; "
        "write projects/PROJECT/notificationChannels/ID (gcloud beta monitoring channels list)"
    )


def test_a_disabled_section_plans_disabled() -> None:
    assert plan_monitoring(_target(enabled=False), "vllm").enabled is False
