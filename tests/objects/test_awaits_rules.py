"""objects/awaits.py at each rule's edge: the probe window Kubernetes allows, the start a pod template's probes
allow, and the await budgets built from them.

Expected values come from outside the module: the Kubernetes Probe defaults and pulumi-kubernetes' own await
(the SDK's docstrings at the pinned 4.34.2, ledger rows read by scripts/upstream_check.py), the cluster
autoscaler's `max-node-provision-time` (kubernetes/autoscaler cluster-autoscaler/FAQ.md, "What are the parameters
to CA?": 15 minutes by default), and the before-up table of docs/first-deploy.md (node 15 + image 10 + start,
"report 2" after a Job's deadline). Probes are written as pulumi-kubernetes Args or as the dicts a manifest has.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tpu_stacks.catalog.upstream import number
from tpu_stacks.objects import awaits
from tpu_stacks.objects.awaits import (
    AwaitBudget,
    container_start_seconds,
    job_budget,
    pod_budget,
    start_seconds,
    window_seconds,
)

PERIOD = number("pulumi-kubernetes.probe.period-default")
FAILURES = number("pulumi-kubernetes.probe.failure-threshold-default")
NODE, IMAGE, REPORT = 15, 10, 2
"""Minutes: the autoscaler's max-node-provision-time default; docs/first-deploy.md's "image 10" and "report 2"."""


def test_the_provider_waits_ten_minutes_by_default():
    assert number("pulumi-kubernetes.await.default-minutes") == 10
    assert awaits.PROVIDER_DEFAULT_AWAIT_SECONDS == 10 * 60


def test_an_unset_probe_fails_after_three_periods_of_ten_seconds():
    assert (PERIOD, FAILURES) == (10, 3)  # the Kubernetes API reference, core/v1 Probe
    assert window_seconds(None, None, None) == 30
    assert awaits.PROBE_DEFAULT_PERIOD_SECONDS == PERIOD
    assert awaits.PROBE_DEFAULT_FAILURE_THRESHOLD == FAILURES


@pytest.mark.parametrize(
    ("delay", "period", "failures", "seconds"),
    [
        (5, 2, 4, 13),  # the first probe after 5 s, then 4 failures 2 s apart
        (None, 7, 2, 14),  # no delay: 0
        (0, 7, None, 21),  # the default 3 failures, the period given
        (None, None, 5, 50),  # the default 10 s period, the failures given
        (30, None, None, 60),
    ],
)
def test_a_probe_window_is_its_delay_then_its_failures_a_period_apart(delay, period, failures, seconds):
    assert window_seconds(delay, period, failures) == seconds


def test_probe_fields_are_read_from_args_and_from_either_spelling_of_a_dict():
    args = k8s.core.v1.ProbeArgs(initial_delay_seconds=5, period_seconds=2, failure_threshold=4)
    camel = {"initialDelaySeconds": 5, "periodSeconds": 2, "failureThreshold": 4}
    snake = {"initial_delay_seconds": 5, "period_seconds": 2, "failure_threshold": 4}
    for probe in (args, camel, snake):
        assert container_start_seconds({"startupProbe": probe}) == 13
    assert container_start_seconds(k8s.core.v1.ContainerArgs(name="c", startup_probe=args)) == 13
    assert container_start_seconds(k8s.core.v1.ContainerArgs(name="c")) == 0


def test_the_startup_probe_counts_even_when_the_liveness_probe_allows_longer():
    startup = {"periodSeconds": 10, "failureThreshold": 240}  # 40 minutes
    liveness = {"periodSeconds": 10, "failureThreshold": 300}
    assert container_start_seconds({"startupProbe": startup, "livenessProbe": liveness}) == 2400
    assert container_start_seconds({"livenessProbe": {"periodSeconds": 10, "failureThreshold": 6}}) == 60
    assert container_start_seconds({"readinessProbe": startup}) == 0  # readiness never restarts a container
    assert container_start_seconds({}) == 0


def test_a_template_allows_its_slowest_container():
    template = {
        "spec": {
            "containers": [
                {"name": "sidecar", "livenessProbe": {"failureThreshold": 1}},  # 10 s
                {"name": "server", "startupProbe": {"periodSeconds": 10, "failureThreshold": 240}},
            ]
        }
    }
    assert start_seconds(template) == 2400
    assert start_seconds({"spec": {"containers": [{"name": "plain"}]}}) == 0
    assert start_seconds({"spec": {"containers": []}}) == 0
    assert start_seconds({"spec": {}}) == 0
    assert start_seconds({}) == 0


def _template(start_s: int) -> dict:
    """A pod template whose one container may take exactly `start_s` seconds to start."""
    return {"spec": {"containers": [{"name": "s", "startupProbe": {"periodSeconds": 1, "failureThreshold": start_s}}]}}


@pytest.mark.parametrize(
    ("start_s", "start_min"),
    [(0, 0), (60, 1), (61, 2), (2400, 40)],  # whole minutes, rounded up
)
def test_a_pod_waits_for_a_node_the_image_and_its_start(start_s, start_min):
    assert start_seconds(_template(start_s)) == start_s
    assert pod_budget(_template(start_s)) == AwaitBudget(NODE + IMAGE + start_min, NODE + IMAGE + start_min)


def test_each_rollout_wave_pulls_and_starts_again():
    one = IMAGE + 40
    assert pod_budget(_template(2400), rollout_waves=3) == AwaitBudget(NODE + one, NODE + 3 * one)
    assert pod_budget(_template(2400), rollout_waves=0) == AwaitBudget(NODE + one, NODE + one)  # at least one wave


@pytest.mark.parametrize(("deadline_s", "minutes"), [(60, 1 + REPORT), (61, 2 + REPORT), (3600, 60 + REPORT)])
def test_a_job_waits_for_its_deadline_then_two_minutes_to_report(deadline_s, minutes):
    assert job_budget(deadline_s) == AwaitBudget(minutes, minutes)


def test_the_budget_is_the_resource_option_the_provider_reads_first():
    timeouts = AwaitBudget(65, 115).custom_timeouts()
    assert isinstance(timeouts, pulumi.CustomTimeouts)
    assert (timeouts.create, timeouts.update, timeouts.delete) == ("65m", "115m", None)


@pytest.mark.parametrize("minutes", [1, 5, 20, 30, 40, 100, 120])
def test_a_startup_probe_allows_exactly_the_minutes_asked(minutes):
    """k8s/probes.startup_probe checks every STARTUP_PERIOD_SECONDS: a period that does not divide a minute would
    cut the window short of the start the workload asked for (a 9 s period gives 40 minutes as 2394 s)."""
    from tpu_stacks.k8s.probes import startup_probe

    container = k8s.core.v1.ContainerArgs(name="server", startup_probe=startup_probe("/health", 8000, minutes))
    assert container_start_seconds(container) == minutes * 60
    assert start_seconds({"spec": {"containers": [container]}}) == minutes * 60
