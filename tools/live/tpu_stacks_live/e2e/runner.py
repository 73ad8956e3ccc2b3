"""The e2e steps, in order, timed, stopping at the first failure: plan, select, up, verify, preview, destroy.

Why a runner of its own, apart from the Automation API: everything up to the Pulumi CLI call (the order, what
runs after a failure, the timing, the one line, the exit code, the TPU hours) is tested offline with a fake
stack object; `automation.py` is the only code that reaches the CLI.

- plan: the stack's offline plan (no cloud), for the TPU bound and the smoke-test Job (budget.py).
- select: select the Automation API stack, creating it when the backend has none.
- up: `pulumi up`. A serving stack's smoke-test Job is one of its resources, and pulumi-kubernetes awaits a Job
  until it completes (components/tpu_stacks/objects/awaits.py, AWAITED_KINDS), so a passing up is a passing smoke test.
- verify: `tpu-stacks verify --stack S` (exit 0 passes, 1 fails).
- preview: a second preview that must propose no change (`--expect-no-changes`).
- destroy: attempted once up has started, whatever failed after it (a failed run must not leave TPU slices
  billing), unless `--keep`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from tpu_stacks.errors import UserError
from tpu_stacks_live.e2e.budget import Budget, clock
from tpu_stacks_live.e2e.failure import NO_CHANGE_OPS, Events, one_line

STEPS = ("plan", "select", "up", "verify", "preview", "destroy")


class StackOps(Protocol):
    """What the runner calls on a stack: the Automation API's Stack (pulumi/automation/_stack.py, up line 320,
    preview line 459, destroy line 920 of SDK 3.272.0) or a test's fake."""

    def up(self, **kwargs: Any) -> Any: ...

    def preview(self, **kwargs: Any) -> Any: ...

    def destroy(self, **kwargs: Any) -> Any: ...


def kubeconfig_of(up_result: Any) -> str | None:
    """The `kubeconfig` stack output of `up` (UpResult.outputs: name -> OutputValue(value, secret), pulumi/automation/
    _stack.py), which every shipped stack exports: verify then reads the cluster this run created, not whatever the
    user's current kubectl context names."""
    outputs = getattr(up_result, "outputs", None) or {}
    value = getattr(outputs.get("kubeconfig"), "value", None)
    return value if isinstance(value, str) and value else None


@dataclass
class StepResult:
    name: str
    ok: bool | None  # None: not run
    seconds: float = 0.0
    line: str = ""


class StepFailed(Exception):
    """A step's failure, as its one line."""


@dataclass
class Runner:
    """One e2e run. `plan` gives the budget, `open_stack` the stack, `verify` runs `tpu-stacks verify` against the
    cluster `up` reported (its kubeconfig output, None when the stack exports none) and returns its exit code and the
    line to show when it is not 0."""

    stack_name: str
    plan: Callable[[], Budget]
    open_stack: Callable[[], StackOps]
    verify: Callable[[str | None], tuple[int, str]]
    keep: bool = False
    out: TextIO = sys.stdout
    err: TextIO = sys.stderr
    now: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.results = {name: StepResult(name, None) for name in STEPS}
        self.budget: Budget | None = None
        self.stack: StackOps | None = None
        self.up_started: float | None = None
        self.kubeconfig: str | None = None

    # --- output ---------------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        print(f"e2e: {text}", file=self.out, flush=True)

    def _pulumi_kwargs(self, events: Events) -> dict[str, Any]:
        """Pulumi's own output streamed as it comes (on_output/on_error get one line each, _cmd.py line 235),
        without colour codes in logs; engine events to `events`."""
        return {
            "on_output": lambda line: print(line, file=self.out, flush=True),
            "on_error": lambda line: print(line, file=self.err, flush=True),
            "on_event": events,
            "color": "never",
        }

    # --- the steps ------------------------------------------------------------------------------------

    def _step(self, name: str, action: Callable[[], None]) -> bool:
        self.say(f"{name} ...")
        started = self.now()
        try:
            action()
        except UserError:
            if self.up_started is None:  # the user's input, before anything was created: exit 2, one line
                raise
            ok, line = False, str(sys.exc_info()[1])
        except StepFailed as failed:
            ok, line = False, str(failed)
        except Exception as error:  # noqa: BLE001 - any failure of a cloud step still leads to destroy
            ok, line = False, f"{type(error).__name__}: {' '.join(str(error).split())}"[:500]
        else:
            ok, line = True, ""
        result = self.results[name]
        result.ok, result.seconds, result.line = ok, self.now() - started, line
        self.say(f"{name} {'passed' if ok else 'FAILED'} in {clock(result.seconds)}" + (f": {line}" if line else ""))
        return ok

    def _pulumi(self, call: Callable[[Events], Any], events: Events) -> Any:
        try:
            return call(events)
        except Exception as error:  # noqa: BLE001 - CommandError and its kinds (automation/errors.py line 22)
            raise StepFailed(one_line(error, events)) from error

    def _plan(self) -> None:
        self.budget = self.plan()
        self.say(self.budget.describe())
        self.say(self.budget.smoke_line())

    def _open(self) -> None:
        self.stack = self.open_stack()

    def _up(self) -> None:
        assert self.stack is not None
        stack = self.stack
        result = self._pulumi(lambda events: stack.up(**self._pulumi_kwargs(events)), Events())
        self.kubeconfig = kubeconfig_of(result)

    def _verify(self) -> None:
        code, line = self.verify(self.kubeconfig)
        if code != 0:
            raise StepFailed(line or f"tpu-stacks verify exited {code}")

    def _preview(self) -> None:
        assert self.stack is not None
        stack = self.stack
        events = Events(proposals=True)
        result = self._pulumi(lambda e: stack.preview(expect_no_changes=True, **self._pulumi_kwargs(e)), events)
        # --expect-no-changes already fails the command on a change; the summary is read too, so a CLI that
        # ignored the flag could not pass a changing stack (PreviewResult.change_summary, _stack.py line 152).
        summary = getattr(result, "change_summary", None) or {}
        proposed = {str(getattr(op, "value", op)): n for op, n in summary.items() if n}
        changes = sorted((op, n) for op, n in proposed.items() if op not in NO_CHANGE_OPS)
        if changes:
            raise StepFailed("changes proposed after up: " + ", ".join(f"{n} {op}" for op, n in changes))

    def _destroy(self) -> None:
        assert self.stack is not None
        stack = self.stack
        self._pulumi(lambda events: stack.destroy(**self._pulumi_kwargs(events)), Events())

    # --- the run --------------------------------------------------------------------------------------

    def run(self) -> int:
        """0 when every step passed, 1 at the first failure (after destroy, unless --keep)."""
        if not self._step("plan", self._plan) or not self._step("select", self._open):
            return self._finish()
        self.up_started = self.now()
        try:
            if self._step("up", self._up) and self._step("verify", self._verify):
                self._step("preview", self._preview)
        except KeyboardInterrupt:
            self.err.write(f"tpu-stacks: e2e interrupted; the stack may hold resources: {self._destroy_hint()}\n")
            raise
        if self.keep:
            self.say(f"destroy skipped (--keep): the stack is still up; {self._destroy_hint()} when done")
        else:
            failed = next((r.name for r in self.results.values() if r.ok is False), None)
            if failed:
                self.say(f"destroy after the failed {failed}: up had started, so resources may exist")
            self._step("destroy", self._destroy)
        return self._finish()

    def _destroy_hint(self) -> str:
        return f"`pulumi destroy --stack {self.stack_name}` removes them"

    def _finish(self) -> int:
        self.say("summary")
        for result in self.results.values():
            state = "not run" if result.ok is None else ("passed" if result.ok else "FAILED")
            timing = clock(result.seconds) if result.ok is not None else "-"
            print(f"  {result.name:<8} {timing:>10}  {state}", file=self.out)
        destroyed = self.results["destroy"].ok is True
        if self.budget is not None and self.up_started is not None:
            seconds = self.now() - self.up_started
            self.say(self.budget.spent_line(seconds, still_running=not destroyed))
        failures = [r for r in self.results.values() if r.ok is False]
        if not failures:
            return 0
        first = failures[0]
        print(f"tpu-stacks: e2e failed at {first.name}: {first.line}", file=self.err)
        destroy = self.results["destroy"]
        if destroy.ok is False and first.name != "destroy":
            print(f"tpu-stacks: destroy failed too: {destroy.line}; {self._destroy_hint()}", file=self.err)
        elif first.name == "destroy":
            print(f"tpu-stacks: resources may still exist: {self._destroy_hint()}", file=self.err)
        return 1
