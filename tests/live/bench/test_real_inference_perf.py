"""The pinned inference-perf, run for real with the configuration bench sends, against the local vLLM stand-in:
it accepts every setting (its models refuse unknown keys), sends the requests bench means (streamed completions of
the asked lengths, usage requested, `ignore_eos`), and its output converts to a profile the GIQ reader reads.

Network: the release and its dependencies come from PyPI into a fresh Python 3.12 virtualenv (real_run.py), once
per session; the run itself is local (the tokenizer is built here, Hugging Face is never asked: HF_HUB_OFFLINE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.live.bench.real_run import MODEL, WORKLOAD, make_venv, run
from tpu_stacks.traffic import read_profiles
from tpu_stacks.traffic.profiles import Profile
from tpu_stacks_live.bench.report import profile_document, stage_files, stage_reports, stages


@pytest.fixture(scope="module")
def inference_perf(tmp_path_factory) -> tuple[Path, str, list[dict]]:
    work = tmp_path_factory.mktemp("inference-perf")
    python = make_venv(work / "venv")
    log, requests = run(python, work)
    return work, log, requests


@pytest.mark.network
def test_the_requests_are_the_ones_bench_means(inference_perf):
    _, _, requests = inference_perf
    expected = sum(int(rate * WORKLOAD.duration_s) for rate in WORKLOAD.rates)
    assert abs(len(requests) - expected) <= 0.3 * expected  # Poisson arrivals: about rate x duration a stage
    for request in requests:
        assert request["model"] == MODEL and request["max_tokens"] == WORKLOAD.output_tokens
        assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
        assert request["ignore_eos"] is True
        assert len(request["prompt"].split()) == WORKLOAD.input_tokens  # one word a token, exactly the length


@pytest.mark.network
def test_its_output_converts_and_the_log_says_what_the_files_say(inference_perf, tmp_path):
    work, log, _ = inference_perf
    from_log = stage_reports(log)
    assert sorted(from_log) == list(range(len(WORKLOAD.rates)))
    assert stage_files((work / "reports").iterdir()) == from_log
    measured = stages(from_log, "the run")
    assert [s.requested_rate for s in measured] == list(WORKLOAD.rates)
    assert all(s.failures == 0 and s.ttft_ms and s.ttft_ms > 20 for s in measured)  # the stand-in's prefill
    setup = Profile(MODEL, "vllm", "v0", "tpu-v6e-slice", "1x1", "ct6e-standard-1t", 1, points=())
    document, notes = profile_document(setup, measured)
    assert notes == []
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(document))
    (profile,) = read_profiles(path)
    assert len(profile.points) == len(WORKLOAD.rates)
    assert profile.points[-1].output_tokens_per_second > profile.points[0].output_tokens_per_second
