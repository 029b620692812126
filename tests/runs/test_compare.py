"""Comparisons: means with CIs and coverage, paired differences sorted by size."""

import json

import pytest

from rag_eval.metrics.aggregate import mean_interval
from rag_eval.rag.config import default_config
from rag_eval.runs.compare import compare_runs, question_differences
from rag_eval.runs.export import export_bytes, export_run
from rag_eval.runs.stats import summarize_items
from rag_eval.runs.store import RunStore


def item(item_id, completeness, status="ok", recall=None):
    scores = None if completeness is None else {"completeness": completeness, "adherence": 1.0}
    return {"id": item_id, "question": f"q-{item_id}", "status": status, "scores": scores,
            "retrieval": {"recall@5": recall} if recall is not None else None}


A = [item("1", 0.5, recall=1.0), item("2", 1.0, recall=0.0), item("3", None, "timeout"), item("4", 0.2, recall=1.0)]
B = [item("1", 0.9, recall=1.0), item("2", 0.4, recall=1.0), item("3", 0.3, recall=0.0), item("4", 0.2, recall=1.0)]


def test_metric_table_has_coverage_and_ci():
    result = compare_runs({"a": A, "b": B})
    row = next(r for r in result["metrics"] if r["run"] == "a" and r["metric"] == "completeness")
    assert row["n"] == 3 and row["coverage"] == 0.75 and row["mean"] == pytest.approx(1.7 / 3)
    assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    assert "recall@5" in {r["metric"] for r in result["metrics"]}


def test_differences_are_paired_and_sorted_by_size():
    diffs = question_differences(A, B, ["completeness"], "b")
    assert [(d["id"], round(d["difference"], 2)) for d in diffs] == [("2", -0.6), ("1", 0.4), ("4", 0.0)]
    result = compare_runs({"a": A, "b": B})
    sizes = [abs(d["difference"]) for d in result["differences"]]
    assert sizes == sorted(sizes, reverse=True)
    paired = next(p for p in result["paired"] if p["metric"] == "completeness")
    assert paired["n_pairs"] == 3 and paired["mean_difference"] == pytest.approx(-0.2 / 3)


def test_needs_two_runs_and_edge_cases():
    with pytest.raises(ValueError, match="at least two runs"):
        compare_runs({"a": A})
    assert mean_interval([])[:2] == (None, None) and mean_interval([0.3])[:2] == (None, None)
    assert mean_interval([0.0, 1.0] * 10) == mean_interval([0.0, 1.0] * 10)  # seeded
    assert summarize_items([])["coverage"] is None


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_formats(tmp_path, fmt):
    from rag_eval.io.rows import read_rows

    store = RunStore(":memory:")
    run = store.create_run(default_config())
    for i in A:
        store.add_items(run, [{**i, "chunks": [{"id": "c", "text": "t", "score": 0.5}], "answer": "ans"}])
    path = export_run(store, run, tmp_path / "out", fmt)
    rows, errors = read_rows(path)
    assert path.suffix == f".{fmt}" and not errors and len(rows) == 4
    first = rows[0][1]
    assert first["id"] in ("1", 1) and first["status"] == "ok" and float(first["completeness"]) == 0.5
    assert "chunks" in first and first["run_id"] == run
    # JSONL keeps nested values nested (no JSON text inside JSON); CSV and Parquet cells hold JSON text
    if fmt == "jsonl":
        line = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert line["chunks"] == [{"id": "c", "text": "t", "score": 0.5}] and line["retrieved_doc_ids"] == []
    else:
        chunks = first["chunks"] if isinstance(first["chunks"], list) else json.loads(first["chunks"])
        assert chunks == [{"id": "c", "text": "t", "score": 0.5}]
    if fmt != "parquet":  # Batch's downloads are the export's files, byte for byte
        assert export_bytes(store.get_run(run), store.items(run), fmt) == path.read_bytes()
    with pytest.raises(ValueError, match="export format"):
        export_run(store, run, tmp_path / "x", "xml")


def test_config_summary_names_an_endpoint_judge_with_its_model():
    """The registry says which kind talks to an endpoint (its model is named), not a kind's name."""
    from rag_eval.runs.compare import config_summary

    assert config_summary({"judge": {"kind": "llm", "model": "m"}}) == "judge llm:m"
    assert config_summary({"judge": {"kind": "local", "model": "m"}}) == "judge local"
