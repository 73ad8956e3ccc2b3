"""inference-perf's reports in, a GKE Inference Quickstart profile out.

In: the per-stage lifecycle reports inference-perf 0.7.0 writes (`stage_<id>_lifecycle_metrics`, ledger:
inference-perf.report.stage-name), read from the
run's log, where it prints each between `=== START_STAGE_<id> ===` and `=== END_STAGE_<id> ===` lines (ledger:
inference-perf.stdout.stage-markers), or from the report files themselves (`stage_<id>_lifecycle_metrics.json`).
Each is a `ResponsesSummary` (inference_perf/reportgen/base.py `summarize_requests`): `load_summary.requested_rate`
(the stage's rate) and `achieved_rate`; `successes.count`; `successes.latency.<metric>.mean` (and percentiles) in
seconds, for `normalized_time_per_output_token` (request latency over output tokens) and `time_to_first_token`;
`successes.throughput.output_tokens_per_sec` and `requests_per_sec`; `failures.count` (ledger:
inference-perf.report.ntpot, inference-perf.report.ttft, inference-perf.report.requests-per-sec).

Out: a `FetchProfiles` response as `tpu-stacks size --profiles` and `slo.profiles` read it
(tpu_stacks.traffic.profiles): one profile for the stack's server on its slice, one `performanceStats` entry per
stage, in GIQ's units and types (int32 milliseconds and tokens per second, a float QPS; the API reference's
PerformanceStats, https://cloud.google.com/python/docs/reference/google-cloud-gkerecommender/latest/
google.cloud.gkerecommender_v1.types.PerformanceStats). GIQ defines NTPOT as "request_latency /
total_output_tokens" and output throughput as "total_output_tokens_generated_by_server / elapsed_time_in_seconds"
without naming a statistic: the profile takes each stage's mean NTPOT and mean TTFT, and the output tokens the
server reported (`use_server_output_tokens`, ledger: inference-perf.report.server-output-tokens). A stage where any
request failed is left out and said so: its latencies describe only the requests that got through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tpu_stacks.errors import UserError
from tpu_stacks.traffic.profiles import Profile, ProfilePoint, profiles_document

STAGE_START = re.compile(r"^=== START_STAGE_(\d+) ===$")
STAGE_END = "=== END_STAGE_{} ==="
STAGE_FILE = re.compile(r"stage_(\d+)_lifecycle_metrics\.json$")


@dataclass(frozen=True)
class Stage:
    """One stage's figures, as the profile needs them."""

    stage: int
    requested_rate: float
    queries_per_second: float
    output_tokens_per_second: float
    ntpot_ms: float
    ttft_ms: float | None
    successes: int
    failures: int

    def point(self) -> ProfilePoint:
        """Its `performanceStats` entry, as `size --profiles` reads it (the reader's own type writes it)."""
        return ProfilePoint(
            queries_per_second=self.queries_per_second,
            output_tokens_per_second=self.output_tokens_per_second,
            ntpot_ms=self.ntpot_ms,
            ttft_ms=self.ttft_ms,
        )


def _bad(where: str, problem: str) -> UserError:
    fix = "give the Job's log (kubectl logs job/<name>) or its stage_<n>_lifecycle_metrics.json files"
    return UserError("--from-log", where, f"is not inference-perf's output: {problem}", fix)


def stage_reports(log: str, where: str = "the Job's log") -> dict[int, dict[str, Any]]:
    """The stage reports printed in a run's log, by stage id."""
    found: dict[int, dict[str, Any]] = {}
    lines = log.splitlines()
    index = 0
    while index < len(lines):
        start = STAGE_START.match(lines[index].strip())
        index += 1
        if not start:
            continue
        stage = int(start.group(1))
        end = STAGE_END.format(stage)
        body = []
        while index < len(lines) and lines[index].strip() != end:
            body.append(lines[index])
            index += 1
        if index == len(lines):
            raise _bad(where, f"stage {stage}'s report has no `{end}` line (the log was cut short?)")
        try:
            found[stage] = json.loads("\n".join(body))
        except json.JSONDecodeError as error:
            raise _bad(where, f"stage {stage}'s report is not JSON ({error})") from None
    return found


def stage_files(paths: Iterable[Path]) -> dict[int, dict[str, Any]]:
    """The stage reports among report files (`stage_<id>_lifecycle_metrics.json`), by stage id."""
    found = {}
    for path in paths:
        match = STAGE_FILE.search(path.name)
        if match:
            try:
                found[int(match.group(1))] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as error:
                raise _bad(str(path), f"cannot be read as JSON ({error})") from None
    return found


def _number(report: dict[str, Any], path: str, where: str, optional: bool = False) -> float | None:
    node: Any = report
    for key in path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    if node is None and optional:
        return None
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise _bad(where, f"`{path}` is {node!r}, not a number")
    return float(node)


def stage(stage_id: int, report: dict[str, Any], where: str) -> Stage:
    """One stage report's figures (seconds become milliseconds)."""
    here = f"{where} (stage {stage_id})"
    successes = int(_number(report, "successes.count", here) or 0)
    ntpot = _number(report, "successes.latency.normalized_time_per_output_token.mean", here, optional=True)
    ttft = _number(report, "successes.latency.time_to_first_token.mean", here, optional=True)
    return Stage(
        stage=stage_id,
        requested_rate=_number(report, "load_summary.requested_rate", here) or 0.0,
        queries_per_second=_number(report, "successes.throughput.requests_per_sec", here) or 0.0,
        output_tokens_per_second=_number(report, "successes.throughput.output_tokens_per_sec", here) or 0.0,
        ntpot_ms=(ntpot or 0.0) * 1000,
        ttft_ms=ttft * 1000 if ttft is not None else None,
        successes=successes,
        failures=int(_number(report, "failures.count", here) or 0),
    )


def stages(reports: dict[int, dict[str, Any]], where: str) -> list[Stage]:
    if not reports:
        raise _bad(where, "no stage report in it (`=== START_STAGE_<n> ===`)")
    return [stage(stage_id, reports[stage_id], where) for stage_id in sorted(reports)]


def measured_profile(setup: Profile, measured: list[Stage]) -> tuple[Profile, list[str]]:
    """`setup` (the model server and the slice) with the stages kept as its points, and a note per stage left out."""
    notes = []
    kept = []
    for item in measured:
        if item.failures or not item.successes or item.output_tokens_per_second <= 0:
            notes.append(
                f"stage {item.stage} ({item.requested_rate:g} req/s) left out: "
                f"{item.failures} of {item.failures + item.successes} requests failed"
            )
            continue
        kept.append(item)
    return replace(setup, points=tuple(item.point() for item in kept)), notes


def profile_document(setup: Profile, measured: list[Stage]) -> tuple[dict[str, Any], list[str]]:
    """The FetchProfiles response of `measured_profile` (one profile), written by the reader's own type, and the
    notes."""
    profile, notes = measured_profile(setup, measured)
    return profiles_document([profile]), notes
