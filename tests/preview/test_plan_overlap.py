"""`tpu-stacks plan` sends the preview to a pack process as soon as the preview exists, and runs the program
in up mode while the pack judges it (the pack works on the other core; `benchmarks/plan_vs_xpk.py` measures
what that saves). These tests pin the order, not the speed: the analysis overlaps the up run over gRPC, a
stack's analysis is over before the next stack's starts on the shared pack process (even when the up run
fails), an in-process pack runs only after the up run, and the pack's error reaches the user as before."""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

import pytest

from tpu_stacks_preview import cli
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.policy import PolicyError, PolicyResult

WAIT = 10.0  # seconds: only reached when the order under test is broken


def _config() -> StackConfig:
    return StackConfig("demo", "dev", Path("."), Path("__main__.py"), {})


def _args() -> argparse.Namespace:
    return argparse.Namespace(policy_pack="policies", policy_config=None, crds=None)


def _capture(preview: bool) -> Capture:
    return Capture(config=_config(), preview=preview)


class _Events:
    """What happened, in order, as the patched steps record it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.lock = threading.Lock()

    def note(self, event: str) -> None:
        with self.lock:
            self.order.append(event)


def _patch(
    monkeypatch: pytest.MonkeyPatch, events: _Events, *, up_waits_for: threading.Event | None = None, up_fails=False
):
    def run(config: StackConfig, *, preview: bool) -> tuple[Capture, int]:
        mode = "preview" if preview else "up"
        events.note(f"{mode} start")
        if not preview and up_waits_for is not None:
            events.note("analysis seen during up" if up_waits_for.wait(WAIT) else "analysis not seen during up")
        events.note(f"{mode} end")
        return _capture(preview), (1 if up_fails and not preview else 0)

    monkeypatch.setattr(cli, "_run", run)


def test_the_pack_judges_the_preview_while_the_program_runs_in_up_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    events, analysing = _Events(), threading.Event()
    _patch(monkeypatch, events, up_waits_for=analysing)

    def analyse(pack_dir: Path, capture: Capture, **_: object) -> PolicyResult:
        assert capture.preview  # the pack sees what `pulumi preview` sees
        events.note("analysis start")
        analysing.set()
        return PolicyResult("policies")

    monkeypatch.setattr(cli, "run_policy_pack", analyse)
    result = cli._plan_with(_args(), _config(), "1.33", "subprocess", object(), None)  # type: ignore[arg-type]
    assert not isinstance(result, int)
    assert "analysis seen during up" in events.order, events.order
    assert events.order.index("analysis start") < events.order.index("up end")


def test_a_stacks_analysis_ends_before_the_plan_moves_on_even_when_the_up_run_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events, release = _Events(), threading.Event()
    _patch(monkeypatch, events, up_fails=True)

    def analyse(pack_dir: Path, capture: Capture, **_: object) -> PolicyResult:
        events.note("analysis start")
        release.wait(0.3)  # still talking to the pack when the up run has failed
        events.note("analysis end")
        return PolicyResult("policies")

    monkeypatch.setattr(cli, "run_policy_pack", analyse)
    result = cli._plan_with(_args(), _config(), "1.33", "subprocess", object(), None)  # type: ignore[arg-type]
    events.note("plan returned")
    assert result == 1
    assert events.order.index("analysis end") < events.order.index("plan returned"), events.order


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
    _patch(monkeypatch, _Events())

    def analyse(pack_dir: Path, capture: Capture, **_: object) -> PolicyResult:
        raise PolicyError("policy pack policies: Analyze failed: boom")

    monkeypatch.setattr(cli, "run_policy_pack", analyse)
    result = cli._plan_with(_args(), _config(), "1.33", "subprocess", object(), None)  # type: ignore[arg-type]
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
    real_run, real_analyse = cli._run, cli.run_policy_pack

    def up_elsewhere(config: StackConfig, *, preview: bool) -> tuple[Capture, int]:
        if preview:
            return real_run(config, preview=preview)
        os.chdir(elsewhere)  # as the program's run does, for long enough that the analysis starts meanwhile
        try:
            time.sleep(1.0)
            return real_run(config, preview=preview)
        finally:
            os.chdir(tmp_path)

    def analyse_later(*args: object, **kwargs: object) -> PolicyResult:
        time.sleep(0.3)
        return real_analyse(*args, **kwargs)

    monkeypatch.setattr(cli, "_run", up_elsewhere)
    monkeypatch.setattr(cli, "run_policy_pack", analyse_later)
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
