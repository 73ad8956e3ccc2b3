"""inference-perf's real output to a GIQ profile: the captured log of the pinned release (fixtures/README.md says how
it was made), read as `bench` reads a Job's log, converted, and read back by the repository's own GIQ reader."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import slice_shape
from tpu_stacks.errors import UserError
from tpu_stacks.traffic import read_profiles
from tpu_stacks.traffic.profiles import Profile, ProfilePoint
from tpu_stacks_live.bench import cli as bench_cli
from tpu_stacks_live.bench import report as bench_report
from tpu_stacks_live.bench.report import Stage, profile_document, stage_files, stage_reports, stages

FIXTURE = Path(__file__).parent / "fixtures" / "inference-perf-0.7.0-standin.log"
LOG = FIXTURE.read_text(encoding="utf-8")
SETUP = Profile(
    model="Qwen/Qwen2.5-1.5B-Instruct",
    model_server="vllm",
    model_server_version="v0.29.0",
    accelerator_type="tpu-v6e-slice",
    tpu_topology="1x1",
    instance_type="ct6e-standard-1t",
    accelerator_count=1,
    points=(),
)


def test_the_log_holds_both_stages_reports_and_they_match_the_run():
    reports = stage_reports(LOG)
    assert sorted(reports) == [0, 1]
    measured = stages(reports, "fixture")
    assert [s.requested_rate for s in measured] == [2.0, 8.0]
    for item in measured:
        assert item.failures == 0 and item.successes > 0
        # the run asked for 32 output tokens a request and the stand-in counted 64 prompt words
        assert item.output_tokens_per_second == pytest.approx(32 * item.queries_per_second, rel=1e-6)
        report = reports[item.stage]
        assert report["successes"]["throughput"]["input_tokens_per_sec"] == pytest.approx(
            64 * item.queries_per_second, rel=1e-6
        )
        # the stand-in's prefill alone is 20 ms + 64 x 0.02 ms: TTFT is measured, not made up
        assert 21 < item.ttft_ms < 200
        assert 4 < item.ntpot_ms < 50
    # a busier stage: four times the requests, a slower decode step per request
    assert measured[1].queries_per_second > 3 * measured[0].queries_per_second
    assert measured[1].ntpot_ms > measured[0].ntpot_ms


def test_the_conversion_takes_means_in_milliseconds():
    report = stage_reports(LOG)[1]
    (converted,) = [s for s in stages({1: report}, "fixture")]
    latency = report["successes"]["latency"]
    assert converted.ntpot_ms == pytest.approx(latency["normalized_time_per_output_token"]["mean"] * 1000)
    assert converted.ttft_ms == pytest.approx(latency["time_to_first_token"]["mean"] * 1000)
    assert converted.point().document() == {
        "queriesPerSecond": round(report["successes"]["throughput"]["requests_per_sec"], 3),
        "outputTokensPerSecond": round(report["successes"]["throughput"]["output_tokens_per_sec"]),
        "ntpotMilliseconds": round(converted.ntpot_ms),
        "ttftMilliseconds": round(converted.ttft_ms),
    }


def test_the_report_files_say_what_the_log_says(tmp_path):
    """inference-perf also writes each stage's report as stage_<id>_lifecycle_metrics.json: the same documents."""
    for stage_id, report in stage_reports(LOG).items():
        (tmp_path / f"stage_{stage_id}_lifecycle_metrics.json").write_text(json.dumps(report))
    (tmp_path / "summary_lifecycle_metrics.json").write_text("{}")
    assert stage_files(tmp_path.iterdir()) == stage_reports(LOG)


def test_the_profile_is_read_by_the_giq_reader_and_matches_the_stacks_slice(tmp_path):
    document, notes = profile_document(SETUP, stages(stage_reports(LOG), "fixture"))
    assert notes == []
    path = tmp_path / "bench-dev.json"
    path.write_text(json.dumps(document))
    (profile,) = read_profiles(path)
    assert [p.output_tokens_per_second for p in profile.points] == [
        s["outputTokensPerSecond"] for s in document["profile"][0]["performanceStats"]
    ]
    assert profile.points[1].ttft_ms is not None and profile.points[1].queries_per_second > 7
    model = lookup_model("Qwen/Qwen2.5-1.5B-Instruct")
    assert profile.matches(model, slice_shape("v6e", "1x1"), "vllm")
    assert not profile.matches(model, slice_shape("v6e", "2x2"), "vllm")
    assert not profile.matches(model, slice_shape("v6e", "1x1"), "jetstream")


def test_bench_writes_the_profile_with_the_type_size_reads_it_with(tmp_path):
    """One declaration of GIQ's fields (tpu_stacks.traffic.profiles): bench builds a Profile and its points and
    writes them with the reader's own writer, so what it saves reads back as the profile it built."""
    measured = stages(stage_reports(LOG), "fixture")
    document, _ = profile_document(SETUP, measured)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(document))
    (profile,) = read_profiles(path)
    assert profile == replace(SETUP, points=profile.points)
    assert profile.points == tuple(
        ProfilePoint(
            round(s.queries_per_second, 3), round(s.output_tokens_per_second), round(s.ntpot_ms), round(s.ttft_ms)
        )
        for s in measured
    )
    sources = [Path(module.__file__).read_text() for module in (bench_report, bench_cli)]
    fields = ('"modelServerInfo"', '"performanceStats"', '"ntpotMilliseconds"', '"acceleratorType"')
    assert not [name for name in fields for source in sources if name in source]


def test_a_stage_with_failures_is_left_out_and_said():
    good = Stage(0, 1.0, 1.0, 128.0, 20.0, 100.0, successes=10, failures=0)
    bad = Stage(1, 16.0, 3.0, 384.0, 80.0, 900.0, successes=30, failures=5)
    document, notes = profile_document(SETUP, [good, bad])
    assert document["profile"][0]["performanceStats"] == [good.point().document()]
    assert notes == ["stage 1 (16 req/s) left out: 5 of 35 requests failed"]


def test_a_log_cut_short_or_garbled_is_one_line():
    start = LOG.index("=== START_STAGE_1 ===")
    with pytest.raises(UserError, match=r"stage 1's report has no `=== END_STAGE_1 ===` line"):
        stage_reports(LOG[: start + 200])
    end = LOG.index("=== END_STAGE_1 ===")
    with pytest.raises(UserError, match="stage 1's report is not JSON"):
        stage_reports(LOG[: start + 30] + "\n" + LOG[end:])
    with pytest.raises(UserError, match="no stage report in it"):
        stages(stage_reports("Traceback (most recent call last):\n  ..."), "a log")
    with pytest.raises(UserError, match="`successes.count` is 'x', not a number"):
        stages({0: {"successes": {"count": "x"}}}, "a log")
