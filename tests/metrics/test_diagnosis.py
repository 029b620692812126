"""The pattern diagnosis: each pattern with the rows that show it."""

import pytest

from rag_eval.metrics.diagnosis import PATTERNS, diagnose, row_patterns


def _v(rel, util, comp, adh):
    return {"context_relevance": rel, "context_utilization": util, "completeness": comp, "adherence": adh}


def test_each_pattern_on_its_own_row():
    assert row_patterns(_v(0.9, 0.1, 0.8, 1.0)) == ["prompt"]
    assert row_patterns(_v(0.5, 0.5, 0.2, 1.0)) == ["retrieval_coverage"]
    assert row_patterns(_v(0.2, 0.1, 0.3, 0.0)) == ["systematic"]
    assert row_patterns(_v(0.1, 0.9, 0.9, 0.5)) == ["hallucination_risk"]
    assert row_patterns(_v(0.8, 0.7, 0.9, 1.0)) == []


def test_continuous_adherence_is_preferred():
    row = _v(0.5, 0.5, 0.2, True) | {"adherence_score": 0.3}
    assert row_patterns(row) == []  # adherence_score 0.3 is not high


def test_diagnose_lists_rows_and_skips_failures():
    rows = [("q1", _v(0.9, 0.1, 0.8, 1.0)), ("q2", _v(0.95, 0.2, 0.6, 1.0)), ("q3", None),
            ("q4", _v(0.2, 0.1, 0.3, 0.0)), ("q5", _v(None, None, None, None))]
    d = diagnose(rows)
    assert (d.rows_given, d.rows_considered) == (5, 3)
    by_key = {f.pattern: f for f in d.findings}
    assert by_key["prompt"].ids == ("q1", "q2") and by_key["prompt"].share == pytest.approx(2 / 3)
    assert by_key["systematic"].ids == ("q4",)
    assert set(by_key) == {"prompt", "systematic"}
    text = "\n".join(d.lines())
    assert "q1, q2" in text and "prompt" in text.lower() and "2/3" not in text and "3/5 scored rows" in text
    assert d.to_dict()["findings"][0]["n_rows"] == 2


def test_no_rows_and_bad_thresholds():
    assert "no scored row" in "\n".join(diagnose([]).lines())
    with pytest.raises(ValueError):
        diagnose([], high=0.3, low=0.5)
    assert len(PATTERNS) == 4
