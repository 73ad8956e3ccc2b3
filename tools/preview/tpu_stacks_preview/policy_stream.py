"""The policy pack judging a preview's registrations while the program still runs, as the Pulumi engine does.

The engine calls the analyzer's Analyze for each resource as it is registered (pulumi/pulumi
pkg/resource/deploy/step_generator.go, `generateSteps`, preview included; a ReadResource's steps are not analysed),
and AnalyzeStack once the program ends. `tpu-stacks plan` used to wait for the whole preview and then send every
request: the pack (a process of its own, on the other core) sat idle through the run and then held the plan up at
its end. Here each registration goes to the pack from a thread of its own as the engine records it (`RunListener`),
and only the stack's request waits for
the run. What the pack is told is what the batch path tells it (the same requests, built by analyze_requests.py, and
the same configuration first); the violations are put in one order at the end, so the verdict is the same.

A run the engine starts again (a secret it stopped on, filled with a placeholder) makes what it registered before
void: its violations are dropped and the stack's config is sent again. A run that fails is abandoned: nothing more is
sent, and the thread ends before another stack's analysis may start on the same pack process.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Mapping
from typing import Any

from tpu_stacks_preview.analyze_requests import analyze_request
from tpu_stacks_preview.capture import Capture, ResourceRecord
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.policy import PackServer, PolicyResult, Violation, analyzed, begin, configure_stack, verdict


class StreamedAnalysis:
    """A pack's analysis of one preview, fed as the program registers; a `RunListener` of the offline engine."""

    def __init__(self, server: PackServer, config: StackConfig, user_config: dict | None) -> None:
        self._items: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._outcome: PolicyResult | BaseException | None = None
        self._thread = threading.Thread(
            target=self._keep, args=(server, config, user_config), name="tpu-stacks-policy", daemon=True
        )
        self._thread.start()

    # -- what the engine and the command tell it ---------------------------------------------------------------

    def registered(self, record: ResourceRecord, config: StackConfig, records: Mapping[str, ResourceRecord]) -> None:
        self._items.put(("record", record, config, records))

    def restarted(self, config: StackConfig) -> None:
        self._items.put(("restart", config))

    def finish(self, capture: Capture) -> None:
        """The preview ended: judge the stack (its request is built from the finished run)."""
        self._items.put(("finish", capture))

    def abandon(self) -> None:
        """The preview failed: send nothing more."""
        self._items.put(("abandon",))

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> PolicyResult | None:
        """The verdict once `finish` was told (raising what the analysis raised); None after `abandon`."""
        self._thread.join()
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        return self._outcome

    # -- the thread ---------------------------------------------------------------------------------------------

    def _keep(self, server: PackServer, config: StackConfig, user_config: dict | None) -> None:
        try:
            self._outcome = self._analyze(server, config, user_config)
        except BaseException as error:  # noqa: BLE001 - handed to the caller of result()
            self._outcome = error

    def _analyze(self, server: PackServer, config: StackConfig, user_config: dict | None) -> PolicyResult | None:
        with server.session() as call:
            info = begin(call, user_config, config, preview=True)
            violations: list[Violation] = []
            while True:
                kind, *rest = self._items.get()
                if kind == "record":
                    record, run_config, records = rest
                    violations += analyzed(call, analyze_request(record, run_config, records))
                elif kind == "restart":
                    violations = []
                    configure_stack(call, rest[0], preview=True)
                elif kind == "finish":
                    return verdict(call, info, rest[0], violations, server.version)
                else:
                    return None
