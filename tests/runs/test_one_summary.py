"""One summary path: what ``evaluate()`` returns, what the store keeps with the run, what
``load_run`` and the report's gate read back, all from ``runs.summary.RunTally`` over
the same items, so they cannot disagree (issue 34: "the double summary is gone")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.rag.config import default_config
from rag_eval.runs.engine import evaluate
from rag_eval.runs.sinks import StoreSink
from rag_eval.runs.sources import RowsSource
from rag_eval.runs.store import RunStore
from rag_eval.runs.summary import gate_inputs, summarize_records
from rag_eval.schema import JudgeResult, JudgeStatus
from tests.runs.conftest import OverlapJudge

ROOT = Path(__file__).resolve().parents[2]


class FlakyJudge(OverlapJudge):
    """The overlap judge, except that every third item times out."""

    def judge(self, items, progress=None, cancel=None):
        results = super().judge(items, progress, cancel)
        return [JudgeResult(r.id, JudgeStatus.TIMEOUT, error="slow", judge=self.name) if int(r.id[1:]) % 3 == 0
                else r for r in results]


def _rows(n: int) -> list[dict]:
    rows = [{"id": f"r{i}", "question": f"What colour is item {i}?",
             "documents": [f"Item {i} is blue. It was painted in {1900 + i}."],
             "response": f"Item {i} is blue." if i % 4 else f"Item {i} is red.",
             "reference": f"Item {i} is blue."} for i in range(n)]
    rows.append({"id": "broken", "question": "no response"})
    return rows


def test_the_engine_the_store_and_a_loaded_run_summarise_alike(tmp_path):
    import rag_eval

    store = RunStore(tmp_path / "runs.sqlite")
    try:
        config = default_config()
        fresh = evaluate(RowsSource(_rows(24)), FlakyJudge(), StoreSink(store, config, name="flaky"), config=config)
        run = store.get_run(fresh.run_id)
        stored = run["summary"]
        items = store.items(fresh.run_id)

        assert (fresh.n_items, fresh.n_usable, fresh.failed) == (25, 16, 9)
        assert stored["n_items"] == fresh.n_items and stored["n_scored"] == fresh.n_usable
        assert stored["coverage"] == pytest.approx(fresh.coverage)
        assert stored["status_counts"] == dict(sorted(fresh.counts.items()))
        for name in TRACE_SCORES:  # the same mean, from the same usable items
            assert stored["trace"][name]["mean"] == pytest.approx(fresh.means[name]), name
        assert stored["correctness"]["rouge_l"]["n"] == 16  # usable items only, in both
        assert stored["correctness"]["rouge_l"]["mean"] == pytest.approx(fresh.means["rouge_l"])

        again = summarize_records(items, fresh.run_id)
        assert (again.counts, again.coverage, again.errors, again.tokens) == (
            fresh.counts, fresh.coverage, fresh.errors, fresh.tokens)
        assert again.means == pytest.approx(fresh.means)
        loaded = rag_eval.load_run("flaky", store=store)
        assert loaded.summary.counts == fresh.counts and loaded.summary.n_usable == fresh.n_usable

        live_stats, live_cases = gate_inputs(fresh)
        stored_stats, stored_cases = gate_inputs(again)
        assert set(stored_stats) == set(live_stats)
        for name, stat in live_stats.items():
            assert (stored_stats[name].mean, stored_stats[name].ci_low, stored_stats[name].ci_high,
                    stored_stats[name].n) == pytest.approx((stat.mean, stat.ci_low, stat.ci_high, stat.n)), name
        assert [(c.id, c.status, c.usable) for c in stored_cases] == [
            (c.id, c.status, c.usable) for c in live_cases]
    finally:
        store.close()


def test_only_the_summary_module_builds_a_summary():
    """No second summary: ``EvaluationSummary`` and the means' ``MeanTally`` are built only
    in ``runs/summary.py`` (and MeanTally's own module); every other module asks a
    ``RunTally``."""
    allowed = {ROOT / "rag_eval" / "runs" / "summary.py", ROOT / "rag_eval" / "metrics" / "aggregate.py"}
    builders = []
    for path in (ROOT / "rag_eval").rglob("*.py"):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in (
                    "EvaluationSummary", "MeanTally"):
                builders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert builders == []  # everyone else asks a RunTally
