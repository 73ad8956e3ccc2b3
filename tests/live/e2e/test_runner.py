"""The e2e runner with a fake Automation API stack: the calls and their order, each step's timing, the stop at
the first failure with its one line, destroy after a failure once up has started, --keep, the TPU hours line.

The fake speaks the SDK's own types where the runner reads them: a failed command raises the SDK's CommandError
(built from its CommandResult) and reports through `on_event` the SDK's EngineEvent/DiagnosticEvent/
ResourcePreEvent, so the one-line extraction is tested on what Pulumi 3.272.0 hands over.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from pulumi.automation import CommandError, CommandResult
from pulumi.automation.events import (
    DiagnosticEvent,
    EngineEvent,
    OpType,
    ResourcePreEvent,
    StepEventMetadata,
)

from tpu_stacks.errors import UserError
from tpu_stacks_live.e2e.budget import Budget, TpuPool
from tpu_stacks_live.e2e.runner import STEPS, Runner

POOL_URN = "urn:pulumi:dev::tpu-stacks::tpu-stacks:index:TpuCluster$gcp:container/nodePool:NodePool::vllm-pool"
BUDGET = Budget("dev", (TpuPool("vllm-pool", "ct6e-standard-4t", 2, 8),), (), ("smoke-test-abc",))


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def diagnostic(message: str, urn: str | None = POOL_URN) -> EngineEvent:
    return EngineEvent(
        0, 0, diagnostic_event=DiagnosticEvent(message=message, color="never", severity="error", urn=urn)
    )


def proposed(op: OpType, urn: str) -> EngineEvent:
    metadata = StepEventMetadata(op=op, urn=urn, type=urn.split("::")[-2].rsplit("$", 1)[-1], provider="")
    return EngineEvent(0, 0, resource_pre_event=ResourcePreEvent(metadata))


def command_error(stderr: str, stdout: str = "", code: int = 255) -> CommandError:
    return CommandError(CommandResult(stdout=stdout, stderr=stderr, code=code))


class FakeStack:
    """Records each call (name, kwargs), advances the clock by `minutes[name]`, and runs `script[name]`: a
    callable given the call's kwargs that may emit events and raise."""

    def __init__(self, log: list[str], clock: Clock, minutes: dict[str, float], script: dict[str, Callable]) -> None:
        self.log, self.clock, self.minutes, self.script = log, clock, minutes, script
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _call(self, name: str, kwargs: dict[str, Any]) -> Any:
        self.log.append(name)
        self.calls.append((name, kwargs))
        self.clock.t += 60 * self.minutes.get(name, 0)
        kwargs["on_output"](f"pulumi {name} output")
        action = self.script.get(name)
        return action(kwargs) if action else type("Result", (), {"change_summary": {OpType.SAME: 30}})()

    def up(self, **kwargs: Any) -> Any:
        return self._call("up", kwargs)

    def preview(self, **kwargs: Any) -> Any:
        return self._call("preview", kwargs)

    def destroy(self, **kwargs: Any) -> Any:
        return self._call("destroy", kwargs)


seen_kubeconfigs: list[str | None] = []
"""What each fake verify was handed (the kubeconfig of up's outputs)."""


def make(
    *,
    keep: bool = False,
    script: dict[str, Callable] | None = None,
    verify: tuple[int, str] = (0, ""),
    plan: Callable[[], Budget] | None = None,
) -> tuple[Runner, FakeStack, list[str], io.StringIO, io.StringIO]:
    log: list[str] = []
    seen_kubeconfigs.clear()
    clock = Clock()
    minutes = {"plan": 0.1, "up": 12, "verify": 1, "preview": 2, "destroy": 8}
    stack = FakeStack(log, clock, minutes, script or {})

    def plan_step() -> Budget:
        log.append("plan")
        clock.t += 60 * minutes["plan"]
        return plan() if plan else BUDGET

    def open_stack() -> FakeStack:
        log.append("select")
        return stack

    def verify_step(kubeconfig: str | None) -> tuple[int, str]:
        log.append("verify")
        seen_kubeconfigs.append(kubeconfig)
        clock.t += 60 * minutes["verify"]
        return verify

    out, err = io.StringIO(), io.StringIO()
    runner = Runner("dev", plan_step, open_stack, verify_step, keep=keep, out=out, err=err, now=clock)
    return runner, stack, log, out, err


def failure_lines(err: io.StringIO) -> list[str]:
    return [line for line in err.getvalue().splitlines() if line.startswith("tpu-stacks:")]


def test_a_passing_run_calls_every_step_in_order_and_times_each():
    runner, stack, log, out, err = make()
    assert runner.run() == 0
    assert log == ["plan", "select", "up", "verify", "preview", "destroy"]
    text = out.getvalue()
    for line in ["e2e: up passed in 12m 00s", "e2e: verify passed in 1m 00s", "e2e: preview passed in 2m 00s",
                 "e2e: destroy passed in 8m 00s", "e2e: plan passed in 6s"]:  # fmt: skip
        assert line in text
    assert "pulumi up output" in text  # Pulumi's own output is streamed through
    assert "smoke-test Job (smoke-test-abc) is part of up" in text
    assert failure_lines(err) == []
    summary = text.split("e2e: summary\n", 1)[1].splitlines()
    assert [line.split()[0] for line in summary[: len(STEPS)]] == list(STEPS)
    assert all(line.endswith("passed") for line in summary[: len(STEPS)])


def test_the_preview_expects_no_changes_and_every_command_streams_without_colour():
    runner, stack, *_ = make()
    runner.run()
    calls = dict(stack.calls)
    assert calls["preview"]["expect_no_changes"] is True
    assert "expect_no_changes" not in calls["up"] and "expect_no_changes" not in calls["destroy"]
    for kwargs in calls.values():
        assert kwargs["color"] == "never" and callable(kwargs["on_event"]) and callable(kwargs["on_error"])


def test_tpu_hours_are_the_pools_chips_times_up_to_destroy_and_said_to_be_at_most():
    runner, _, _, out, _ = make()
    runner.run()
    # up 12 + verify 1 + preview 2 + destroy 8 = 23 minutes of 8 chips
    line = next(line for line in out.getvalue().splitlines() if "TPU time" in line)
    assert f"at most {8 * 23 / 60:.2f} chip-hours (8 chips" in line
    assert "23m 00s from up to destroy" in line and "real figure is lower" in line


def test_a_failed_up_stops_with_the_resources_error_line_and_destroys():
    def fail_up(kwargs: dict[str, Any]) -> None:
        kwargs["on_event"](diagnostic("update failed", urn="urn:pulumi:dev::tpu-stacks::pulumi:pulumi:Stack::x"))
        kwargs["on_event"](
            diagnostic("<{%reset%}>googleapi: Error 403: Insufficient regional quota: TPUS_V6E<{%reset%}>\nmore")
        )
        kwargs["on_event"](diagnostic("update failed", urn=None))
        raise command_error("error: update failed")

    runner, _, log, out, err = make(script={"up": fail_up})
    assert runner.run() == 1
    assert log == ["plan", "select", "up", "destroy"]
    assert failure_lines(err) == [
        "tpu-stacks: e2e failed at up: NodePool vllm-pool: googleapi: Error 403: Insufficient regional quota: TPUS_V6E"
    ]
    assert "destroy after the failed up" in out.getvalue()
    assert "verify            -  not run" in out.getvalue()


def test_without_engine_events_the_line_comes_from_the_command_error():
    stdout = "Updating (dev)\n\n    error: no stack named 'dev' found\n"
    runner, _, _, _, err = make(script={"up": lambda kwargs: (_ for _ in ()).throw(command_error("", stdout))})
    runner.run()
    assert failure_lines(err) == ["tpu-stacks: e2e failed at up: error: no stack named 'dev' found"]
    runner, _, _, _, err = make(script={"up": lambda kwargs: (_ for _ in ()).throw(command_error("", "", 3))})
    runner.run()
    assert failure_lines(err) == ["tpu-stacks: e2e failed at up: pulumi exited with code 3"]


def test_a_failed_verify_skips_the_preview_and_still_destroys():
    line = "FAIL    tpu-topology: the pool has 1 node, the plan 2 -> raise the quota"
    runner, stack, log, out, err = make(verify=(1, line))
    assert runner.run() == 1
    assert log == ["plan", "select", "up", "verify", "destroy"]
    assert failure_lines(err) == [f"tpu-stacks: e2e failed at verify: {line}"]
    assert "preview           -  not run" in out.getvalue()


def test_keep_leaves_the_stack_up_and_says_so():
    runner, _, log, out, err = make(keep=True, verify=(1, "FAIL    x: y"))
    assert runner.run() == 1
    assert "destroy" not in log
    text = out.getvalue()
    assert "destroy skipped (--keep)" in text and "pulumi destroy --stack dev" in text
    assert "until now (the stack is still up)" in text
    runner, _, log, _, _ = make(keep=True)
    assert runner.run() == 0 and log[-1] == "preview"


def test_a_preview_that_proposes_changes_fails_naming_them():
    def changing(kwargs: dict[str, Any]) -> None:
        kwargs["on_event"](proposed(OpType.SAME, POOL_URN))
        kwargs["on_event"](proposed(OpType.UPDATE, POOL_URN))
        kwargs["on_event"](proposed(OpType.READ, POOL_URN.replace("vllm-pool", "data")))
        raise command_error("error: no changes were expected but changes were proposed")

    runner, _, log, _, err = make(script={"preview": changing})
    assert runner.run() == 1
    assert log[-1] == "destroy"
    assert failure_lines(err) == [
        "tpu-stacks: e2e failed at preview: changes proposed after up: update NodePool vllm-pool"
    ]


def test_a_preview_summary_with_changes_fails_even_when_the_cli_did_not():
    result = type("Result", (), {"change_summary": {OpType.SAME: 20, OpType.REPLACE: 1, OpType.READ: 2}})()
    runner, _, _, _, err = make(script={"preview": lambda kwargs: result})
    assert runner.run() == 1
    assert failure_lines(err) == ["tpu-stacks: e2e failed at preview: changes proposed after up: 1 replace"]


def test_a_failed_destroy_says_resources_may_remain():
    runner, _, _, _, err = make(script={"destroy": lambda kwargs: (_ for _ in ()).throw(command_error("error: boom"))})
    assert runner.run() == 1
    assert failure_lines(err) == [
        "tpu-stacks: e2e failed at destroy: error: boom",
        "tpu-stacks: resources may still exist: `pulumi destroy --stack dev` removes them",
    ]


def test_a_failed_verify_then_a_failed_destroy_reports_both():
    script = {"destroy": lambda kwargs: (_ for _ in ()).throw(command_error("error: boom"))}
    runner, _, _, _, err = make(script=script, verify=(1, "FAIL    a: b"))
    assert runner.run() == 1
    assert failure_lines(err) == [
        "tpu-stacks: e2e failed at verify: FAIL    a: b",
        "tpu-stacks: destroy failed too: error: boom; `pulumi destroy --stack dev` removes them",
    ]


def test_nothing_reaches_the_cloud_when_the_plan_is_the_users_mistake():
    def bad_plan() -> Budget:
        raise UserError("tpu-stacks:vllm.model", "nope", "is not in the catalogue", "run tpu-stacks models")

    runner, stack, log, _, _ = make(plan=bad_plan)
    with pytest.raises(UserError):
        runner.run()
    assert log == ["plan"] and stack.calls == []


def test_a_failed_select_creates_nothing_and_destroys_nothing():
    runner, stack, log, out, err = make()
    runner.open_stack = lambda: (_ for _ in ()).throw(FileNotFoundError(2, "No such file", "pulumi"))
    assert runner.run() == 1
    assert log == ["plan"] and stack.calls == []
    assert failure_lines(err)[0].startswith("tpu-stacks: e2e failed at select: FileNotFoundError")
    assert "TPU time" not in out.getvalue()  # nothing could have been created


def test_verify_reads_the_cluster_up_created():
    """up's `kubeconfig` output goes to verify; a stack that exports none leaves verify to the user's own."""
    kubeconfig = "apiVersion: v1\nkind: Config\n"
    output = type("OutputValue", (), {"value": kubeconfig, "secret": True})()
    result = type("UpResult", (), {"outputs": {"kubeconfig": output}})()
    runner, _, _, _, _ = make(script={"up": lambda kwargs: result})
    assert runner.run() == 0
    assert seen_kubeconfigs == [kubeconfig]
    runner, _, _, _, _ = make()
    assert runner.run() == 0
    assert seen_kubeconfigs == [None]


def test_a_providers_error_list_gives_its_first_item():
    """pulumi-gcp reports "1 error occurred:" then the items; the item is the line to show."""
    from tpu_stacks_live.e2e.failure import Events

    events = Events()
    diagnostic = type(
        "Diagnostic",
        (),
        {
            "severity": "error",
            "urn": "urn:pulumi:dev::tpu-stacks::gcp:container/nodePool:NodePool::vllm-pool",
            "message": "1 error occurred:\n\t* creating NodePool: googleapi: Error 403: quota exceeded\n\n",
        },
    )()
    events(type("EngineEvent", (), {"diagnostic_event": diagnostic, "resource_pre_event": None})())
    assert events.errors == ["NodePool vllm-pool: creating NodePool: googleapi: Error 403: quota exceeded"]
