"""`tpu-stacks plan` streams the preview to a pack process as the program registers each resource (as the engine
calls Analyze per registration), sends the stack once the preview ends, and runs the program in up mode while the
pack judges it (the pack works on the other core; `benchmarks/plan_vs_xpk.py` measures what that saves). These tests
pin the order, not the speed: the pack judges resources while the preview still runs and the stack while the up run
runs, a stack's analysis is over before the next stack's starts on the shared pack process (even when a run fails
or raises), an in-process pack runs only after the up run, and the pack's error reaches the user as before."""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.proto import analyzer_pb2

from tpu_stacks_preview import cli
from tpu_stacks_preview.capture import Capture, ResourceOptionsRecord, ResourceRecord
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.policy import PolicyError, PolicyResult

WAIT = 10.0  # seconds: only reached when the order under test is broken


def _config() -> StackConfig:
    return StackConfig("demo", "dev", Path("."), Path("__main__.py"), {})


def _args() -> argparse.Namespace:
    return argparse.Namespace(policy_pack="policies", policy_config=None, crds=None)


def _capture(preview: bool) -> Capture:
    return Capture(config=_config(), preview=preview)


def _record(name: str) -> ResourceRecord:
    urn = f"urn:pulumi:dev::demo::kubernetes:core/v1:Namespace::{name}"
    options = ResourceOptionsRecord()
    return ResourceRecord(
        urn, "kubernetes:core/v1:Namespace", name, None, True, False, None, "", [], {}, {}, [], False, options
    )


class _Events:
    """What happened, in order, as the patched steps and the fake pack record it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.lock = threading.Lock()
        self.seen: dict[str, threading.Event] = {}

    def note(self, event: str) -> None:
        with self.lock:
            self.order.append(event)
            self.seen.setdefault(event, threading.Event()).set()

    def wait(self, event: str) -> bool:
        with self.lock:
            flag = self.seen.setdefault(event, threading.Event())
        return flag.wait(WAIT)


class _Pack:
    """A pack process as `PackServer` offers it (`session`, `version`), answering the Analyzer calls in memory."""

    version = "0.0.1"

    def __init__(self, events: _Events, fail: str | None = None, slow: str | None = None) -> None:
        self.events, self.fail, self.slow = events, fail, slow

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        def call(method: str, request: Any) -> Any:
            if method == self.slow:
                time.sleep(0.3)
            if method == self.fail:
                raise PolicyError(f"policy pack policies: {method} failed: boom")
            self.events.note(method)
            if method == "GetAnalyzerInfo":
                return analyzer_pb2.AnalyzerInfo(name="policies", version="0.0.1")
            return analyzer_pb2.AnalyzeResponse()

        yield call


def _patch(
    monkeypatch: pytest.MonkeyPatch,
    events: _Events,
    *,
    up_waits_for: str | None = None,
    up_fails=False,
    raises=False,
    preview_waits=True,
):
    def run(config: StackConfig, *, preview: bool, listener: Any = None) -> tuple[Capture, int]:
        mode = "preview" if preview else "up"
        events.note(f"{mode} start")
        if preview and listener is not None:
            listener.registered(_record("a"), config, {})
            if preview_waits:
                seen = events.wait("Analyze")  # the program still runs: the pack judged what it registered
                events.note("analysed during preview" if seen else "not analysed during preview")
            listener.registered(_record("b"), config, {})
        if raises:
            raise RuntimeError("a bug in a run")
        if not preview and up_waits_for is not None:
            seen = events.wait(up_waits_for)
            events.note(f"{up_waits_for} during up" if seen else f"{up_waits_for} not seen during up")
        events.note(f"{mode} end")
        return _capture(preview), (1 if up_fails and not preview else 0)

    monkeypatch.setattr(cli, "_run", run)


def test_the_pack_judges_each_registration_during_the_preview_and_the_stack_during_the_up_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = _Events()
    _patch(monkeypatch, events, up_waits_for="AnalyzeStack")
    result = cli._plan_with(_args(), _config(), "1.33", "subprocess", _Pack(events), None)  # type: ignore[arg-type]
    assert not isinstance(result, int) and result[3] is not None and result[3].pack == "policies"
    assert "analysed during preview" in events.order and "AnalyzeStack during up" in events.order, events.order
    assert events.order.count("Analyze") == 2
    assert events.order.index("preview end") < events.order.index("AnalyzeStack") < events.order.index("up end")
    assert events.order.index("ConfigureStack") < events.order.index("Analyze")  # configured first, as the engine


@pytest.mark.parametrize("how", ["the up run fails", "a run raises"])
def test_a_stacks_analysis_ends_before_the_plan_moves_on(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    events = _Events()
    _patch(monkeypatch, events, up_fails=how == "the up run fails", raises=how == "a run raises")
    pack = _Pack(events, slow="Analyze")  # still talking to the pack when the run has failed
    with contextlib.suppress(RuntimeError):
        result = cli._plan_with(_args(), _config(), "1.33", "subprocess", pack, None)  # type: ignore[arg-type]
        assert result == 1
    events.note("plan returned")
    assert events.order.count("Analyze") == 2  # both registrations judged, nothing dropped mid-call
    assert events.order.index("plan returned") == len(events.order) - 1, events.order


def test_an_in_process_pack_runs_after_the_up_run(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _Events()
    _patch(monkeypatch, events)

    def analyse(pack_dir: Path, capture: Capture, **_: object) -> PolicyResult:
        events.note("analysis start")
        return PolicyResult("policies")

    monkeypatch.setattr(cli, "run_policy_pack", analyse)
    cli._plan_with(_args(), _config(), "1.33", "in-process", None, None)
    assert events.order.index("up end") < events.order.index("analysis start"), events.order


def test_the_packs_failure_on_its_thread_is_reported_as_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    events = _Events()
    _patch(monkeypatch, events, preview_waits=False)  # the pack fails: no Analyze to wait for
    pack = _Pack(events, fail="Analyze")
    result = cli._plan_with(_args(), _config(), "1.33", "subprocess", pack, None)  # type: ignore[arg-type]
    assert result == 1
    assert capsys.readouterr().err == "tpu-stacks: policy pack policies: Analyze failed: boom\n"


def test_without_a_pack_nothing_is_analysed(monkeypatch: pytest.MonkeyPatch) -> None:
    _patch(monkeypatch, _Events())
    monkeypatch.setattr(cli, "run_policy_pack", lambda *a, **k: pytest.fail("no pack was named"))
    args = argparse.Namespace(policy_pack=None, policy_config=None, crds=None)
    result = cli._plan_with(args, _config(), "1.33", "subprocess", None, None)
    assert not isinstance(result, int) and result[3] is None


def test_relative_pack_and_config_paths_are_read_from_where_the_user_ran_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The up run moves the working directory to the program's folder while the pack's thread starts: the
    paths the user gave are theirs (the fixture pack's one mandatory violation, made advisory by the config)."""
    from tpu_stacks.cli.main import main

    fixtures = Path(__file__).resolve().parent / "fixtures"
    (tmp_path / "policy.json").write_text('{"no-latest-image": "advisory"}')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    real_run = cli._run

    def up_elsewhere(config: StackConfig, *, preview: bool, listener: Any = None) -> tuple[Capture, int]:
        if preview:
            return real_run(config, preview=preview, listener=listener)
        os.chdir(elsewhere)  # as the program's run does, for long enough that the analysis goes on meanwhile
        try:
            time.sleep(1.0)
            return real_run(config, preview=preview)
        finally:
            os.chdir(tmp_path)

    monkeypatch.setattr(cli, "_run", up_elsewhere)
    code = main(
        [
            "plan",
            "--stack",
            "dev",
            "--cwd",
            os.path.relpath(fixtures / "raw", tmp_path),
            "--policy-pack",
            os.path.relpath(fixtures / "policy-pack", tmp_path),
            "--policy-config",
            "policy.json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "[advisory] no-latest-image" in captured.out
