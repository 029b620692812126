"""Table shaping for the pages: missing scores stay missing, filters, run summaries."""

from __future__ import annotations

import math

from rag_eval.ui import frames, run_views


def _item(item_id, status="ok", scores=None, truth=None):
    return {"id": item_id, "question": f"q{item_id}", "status": status, "error": None if status == "ok" else "boom",
            "scores": scores, "truth": truth, "tokens": {"total": 10}, "cost_usd": None, "latency_s": 0.1}


SCORES = {"context_relevance": 0.5, "context_utilization": 0.25, "completeness": 1.0, "adherence": 1.0,
          "adherence_score": 0.9}


def test_items_frame_keeps_failures_without_zeroes():
    frame = frames.items_frame([_item("a", scores=SCORES), _item("b", status="parse_error")])
    assert list(frame["status"]) == ["ok", "parse_error"]
    assert frame.loc[0, "context_relevance"] == 0.5
    assert math.isnan(frame.loc[1, "context_relevance"])  # missing, not 0


def test_filter_by_status_and_range():
    frame = frames.items_frame([_item("a", scores=SCORES), _item("b", status="timeout"),
                                _item("c", scores={**SCORES, "context_relevance": 0.9})])
    assert list(frames.filter_items(frame, ["ok"])["id"]) == ["a", "c"]
    assert list(frames.filter_items(frame, None, {"context_relevance": (0.8, 1.0)})["id"]) == ["c"]
    # a full range keeps rows lacking the metric
    assert len(frames.filter_items(frame, None, {"context_relevance": (0.0, 1.0)})) == 3


def test_runs_and_trend_frames_read_the_stored_summary():
    summary = {"coverage": 0.5, "metrics": {"completeness": {"mean": 0.7, "ci_low": 0.6, "ci_high": 0.8, "coverage": 0.5}}}
    runs = [{"id": "r2", "name": "b", "created_at": "2026-01-02", "summary": summary},
            {"id": "r1", "name": "a", "created_at": "2026-01-01", "summary": summary}]
    assert list(run_views.runs_table(runs)["completeness"]) == [0.7, 0.7]
    trend = run_views.trend_frame(runs)
    assert list(trend["run"]) == ["r1", "r2"] and set(trend["metric"]) == {"completeness"}


def test_spread_frame_uses_library_bands():
    frame = frames.spread_frame([_item("a", scores=SCORES), _item("b", status="timeout")])
    assert list(frame["id"]) == ["a"] and frame.loc[0, "band"] in ("excellent", "good", "acceptable", "poor")


def test_default_comparison_pairs_runs_over_the_same_dataset():
    runs = [{"id": "c", "dataset_fingerprint": "x"}, {"id": "b", "dataset_fingerprint": "y"},
            {"id": "a", "dataset_fingerprint": "x"}]
    assert frames.default_comparison(runs) == ["c", "a"]
    assert frames.default_comparison(runs[:2]) == ["c", "b"]
    newest_alone = [{"id": "d", "dataset_fingerprint": "z"}, *runs]
    assert frames.default_comparison(newest_alone) == ["c", "a"]
    assert frames.default_comparison(runs[:1]) == ["c"]


def test_a_reason_column_shows_empty_cells_and_goes_when_no_row_has_a_reason():
    import pandas as pd

    none = pd.DataFrame({"metric": ["a", "b"], "mean": [0.5, 0.6], "reason": [None, None]})
    assert list(frames.with_reasons(none).columns) == ["metric", "mean"]
    some = pd.DataFrame({"metric": ["a", "b"], "mean": [0.5, None], "reason": [None, "no value to average"]})
    assert list(frames.with_reasons(some)["reason"]) == ["", "no value to average"]
