"""What every live check answers: PASS, FAIL or UNKNOWN, with the one change to make.

UNKNOWN is an answer, not an error: the check could not see what it needs (no permission, no such API on this
cluster, nothing deployed yet) and says what it would need. A check never raises for what it finds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Verdict(enum.StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class CheckResult:
    """One check's answer. `check` is its name as `verify --only` and the upstream ledger's
    `settled_by = "verify: <check>"` spell it; `detail` says what was seen; `fix` is the one change to make
    (empty on PASS)."""

    check: str
    verdict: Verdict
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.verdict.value:<7} {self.check}: {self.detail}"
        return f"{text} -> {self.fix}" if self.fix else text


def exit_code(results: list[CheckResult]) -> int:
    """0 when nothing failed, 1 when a check failed; UNKNOWN alone does not fail the run (it is printed)."""
    return 1 if any(result.verdict is Verdict.FAIL for result in results) else 0
