"""tpu_stacks.first_up: the minutes come from awaits.py's budgets, the TPU hours from the waits during which TPU
nodes exist, the money from the catalogue. Every expected value is worked out by hand here."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tpu_stacks import first_up
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.cluster.capacity import Capacity
from tpu_stacks.cluster.decided import PoolPlan
from tpu_stacks.objects.awaits import AwaitBudget


def template(**probe: int) -> dict:
    """A pod template (the dict form awaits.py reads) whose one container has this startup probe."""
    return {"spec": {"containers": [{"name": "server", "startupProbe": probe}]}}


def test_a_pods_wait_is_node_image_and_the_start_its_probe_allows():
    # 240 failures 10 s apart: 2400 s = 40 min; 15 (node) + 10 (image) + 40 = 65
    wait = first_up.pod_wait("x-deployment", "ready", template(periodSeconds=10, failureThreshold=240), tpu=True)
    assert wait.minutes == 65
    assert wait.parts == (("node", 15), ("image", 10), ("start", 40))


def test_a_probe_window_is_rounded_up_to_whole_minutes():
    # 5 s delay + 3 x 30 s = 95 s: 2 min; 15 + 10 + 2 = 27
    wait = first_up.pod_wait("x", "", template(initialDelaySeconds=5, periodSeconds=30, failureThreshold=3), tpu=False)
    assert (wait.minutes, wait.parts[-1]) == (27, ("start", 2))


def test_a_jobs_wait_is_its_deadline_and_two_minutes_to_report():
    assert first_up.job_wait("x-smoke-test", "", 20 * 60).minutes == 22
    wait = first_up.job_wait("x", "", 161 * 60, deadline_parts=(("CPU node", 15), ("image", 10), ("download", 136)))
    assert wait.minutes == 163 and wait.parts[-1] == ("report", 2)


def test_parts_that_disagree_with_the_budget_fail_at_plan_time():
    with pytest.raises(AssertionError, match="do not add up"):
        first_up.job_wait("x", "", 161 * 60, deadline_parts=(("download", 100),))
    with pytest.raises(AssertionError, match="do not add up"):
        first_up.started_wait("x", "", AwaitBudget(145, 145), 100, tpu=True)
    assert first_up.started_wait("x", "", AwaitBudget(145, 145), 120, tpu=True).parts[-1] == ("start", 120)


V6E_4X8 = first_up.Slices("v6e", "4x8", 1, 32, 8, ("onDemand",), from_zero=True)
WAITS = (
    first_up.Wait("dl", "download", 163, tpu=False, download=True),
    first_up.Wait("server", "start", 145, tpu=True),
    first_up.Wait("smoke", "smoke test", 22),
)


def test_from_zero_only_the_servers_wait_bills_tpu_hours():
    record = first_up.FirstUp("vllm", WAITS, V6E_4X8)
    assert record.billed() == (False, True, False)
    assert record.total_minutes == 163 + 145 + 22 == 330
    assert record.tpu_minutes == 145 and record.tpu_during_download is False
    document = record.document()
    assert document["chip_hours_before_serving"] == 77.33  # 32 x 145 / 60 = 77.333
    # $2.70 per chip-hour (v6e on-demand, the catalogue) x 32 x 145 / 60 = 208.80
    assert document["prices"] == [
        {"kind": "onDemand", "usd_per_chip_hour": 2.70, "usd": 208.8, "source": document["prices"][0]["source"],
         "listed": True}
    ]  # fmt: skip
    assert [w["tpu_billed"] for w in document["waits"]] == [False, True, False]


def test_a_pool_created_with_the_cluster_bills_every_wait_before_the_server_is_ready():
    fixed = first_up.Slices("v6e", "4x8", 1, 32, 8, ("onDemand",), from_zero=False)
    record = first_up.FirstUp("vllm", WAITS, fixed)
    assert record.billed() == (True, True, False)  # the download too; not the smoke test (the server answers)
    assert record.tpu_minutes == 308 and record.tpu_during_download is True
    assert record.document()["chip_hours_before_serving"] == 164.27  # 32 x 308 / 60 = 164.267


def test_a_kind_without_a_price_is_unknown_and_the_on_demand_price_is_shown_beside_it():
    spot = first_up.Slices("v6e", "1x1", 1, 1, 1, ("spot",), from_zero=False)
    prices = first_up.FirstUp("vllm", (first_up.Wait("server", "", 60, tpu=True),), spot).prices()
    assert [(p["kind"], p["usd"], p["listed"]) for p in prices] == [("spot", None, True), ("onDemand", 2.7, False)]
    v4 = first_up.Slices("v4", "2x2x1", 1, 4, 1, ("onDemand",), from_zero=False)  # no catalogued v4 price
    assert [(p["kind"], p["usd"]) for p in first_up.FirstUp("x", (), v4).prices()] == [("onDemand", None)]


def pool(**changes) -> PoolPlan:
    fields = dict(
        name="tpu", slice_index=0, shape=slice_shape("v6e", "4x8"), zone="us-central1-b", node_count=None,
        autoscaling_min=0, autoscaling_max=8, spot=False, reservation=None, flex_start=False,
        queued_provisioning=False, threads_per_core=None, max_run_duration=None,
    )  # fmt: skip
    return PoolPlan(**{**fields, **changes})


def test_slices_from_a_pool_plan():
    assert first_up.slices(pool(), 2) == first_up.Slices("v6e", "4x8", 2, 32, 8, ("onDemand",), True)
    assert first_up.slices(pool(), 2).total_chips == 64 and first_up.slices(pool(), 2).total_hosts == 16
    assert not first_up.slices(pool(node_count=8, autoscaling_min=None, autoscaling_max=None), 1).from_zero
    assert not first_up.slices(pool(autoscaling_min=1), 1).from_zero
    # a ComputeClass's pools: GKE creates them from the pending pods
    fallback = pool(autoscaling_min=None, autoscaling_max=None, capacity=(Capacity(kind="spot"), Capacity(kind="onDemand")))  # fmt: skip
    assert first_up.slices(fallback, 1).from_zero and first_up.slices(fallback, 1).kinds == ("spot", "onDemand")
    assert first_up.slices(pool(spot=True), 1).kinds == ("spot",)
    assert first_up.slices(pool(reservation="r"), 1).kinds == ("reservation",)


def _prediction(**given: object) -> SimpleNamespace:
    """An slo prediction as first_up.slo_summary reads it: a replica at 1000 output and 4000 input tokens/s, 40 ms
    NTPOT, 500 ms TTFT (900 ms at p99), from the model; `given` replaces any of it."""
    figures = {
        "replicas": 1,
        "replica_output_tokens_per_second": 1000.0,
        "replica_input_tokens_per_second": 4000.0,
        "replica_ntpot_ms": 40.0,
        "replica_ttft_ms": 500.0,
        "replica_ttft_p99_ms": 900.0,
        "basis": "model",
    }
    return SimpleNamespace(**{**figures, **given})


def test_the_slo_summary_prices_the_traffic_models_replicas():
    prediction = _prediction(replicas=3)
    summary = first_up.slo_summary(prediction, "v6e", 8)
    # a replica: 8 chips x $2.70 = $21.60/h; 3 replicas: $64.80/h
    # $/M output tokens (GIQ's Cost): 21.60 / 3600 $/s over (1000 + 4000 / 4) tokens/s = $3e-6 a token: $3.00
    assert summary["usd_per_hour"] == 64.8
    assert summary["usd_per_million_output_tokens"] == 3.0
    assert (summary["replicas"], summary["output_tokens_per_second"]) == (3, 3000.0)
    assert (summary["ntpot_ms"], summary["ttft_ms"], summary["pricing"]) == (40.0, 500.0, "on-demand")
    assert summary["ttft_p99_ms"] == 900.0


def test_a_probe_window_just_over_a_minute_is_two_minutes():
    # 1 s delay + 2 x 30 s = 61 s: 2 min (rounded up, as awaits.pod_budget rounds it); 15 + 10 + 2 = 27
    wait = first_up.pod_wait("x", "", template(initialDelaySeconds=1, periodSeconds=30, failureThreshold=2), tpu=True)
    assert wait.parts[-1] == ("start", 2) and wait.minutes == 27


def test_a_flex_start_pool_runs_on_flex_start():
    assert first_up.slices(pool(flex_start=True), 1).kinds == ("flexStart",)
    assert first_up.slices(pool(flex_start=True, queued_provisioning=True), 1).kinds == ("flexStart",)


def test_a_price_is_rounded_to_the_cent():
    # one v6e chip for 3 minutes at $2.70 a chip-hour: 0.05 chip-hours, $0.135, shown as $0.14
    one = first_up.Slices("v6e", "1x1", 1, 1, 1, ("onDemand",), from_zero=True)
    record = first_up.FirstUp("vllm", (first_up.Wait("server", "", 3, tpu=True),), one)
    assert [(p["kind"], p["usd"]) for p in record.prices()] == [("onDemand", 0.14)]


def test_the_slo_summary_rounds_throughput_to_hundredths_and_cost_to_four_places():
    prediction = _prediction(
        replicas=1, replica_output_tokens_per_second=1000.1234, replica_input_tokens_per_second=5000.0
    )
    summary = first_up.slo_summary(prediction, "v6e", 8)
    assert summary["output_tokens_per_second"] == 1000.12
    # $21.60/h = $0.006/s over (1000.1234 + 5000 / 4) tokens/s = 2250.1234: $2.66652... a million output tokens
    assert summary["usd_per_million_output_tokens"] == 2.6665
