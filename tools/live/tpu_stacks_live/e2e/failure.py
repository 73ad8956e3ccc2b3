"""One line out of a failed Pulumi command, and what a preview proposed.

A failed `up` prints pages (the resource tree, then "Diagnostics:"); the run's user needs the one line that
says which resource failed and why. Pulumi's engine sends that as a structured event: a DiagnosticEvent of
severity "error" with the resource's URN (pulumi/automation/events.py, class DiagnosticEvent, line 89 of the
pinned SDK 3.272.0). `Events` collects those from the Automation API's `on_event` callback; when none came
(the CLI failed before the engine ran: no login, no such stack), the line is read from the CommandError's
text, which holds the command's exit code, stdout and stderr (pulumi/automation/_cmd.py `CommandResult.__str__`,
line 44; errors.py `CommandError.__init__`, line 23, keeps only that text).

A preview that must propose no change gets `--expect-no-changes` (Stack.preview(expect_no_changes=...),
_stack.py line 467, passed as the CLI flag in `_parse_extra_args`, line 1608), which fails the command;
`Events` also keeps each step the preview announced (ResourcePreEvent, events.py line 468) so the line names
what would change. Pulumi counts every operation but same, read, read-discard and read-replacement as a
change (pulumi/pulumi pkg/engine `ResourceChanges.HasChanges`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

NO_CHANGE_OPS = frozenset({"same", "read", "discard", "read-replacement"})
"""OpType values (events.py line 24) that are not changes; read-discard is spelled "discard" there."""

_GENERIC = re.compile(r"^(error: )?((update|preview|destroy|refresh) failed|\d+ errors? occurred:?)$", re.IGNORECASE)
"""Summary diagnostics the engine adds on the stack resource after the real one: never the line to show."""


_COLOUR = re.compile(r"<\{%[^%]*%\}>")
"""Pulumi's colour markup (pulumi/pulumi sdk/go/common/diag/colors: `<{%` command `%}>`, e.g. `<{%reset%}>`),
which an engine event's message carries whatever `--color` says."""


def _first_line(text: str) -> str:
    """The first line that says something: a provider's "1 error occurred:" heads a list (`\t* creating NodePool:
    googleapi: Error 403 ...`), whose first item is the line to show, without its bullet."""
    lines = [line.strip().removeprefix("* ") for line in _COLOUR.sub("", str(text)).splitlines() if line.strip()]
    return next((line for line in lines if not _GENERIC.match(line)), "")


def _resource(urn: str | None) -> str:
    """`urn:pulumi:dev::tpu-stacks::a$gcp:container/nodePool:NodePool::vllm-pool` -> `NodePool vllm-pool`."""
    if not urn or "::" not in urn:
        return ""
    parts = urn.split("::")
    kind = parts[-2].rsplit("$", 1)[-1].rsplit(":", 1)[-1]
    return f"{kind} {parts[-1]}"


@dataclass
class Events:
    """The `on_event` callback of one Pulumi command: its error diagnostics and, for the preview that must
    propose nothing (`proposals=True`), the changes it announced, in order."""

    proposals: bool = False
    errors: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)

    def __call__(self, event: Any) -> None:
        diagnostic = getattr(event, "diagnostic_event", None)
        if diagnostic is not None and diagnostic.severity == "error":
            message = _first_line(diagnostic.message)
            if message:
                where = _resource(diagnostic.urn)
                self.errors.append(f"{where}: {message}" if where else message)
        pre = getattr(event, "resource_pre_event", None)
        if pre is not None and self.proposals:
            op = getattr(pre.metadata.op, "value", pre.metadata.op)
            if op not in NO_CHANGE_OPS:
                self.changes.append(f"{op} {_resource(pre.metadata.urn)}")


def from_command_text(text: str) -> str:
    """The line of a CommandError's text that says what went wrong: the first specific `error:` line, else the
    last line of its stderr, else its exit code."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error:") and not _GENERIC.match(line)]
    if errors:
        return errors[0]
    stderr = text.split(" stderr:", 1)[1] if " stderr:" in text else ""
    tail = [line.strip() for line in stderr.splitlines() if line.strip()]
    if tail:
        return tail[-1]
    code = re.search(r"code: (-?\d+)", text)
    return f"pulumi exited with code {code.group(1)}" if code else (lines[-1] if lines else "pulumi failed")


def one_line(error: BaseException, events: Events) -> str:
    """The one line of a failed command: the engine's own error for a resource, else the command's text."""
    if events.proposals and events.changes:
        more = len(events.changes) - 5
        shown = ", ".join(events.changes[:5]) + (f" and {more} more" if more > 0 else "")
        return f"changes proposed after up: {shown}"
    if events.errors:
        return events.errors[0]
    return from_command_text(str(error))
