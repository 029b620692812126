"""Runs at different top-k are compared at one cut-off every run reaches: the same
ranking gives the same hit, recall, precision, nDCG and MRR at that k (no −0.043 from
pairing MRR@2 with MRR@5), and the paired differences cover every metric compared."""

from __future__ import annotations

from rag_eval.runs.compare import common_cutoffs, compare_at_cutoff, retrieval_at, run_cutoff
from rag_eval.runs.sources import retrieval_metrics

GOLD = {"q1": ["d2"], "q2": ["d9"], "q3": ["d1", "d4"]}
# each question's chunks in rank order (a document may come back twice)
RANKING = {"q1": ["d1", "d2", "d2", "d3", "d4"], "q2": ["d5", "d6", "d7", "d9", "d8"], "q3": ["d1", "d1", "d4", "d2", "d3"]}


class _Chunk:
    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id


class _Question:
    def __init__(self, gold: list[str]) -> None:
        self.gold_doc_ids = gold
        self.gold_contexts: list[str] = []


def _items(k: int) -> list[dict]:
    """Items as a top-k run stores them: the runner's own retrieval metrics at k."""
    out = []
    for qid, docs in RANKING.items():
        chunks = [_Chunk(d) for d in docs[:k]]
        out.append({"id": qid, "status": "ok", "gold_doc_ids": GOLD[qid],
                    "chunks": [{"doc_id": c.doc_id} for c in chunks],
                    "retrieval": retrieval_metrics(chunks, _Question(GOLD[qid]), k),
                    "scores": {"context_relevance": 0.5, "context_utilization": 0.5, "completeness": 0.5,
                               "adherence": True}})
    return out


def test_cutoffs_are_every_k_all_runs_reach():
    assert run_cutoff(_items(2)) == 2 and run_cutoff(_items(5)) == 5
    assert common_cutoffs({"a": _items(2), "b": _items(5)}) == [1, 2]
    assert common_cutoffs({"a": _items(2), "b": [{"id": "q1", "retrieval": None}]}) == []


def test_a_ranking_cut_at_k_scores_as_a_top_k_run():
    """Recomputed at k=2 from a top-5 run's chunks, every metric equals the top-2 run's own."""
    for top5, top2 in zip(_items(5), _items(2)):
        at2 = retrieval_at(top5, 2, own_k=5)
        assert at2 is not None
        own = top2["retrieval"]
        assert at2 == {**{name: value for name, value in own.items() if name != "mrr"}, "mrr@2": own["mrr"]}


def test_identical_rankings_differ_by_zero_on_every_metric_at_the_common_k():
    result = compare_at_cutoff({"k2": _items(2), "k5": _items(5)})
    assert result["k"] == 2 and result["cutoffs"] == [1, 2]
    shown = {r["metric"] for r in result["metrics"]}
    assert {"hit_rate@2", "recall@2", "precision@2", "ndcg@2", "mrr@2"} <= shown
    assert not shown & {"hit_rate@5", "mrr", "recall@5"}  # no metric of another cut-off beside them
    paired = {r["metric"]: r for r in result["paired"]}
    assert set(paired) == shown  # the paired differences cover every metric compared
    for name in ("hit_rate@2", "recall@2", "precision@2", "ndcg@2", "mrr@2"):
        assert paired[name]["n_pairs"] == 3 and paired[name]["mean_difference"] == 0.0, name
    assert "recall@5" in result["left_out"]
    # a run's stored MRR is over its own k: the top-5 run's is left out as MRR@5, the top-2 run's is compared
    assert "mrr@5" in result["left_out"] and "mrr" not in result["left_out"]
    same = compare_at_cutoff({"a": _items(5), "b": _items(5)})  # one cut-off: nothing left out, MRR@5 compared
    assert same["left_out"] == [] and "mrr@5" in {r["metric"] for r in same["paired"]}


def test_a_chosen_cutoff_is_used_and_an_unreachable_one_falls_back():
    items = {"k2": _items(2), "k5": _items(5)}
    assert compare_at_cutoff(items, k=1)["k"] == 1
    assert compare_at_cutoff(items, k=5)["k"] == 2  # not every run reaches 5


def test_without_a_stored_ranking_only_the_runs_own_k_is_used():
    item = {**_items(2)[0], "chunks": None}
    assert retrieval_at(item, 2, own_k=2)["mrr@2"] == item["retrieval"]["mrr"]
    assert retrieval_at(item, 1, own_k=2) is None  # never a made-up number
