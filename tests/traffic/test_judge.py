"""The judge's table in docs/sizing-for-traffic.md is today's: the model against the held-out rows."""

from pathlib import Path

from tests.traffic.judge.evaluate import judge, markdown_table, rows

DOC = Path(__file__).resolve().parents[2] / "docs" / "sizing-for-traffic.md"


def test_the_doc_states_todays_error_on_every_held_out_row():
    assert markdown_table() in DOC.read_text(encoding="utf-8"), "regenerate: python -m tests.traffic.judge.evaluate"


def test_every_held_out_row_is_predicted_from_its_own_engine_and_generation():
    for row in rows():
        judged = judge(row)
        assert judged.predicted > 0 and judged.batch > 0, row["id"]
        # its own generation's fit; a fit of another model implementation is flagged (test_model_implementation.py)
        assert "no published row on" not in judged.flag, f"{row['id']} is modelled with a borrowed calibration"
