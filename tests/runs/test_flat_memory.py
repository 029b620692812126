"""A run of any size in flat memory (issue 35, item 5): the engine's streaming summary
beyond the rows it keeps, the store read a page at a time, the stored summary computed in
one streaming pass, the streamed export. Each is checked against the whole-list path on
a small run, with the bounds made small."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from harness.sample_store import fill_store, fill_store_bulk
from rag_eval.io.rows import write_rows
from rag_eval.metrics import aggregate
from rag_eval.metrics.aggregate import MeanTally, mean_with_coverage
from rag_eval.metrics.diagnosis import Diagnosis, DiagnosisTally, diagnose
from rag_eval.rag.config import default_config
from rag_eval.runs import export, summary
from rag_eval.runs.engine import evaluate
from rag_eval.runs.sinks import MemorySink, StoreSink
from rag_eval.runs.sources import RowsSource
from rag_eval.runs.stats import agreement_rows, summarize_items
from rag_eval.runs.store import RunStore
from rag_eval.runs.summary import gate_inputs
from tests.runs.conftest import OverlapJudge


def test_mean_tally_is_mean_with_coverage_below_the_bound_and_normal_above(monkeypatch):
    values = list(np.random.default_rng(3).random(40)) + [None, float("nan"), True]
    tally = MeanTally()
    for v in values:
        tally.add(v)
    assert tally.result(50) == mean_with_coverage(values, 50)
    monkeypatch.setattr(aggregate, "MAX_BOOTSTRAP_ROWS", 10)
    big = MeanTally()
    for v in values:
        big.add(v)
    data = aggregate.finite(values)
    result = big.result(50)
    assert big.kept is None and result.n == len(data) and result.coverage == len(data) / 50
    assert result.mean == pytest.approx(float(np.mean(data)))
    half = 1.959963984540054 * float(np.std(data, ddof=1)) / math.sqrt(len(data))
    assert (result.ci_low, result.ci_high) == pytest.approx((result.mean - half, result.mean + half))
    assert mean_with_coverage(values, 50).ci_low == pytest.approx(result.ci_low)  # one rule above the bound


def test_diagnosis_tally_is_diagnose():
    rows = [(f"r{i}", {"context_relevance": (i % 5) / 4, "context_utilization": (i % 3) / 2, "completeness": 0.1,
                       "adherence_score": (i % 2) * 1.0}) for i in range(200)] + [("bad", None)]
    tally = DiagnosisTally(keep_ids=10)  # as many as lines() shows
    for item, values in rows:
        tally.add(item, values)
    whole, streamed = diagnose(rows), tally.result()
    assert streamed.lines() == whole.lines()
    assert [f.count for f in streamed.findings] == [len(f.ids) for f in whole.findings]
    assert Diagnosis.from_dict(streamed.to_dict()).lines() == whole.lines()


def _rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"id": f"r{i}", "question": f"What colour is item {i}?",
                    "documents": [f"Item {i} is blue. It was painted in {1900 + i}."],
                    "response": f"Item {i} is blue." if i % 4 else f"Item {i} is red."})
    out.append({"id": "broken", "question": "no response"})  # an invalid row: counted, never averaged
    return out


def test_the_engine_summary_beyond_the_kept_rows_is_the_kept_one(monkeypatch, tmp_path):
    rows = _rows(30)
    kept = evaluate(RowsSource(rows), OverlapJudge(), MemorySink(), config="clean")
    monkeypatch.setattr(summary, "KEEP_ROWS", 5)
    streamed = evaluate(RowsSource(rows), OverlapJudge(), MemorySink(), config="clean")
    assert kept.rows_kept and not streamed.rows_kept and streamed.rows == []
    assert (streamed.n_items, streamed.n_usable, streamed.failed) == (kept.n_items, kept.n_usable, kept.failed) == (31, 30, 1)
    assert streamed.counts == kept.counts and list(streamed.counts) == list(kept.counts)
    assert streamed.coverage == kept.coverage and streamed.errors == kept.errors and streamed.tokens == kept.tokens
    assert streamed.means == pytest.approx(kept.means)
    assert streamed.diagnosis is not None and kept.diagnosis is not None
    assert streamed.diagnosis.lines() == kept.diagnosis.lines()
    stats, cases = gate_inputs(streamed)
    whole, _ = gate_inputs(kept)
    assert cases == [] and set(stats) == set(whole)
    for name, stat in whole.items():  # below the bootstrap's bound the intervals are the same
        assert (stats[name].mean, stats[name].ci_low, stats[name].ci_high, stats[name].n) == pytest.approx(
            (stat.mean, stat.ci_low, stat.ci_high, stat.n)), name


def test_pages_of_items_and_the_streamed_summary(store_url, monkeypatch):
    from rag_eval.runs.store import items as store_items

    store = RunStore(store_url)
    try:
        run_id = fill_store(store, n_runs=1, n_items=45, seed=5)[0]
        whole = store.items(run_id)
        monkeypatch.setattr(store_items, "PAGE_ITEMS", 7)
        assert list(store_items.iter_items(store.db, run_id, page=7)) == whole
        fields = ("id", "scores", "truth")
        assert list(store_items.iter_items(store.db, run_id, fields, page=7)) == store.items(run_id, fields)
        stored = store.get_run(run_id)["summary"]
        expected = {**summarize_items(whole), "agreement": agreement_rows(whole)}
        assert {k: v for k, v in stored.items() if k not in ("diagnosis", "expected_judge_error")} == json.loads(
            json.dumps(expected))
        assert Diagnosis.from_dict(stored["diagnosis"]).lines() == diagnose(
            [(str(i["id"]), i.get("scores") or None) for i in whole]).lines()
    finally:
        store.close()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_streamed_export_is_the_whole_one(tmp_path, monkeypatch, fmt):
    store = RunStore(tmp_path / "runs.sqlite")
    config = default_config()
    run_id = evaluate(RowsSource(_rows(12)), OverlapJudge(), StoreSink(store, config), config=config).run_id
    run = store.get_run(run_id)
    monkeypatch.setattr(export, "EXPORT_BATCH", 2)  # latency_s is None in the first batches: typed later
    path = export.export_run(store, run_id, tmp_path / "streamed", fmt)
    rows = export.export_rows(run, store.items(run_id))
    whole = write_rows([export.flat_cells(r) for r in rows] if fmt == "parquet" else rows, tmp_path / f"whole.{fmt}")
    if fmt == "parquet":
        streamed_rows, whole_rows = pq.read_table(path).to_pylist(), pq.read_table(whole).to_pylist()
        assert [r["id"] for r in streamed_rows] == [r["id"] for r in whole_rows]
        for a, b in zip(streamed_rows, whole_rows):
            assert a.keys() == b.keys()
            for key in a:
                both_missing = a[key] is None and (b[key] is None or b[key] != b[key])
                assert both_missing or a[key] == b[key] or str(a[key]) == str(b[key]), key
    else:
        assert path.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")
    store.close()


def test_bulk_seeding_copies_the_template_runs(store_url):
    store = RunStore(store_url)
    try:
        ids = fill_store_bulk(store, n_runs=5, n_items=20, templates=2)
        runs = {r["id"]: r for r in store.list_runs()}
        assert len(runs) == store.count_runs() == 5 and all(runs[i]["n_done"] == 20 and runs[i]["status"] == "finished" for i in ids)
        assert store.items(ids[2]) == store.items(ids[0]) and runs[ids[2]]["summary"] == runs[ids[0]]["summary"]
    finally:
        store.close()
