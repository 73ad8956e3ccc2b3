"""Recorded answers in place of the live clients: `verify --fixtures FILE` and the tests.

A fixture file is JSON with four sections keyed as the readers ask (`readers.request_key`, `readers.call_key`):
`kubernetes` (GET path -> JSON body, or a string for a log), `compute` (call -> REST JSON), `promql` (query ->
`data.result`) and `pulumi` (`preview` -> {"returncode", "output"}). A request with no recorded answer is a 404
(None; an empty list for a list call or a query). Every file says it is synthetic (`_synthetic`: written from the
APIs' schemas, never captured from a real cluster). `_extends` names a file whose answers this one overrides, so a
failing scenario records only what differs from the passing one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tpu_stacks.errors import UserError
from tpu_stacks_live.verify.readers import Unreadable, call_key, request_key

SECTIONS = ("kubernetes", "compute", "promql", "pulumi")
_UNREADABLE = "_unreadable"  # a recorded answer {"_unreadable": "why"}: the reader could not read it (403)


def load_answers(path: Path) -> dict[str, dict[str, Any]]:
    """The file's answers, over those of the file it extends."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise UserError("--fixtures", str(path), f"cannot be read as JSON ({error})", "name a fixture file") from error
    if not isinstance(document, dict) or "_synthetic" not in document:
        raise UserError("--fixtures", str(path), "is not a fixture file (no `_synthetic` label)", "name a fixture file")
    answers: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    if document.get("_extends"):
        answers = load_answers(path.parent / str(document["_extends"]))
    for section in SECTIONS:
        answers[section].update(document.get(section) or {})
    return answers


def _answer(value: Any) -> Any:
    if isinstance(value, dict) and _UNREADABLE in value:
        raise Unreadable(str(value[_UNREADABLE]), str(value.get("fix", "grant the read permission")))
    return value


class RecordedCluster:
    api_client = None

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def get(self, path: str, **query: str) -> dict[str, Any] | None:
        key = request_key(path, query)
        self.asked.append(key)
        return _answer(self.answers.get(key))

    def log(self, path: str, **query: str) -> str | None:
        return self.get(path, **query)  # type: ignore[return-value]


class RecordedGoogle:
    def __init__(self, compute: dict[str, Any], promql: dict[str, Any]) -> None:
        self.compute_answers = compute
        self.promql_answers = promql

    def compute(self, method: str, **params: str) -> Any:
        answer = _answer(self.compute_answers.get(call_key(method, params)))
        return [] if answer is None and method.endswith(".list") else answer

    def promql(self, query: str) -> list[dict[str, Any]]:
        return _answer(self.promql_answers.get(query)) or []


class RecordedPulumi:
    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def preview(self, stack: str, cwd: str) -> tuple[int, str] | None:
        recorded = self.answers.get("preview")
        return None if recorded is None else (int(recorded["returncode"]), str(recorded.get("output", "")))


def recorded(path: Path) -> tuple[RecordedCluster, RecordedGoogle, RecordedPulumi]:
    answers = load_answers(path)
    return (
        RecordedCluster(answers["kubernetes"]),
        RecordedGoogle(answers["compute"], answers["promql"]),
        RecordedPulumi(answers["pulumi"]),
    )
