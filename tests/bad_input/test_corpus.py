"""Every wrong input of the corpus is refused before anything is declared, in one line naming the key as
the user wrote it, with no traceback and no secret in any output (stdout, stderr, plan JSON, manifests)."""

from __future__ import annotations

import pytest

from tests.bad_input.cases import ALL_KINDS, PLAN_KINDS, SIZE
from tests.bad_input.harness import check_refused, plan, size

PLAN_CASES = [(kind, case) for kind, cases in PLAN_KINDS.items() for case in cases]


@pytest.mark.parametrize("kind,case", PLAN_CASES, ids=[case.id for _, case in PLAN_CASES])
def test_a_wrong_stack_file_is_refused_in_one_line(kind, case, monkeypatch):
    check_refused(case, plan(case, monkeypatch))


@pytest.mark.parametrize("case", SIZE, ids=[case.id for case in SIZE])
def test_a_wrong_size_call_exits_2_in_one_line(case):
    check_refused(case, size(case), expected_code=2)


def test_the_corpus_is_large_and_its_ids_unique():
    ids = [case.id for cases in ALL_KINDS.values() for case in cases]
    assert len(ids) >= 150
    assert len(ids) == len(set(ids))
    assert all(len(cases) >= 10 for cases in ALL_KINDS.values())
