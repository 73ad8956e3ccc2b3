"""Run a Pulumi Python program in-process against the capturing monitor: an offline `pulumi preview`.

The program runs the way the Python language host runs it (`run_in_stack` around `runpy`), but on
a private thread with its own event loop and fresh runtime settings. The SDK keeps its settings,
config and root stack in ContextVars and binds the root Stack to a loop; a private thread starts
from an empty context, so one run cannot leak into the next or into classic mock-based tests in
the same process. Program modules are evicted from `sys.modules` before and after each run
(see `imports`), so code that creates resources at import time runs every time.
"""

from __future__ import annotations

import asyncio
import contextlib
import runpy
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pulumi
from pulumi.runtime import config as runtime_config
from pulumi.runtime import resource as runtime_resource
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_in_stack

from tpu_stacks.errors import MISSING, UserError
from tpu_stacks_preview.capture import Capture, ProgramError
from tpu_stacks_preview.config import StackConfig, load_stack_config
from tpu_stacks_preview.imports import isolated_imports
from tpu_stacks_preview.mocks import OfflineMocks
from tpu_stacks_preview.monitor import CaptureEngine, CaptureMonitor, DuplicateUrnError, RunListener, TransformError

__all__ = ["run_program", "Capture", "ProgramError"]


def run_program(
    project_dir: Path,
    stack: str,
    *,
    preview: bool,
    config: StackConfig | None = None,
    placeholder_secrets: bool = True,
    listener: RunListener | None = None,
) -> Capture:
    """Run the project's program for `stack` under mocks and return what the engine would have seen.

    `preview=True` gives `pulumi preview` semantics (computed outputs unknown); `preview=False`
    fills computed values so `apply()` code runs. A missing stack file raises `UserError` (the
    caller's input); anything the program raises comes back as `Capture.error`. Without `config`,
    the program's missing secrets stand in as placeholders (the committed stack files hold none and
    a test has no token to give); `tpu-stacks plan` is strict unless asked (`--placeholder-secrets`). When
    filling (`config.fill_secrets`), a secret the program requires in any namespace is filled too: the run stops
    on it and the program runs again with it standing in (`Capture.config` then names it). A `listener` hears of
    each registration as it is recorded, and of each run started again.
    """
    config = config or load_stack_config(Path(project_dir), stack, placeholder_secrets=placeholder_secrets)
    while True:
        capture, stop = _run_once(config, preview, listener)
        if stop.missing is None or stop.missing in config.values:
            return _typed_placeholder(capture, stop)
        if not config.fill_secrets:
            if capture.error is not None:  # the SDK's text advises `<value>` on the command line: not that
                capture.error.message = str(
                    UserError(
                        stop.missing,
                        MISSING,
                        f"is a secret the program requires and stack {config.stack!r} does not set",
                        f"pulumi config set --secret {stop.missing} prompts for it; offline, --placeholder-secrets "
                        "stands in a placeholder",
                    )
                )
            return capture
        # A secret read in any namespace (`pulumi.Config("my-serving").require_secret("hfToken")`): the SDK
        # raises ConfigMissingError(key, secret=True) at the read (pulumi/config.py, Config._require), so the
        # program runs again with that key standing in; each pass adds one key, so this ends.
        config = config.with_placeholder(stop.missing)
        if listener is not None:
            listener.restarted(config)


def _typed_placeholder(capture: Capture, stop: _Stop) -> Capture:
    """A placeholder is text: a secret the program reads as a bool, number or object
    (`require_secret_object`) cannot stand in, and the SDK's ConfigTypeError would show the placeholder as the
    user's value. Say that instead, in one line naming the key."""
    if capture.error is not None and stop.mistyped is not None and stop.mistyped[0] in capture.config.placeholders:
        key, kind = stop.mistyped
        capture.error.message = str(
            UserError(
                key,
                MISSING,
                f"is a secret the program reads as {kind} and the stack does not set; a placeholder stands in for "
                "text only",
                f"pulumi config set --secret {key} prompts for it",
            )
        )
    return capture


@dataclass(frozen=True)
class _Stop:
    """Why a run stopped on config, for `run_program` to act on: the secret it lacked (`ns:key`), or the key
    and type the SDK could not read its value as (ConfigTypeError)."""

    missing: str | None = None
    mistyped: tuple[str, str] | None = None


def _run_once(config: StackConfig, preview: bool, listener: RunListener | None = None) -> tuple[Capture, _Stop]:
    """One run of the program; and the config it stopped on, if it did."""
    box = _Box()
    roots = [config.main.parent, config.project_dir]
    with isolated_imports(roots, cwd=config.main.parent), _no_source_positions():  # as the language host runs it
        worker = threading.Thread(
            target=_run_on_private_loop, args=(config, preview, box, listener), name="tpu-stacks-offline", daemon=True
        )
        worker.start()
        worker.join()
    if box.crash is not None:
        raise box.crash  # a bug in this module, not in the program
    if box.capture is None:
        raise RuntimeError("the offline engine's thread ended without a capture or an error")
    return box.capture, box.stop


@contextlib.contextmanager
def _no_source_positions() -> Iterator[None]:
    """The SDK sends the engine where each resource was declared: the stack of its construction, each frame's source
    line read (`_get_stack_trace`, about 1 ms a resource), in the sourcePosition and stackTrace of the
    RegisterResourceRequest (or ReadResourceRequest) alone (ledger: pulumi.runtime.stack-trace-sent,
    pulumi.runtime.source-position-sent). This engine records neither, and no analyzer request carries them: the runs
    skip computing them (an empty trace, as the SDK sends when it finds no frame of the program's), and the SDK's own
    function is back once the run ends. Runs are one at a time (`isolated_imports` moves the working directory)."""
    computed = runtime_resource._get_stack_trace
    runtime_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        runtime_resource._get_stack_trace = computed


@dataclass
class _Box:
    """What the worker thread hands back: the capture, or the crash of this module's own code."""

    capture: Capture | None = None
    crash: BaseException | None = None
    stop: _Stop = _Stop()


def _run_on_private_loop(config: StackConfig, preview: bool, box: _Box, listener: RunListener | None = None) -> None:
    try:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_quiet)
        asyncio.set_event_loop(loop)
        monitor = CaptureMonitor(OfflineMocks(config, preview=preview), config, listener)
        engine = CaptureEngine()
        capture = Capture(config=config, preview=preview)
        started = time.perf_counter()
        try:
            runtime_settings.Settings(
                project=config.project,
                stack=config.stack,
                monitor=monitor,
                engine=engine,
                dry_run=preview,
                organization="organization",
                root_directory=str(config.project_dir),
            )
            runtime_settings.ROOT.set(None)
            runtime_config.set_all_config(dict(config.values), sorted(config.secret_keys))
            program = str(config.main)
            loop.run_until_complete(run_in_stack(lambda: runpy.run_path(program, run_name="__main__")))
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - the program's failure is data, not a crash
            capture.error = describe_error(error)
            box.stop = stopped_on(error)
        finally:
            monitor.close()
            _close_loop(loop)
        capture.seconds = time.perf_counter() - started
        capture.resources = list(monitor.records.values())
        root = monitor.records.get(monitor.stack_urn)
        capture.stack_outputs = dict(root.outputs or {}) if root is not None else {}
        capture.invokes = list(monitor.invokes)
        capture.logs = list(engine.logs)
        box.capture = capture
    except BaseException as crash:  # noqa: BLE001 - handed back to the calling thread
        box.crash = crash


def describe_error(error: BaseException) -> ProgramError:
    """One line for people: a UserError or missing config is the user's; the rest is the program's."""
    detail = "".join(traceback.format_exception(error))
    for cause in _causes(error):
        if isinstance(cause, UserError):
            return ProgramError(str(cause), "user", detail)
        if isinstance(cause, (pulumi.ConfigMissingError, pulumi.ConfigTypeError)):
            return ProgramError(" ".join(str(cause).split()), "user", detail)
    if isinstance(error, SystemExit):
        return ProgramError(f"the program called sys.exit({error.code!r})", "program", detail)
    text = str(error).strip() or type(error).__name__
    if isinstance(error, (pulumi.RunError, DuplicateUrnError, TransformError)):
        return ProgramError(text, "program", detail)
    return ProgramError(f"{type(error).__name__}: {text}", "program", detail)


def stopped_on(error: BaseException) -> _Stop:
    """The secret whose absence stopped the program (`require_secret` and its typed forms raise
    ConfigMissingError with `secret=True`; a plain `require` is not a secret's), or the key whose value the SDK
    could not read as its type (ConfigTypeError: `key`, `expect_type`)."""
    for cause in _causes(error):
        if isinstance(cause, pulumi.ConfigMissingError) and cause.secret:
            return _Stop(missing=cause.key)
        if isinstance(cause, pulumi.ConfigTypeError):
            return _Stop(mistyped=(cause.key, cause.expect_type))
    return _Stop()


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The run's error is reported once, from `run_in_stack`; futures that also held it stay quiet."""


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the failed program left behind, stop executor threads, close the loop."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
