"""Retrieval metrics: hand-computed cases, edge cases, batch vs singles, and ranx."""

import json
import math

import numpy as np
import pytest

from rag_eval.metrics.registry import evaluate_run
from rag_eval.metrics.retrieval import (
    cosine_matrix,
    f1_at_k,
    hit_rate_at_k,
    hybrid_log_rank,
    log_rank_score,
    mean_over_queries,
    ndcg_at_k,
    one_to_one_matches,
    precision_at_k,
    precision_at_k_cosine,
    recall_at_k,
    recall_at_k_cosine,
    reciprocal_rank,
)

RETRIEVED = ["d1", "d2", "d3", "d4"]
RELEVANT = {"d2", "d4", "d9"}


# ---------------------------------------------------------------- hand-computed
def test_precision_recall_f1_by_hand():
    assert precision_at_k(RETRIEVED, RELEVANT, k=2) == pytest.approx(1 / 2)
    assert recall_at_k(RETRIEVED, RELEVANT, k=2) == pytest.approx(1 / 3)
    assert f1_at_k(RETRIEVED, RELEVANT, k=2) == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert precision_at_k(RETRIEVED, RELEVANT) == pytest.approx(2 / 4)  # k=None: the whole list
    assert recall_at_k(RETRIEVED, RELEVANT, k=4) == pytest.approx(2 / 3)


def test_precision_denominator_is_a_choice():
    # Two retrieved, k=5: trec_eval/ranx divide by k, "retrieved" by what was returned.
    assert precision_at_k(["d2", "x"], RELEVANT, k=5) == pytest.approx(1 / 5)
    assert precision_at_k(["d2", "x"], RELEVANT, k=5, denominator="retrieved") == pytest.approx(1 / 2)


def test_repeated_ids_count_once_so_precision_stays_at_most_one():
    assert precision_at_k(["d2", "d2", "d2"], {"d2"}, k=3) == pytest.approx(1 / 3)
    assert precision_at_k(["d2", "d2", "d2"], {"d2"}, k=3, denominator="retrieved") == 1.0
    assert reciprocal_rank(["x", "x", "d2"], {"d2"}) == pytest.approx(1 / 2)


def test_hit_rate_and_reciprocal_rank():
    assert hit_rate_at_k(RETRIEVED, RELEVANT, k=1) == 0.0
    assert hit_rate_at_k(RETRIEVED, RELEVANT, k=2) == 1.0
    assert reciprocal_rank(RETRIEVED, RELEVANT) == pytest.approx(1 / 2)
    assert reciprocal_rank(RETRIEVED, RELEVANT, k=1) == 0.0


def test_ndcg_binary_by_hand():
    # hits at ranks 2 and 4; ideal: 3 relevant, cut at k=4 -> ranks 1..3.
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(RETRIEVED, RELEVANT, k=4) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["d2", "d4", "d9"], RELEVANT, k=3) == pytest.approx(1.0)


def test_ndcg_graded_linear_and_exponential():
    grades = {"a": 3, "b": 1, "c": 0}
    linear = (1 / 1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    expo = ((2**1 - 1) + (2**3 - 1) / math.log2(3)) / ((2**3 - 1) + (2**1 - 1) / math.log2(3))
    assert ndcg_at_k(["b", "a", "c"], grades, k=3) == pytest.approx(linear)
    assert ndcg_at_k(["b", "a", "c"], grades, k=3, gain="exponential") == pytest.approx(expo)


def test_log_rank_score_by_hand():
    assert log_rank_score(1, 5) == 1.0
    assert log_rank_score(5, 5) == pytest.approx(0.0)
    assert log_rank_score(1, 1) == 1.0
    assert log_rank_score(2, 3) == pytest.approx(1 - math.log(2) / math.log(3))
    assert log_rank_score(2, 3, gamma=2.0) == pytest.approx(1 - math.log(3) / math.log(5))


def test_hybrid_log_rank_by_hand():
    # ground truth {a, b}; a at rank 2, b at rank 3 of n=3.
    quality = (log_rank_score(2, 3) + log_rank_score(3, 3)) / 2
    assert hybrid_log_rank(["x", "a", "b"], ["a", "b"]) == pytest.approx(0.5 * 1.0 + 0.5 * quality)
    # only a found, at rank 1 of 2: recall 1/2, quality 1/2.
    assert hybrid_log_rank(["a", "x"], ["a", "b"], alpha=0.25) == pytest.approx(0.25 * 0.5 + 0.75 * 0.5)
    assert hybrid_log_rank(["a", "b"], ["a", "b"], alpha=0.0) == pytest.approx(0.5)  # b at last rank scores 0


# ---------------------------------------------------------------- cosine variants
def test_cosine_one_to_one_matching_keeps_precision_at_most_one():
    # One retrieved chunk similar to two ground-truth chunks counts once.
    retrieved = np.array([[1.0, 0.0], [0.0, 1.0]])
    truth = np.array([[1.0, 0.01], [1.0, -0.01]])
    assert precision_at_k_cosine(retrieved, truth, k=2) == pytest.approx(1 / 2)
    assert recall_at_k_cosine(retrieved, truth, k=2) == pytest.approx(1 / 2)
    # Many near-duplicate retrieved chunks of one truth chunk also count once.
    dupes = np.array([[1.0, 0.0]] * 3)
    assert precision_at_k_cosine(dupes, truth[:1], k=3) == pytest.approx(1 / 3)
    assert recall_at_k_cosine(dupes, truth[:1], k=3) == 1.0


def test_matching_is_maximum_not_greedy():
    # Greedy by rank would give retrieved 0 -> truth 0 and leave retrieved 1 unmatched.
    sim = np.array([[0.95, 0.90], [0.85, 0.10]])
    assert len(one_to_one_matches(sim, 0.8)) == 2


def test_cosine_threshold_and_zero_vectors():
    retrieved = np.array([[1.0, 1.0], [0.0, 0.0]])
    truth = np.array([[1.0, 0.0]])
    sim = cosine_matrix(retrieved, truth)
    assert sim[0, 0] == pytest.approx(math.sqrt(0.5)) and sim[1, 0] == 0.0
    assert recall_at_k_cosine(retrieved, truth, threshold=0.8) == 0.0
    assert recall_at_k_cosine(retrieved, truth, threshold=0.7) == 1.0


# ---------------------------------------------------------------- empty inputs and bad input
@pytest.mark.parametrize("fn", [precision_at_k, recall_at_k, f1_at_k, hit_rate_at_k, reciprocal_rank, ndcg_at_k, hybrid_log_rank])
def test_empty_inputs_give_zero(fn):
    assert fn([], RELEVANT) == 0.0
    assert fn(RETRIEVED, set()) == 0.0
    assert fn([], set()) == 0.0
    assert fn(RETRIEVED, {"d1": 0}) == 0.0  # judged, but non-relevant


@pytest.mark.parametrize("fn", [precision_at_k_cosine, recall_at_k_cosine])
def test_cosine_empty_inputs_give_zero(fn):
    assert fn(np.zeros((0, 3)), np.ones((2, 3))) == 0.0
    assert fn(np.ones((2, 3)), np.zeros((0, 3))) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: precision_at_k(RETRIEVED, RELEVANT, k=0),
        lambda: recall_at_k(RETRIEVED, RELEVANT, k=-1),
        lambda: recall_at_k(RETRIEVED, RELEVANT, k=2.5),
        lambda: recall_at_k(RETRIEVED, RELEVANT, k=True),
        lambda: precision_at_k(RETRIEVED, RELEVANT, k=2, denominator="n"),
        lambda: precision_at_k("d1", RELEVANT),
        lambda: recall_at_k(RETRIEVED, "d1"),
        lambda: ndcg_at_k(RETRIEVED, {"d1": "high"}),
        lambda: ndcg_at_k(RETRIEVED, RELEVANT, gain="cubic"),
        lambda: log_rank_score(0, 3),
        lambda: log_rank_score(4, 3),
        lambda: log_rank_score(1, 3, gamma=0),
        lambda: hybrid_log_rank(RETRIEVED, RELEVANT, alpha=1.5),
        lambda: precision_at_k_cosine(np.ones((2, 3)), np.ones((2, 4))),
        lambda: precision_at_k_cosine(np.ones(3), np.ones((2, 3))),
        lambda: recall_at_k_cosine(np.ones((2, 3)), np.ones((2, 3)), threshold=2),
        lambda: cosine_matrix(np.array([[np.nan, 1.0]]), np.ones((1, 2))),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- batch
RUN = {"q1": ["a", "b", "c"], "q2": ["x", "y"], "q3": ["d"], "q_extra": ["z"]}
QRELS = {"q1": {"b": 1, "c": 2}, "q2": {"y": 1}, "q3": {"e": 1}, "q4": {"f": 1}, "q5": {"g": 0}}


@pytest.mark.parametrize("fn", [precision_at_k, recall_at_k, f1_at_k, hit_rate_at_k, reciprocal_rank, ndcg_at_k, hybrid_log_rank])
def test_batch_is_the_mean_of_singles(fn):
    batch = mean_over_queries(fn, RUN, QRELS, k=2)
    singles = [fn(RUN.get(q, []), QRELS[q], k=2) for q in ("q1", "q2", "q3", "q4")]
    assert batch.value == pytest.approx(sum(singles) / 4)
    assert batch.missing_from_run == ("q4",)  # scored as an empty ranking
    assert batch.without_relevant == ("q5",)  # nothing to find: not scored
    assert batch.not_in_qrels == ("q_extra",)


def test_batch_with_nothing_to_evaluate_is_none():
    assert mean_over_queries(recall_at_k, RUN, {}).value is None


# ---------------------------------------------------------------- against ranx
KS = (1, 3, 5, 10)


@pytest.fixture(scope="module")
def tfidf_run(shared_data):
    """A deterministic TF-IDF ranking of the shared BEIR corpus for its queries."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from rag_eval.io.trec import read_qrels

    base = shared_data / "ragbench" / "retrieval"
    corpus = [json.loads(line) for line in (base / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = [json.loads(line) for line in (base / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    qrels, errors = read_qrels(base / "qrels" / "qrels.tsv")
    assert not errors
    queries = [q for q in queries if q["_id"] in qrels]
    vectorizer = TfidfVectorizer(sublinear_tf=True).fit([d.get("title", "") + " " + d["text"] for d in corpus])
    doc_matrix = vectorizer.transform([d.get("title", "") + " " + d["text"] for d in corpus])
    scores = (vectorizer.transform([q["text"] for q in queries]) @ doc_matrix.T).toarray()
    run = {}
    for i, q in enumerate(queries):
        order = np.argsort(-scores[i], kind="stable")[: max(KS)]
        run[q["_id"]] = [corpus[j]["_id"] for j in order]
    return run, qrels


# ranx's numba kernels take about 90 s to compile on a cold cache (2 cores); run in
# pure-Python mode they take a few seconds. NUMBA_DISABLE_JIT must be set before numba
# is imported, so ranx runs once, in a subprocess, for every comparison below.
_RANX_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
out = {}
for case in json.load(open(sys.argv[1])):
    run = Run({q: {d: float(len(docs) - r) for r, d in enumerate(docs)} for q, docs in case["run"].items()})
    out[case["name"]] = evaluate(Qrels(case["qrels"]), run, case["metrics"], make_comparable=True)
print(json.dumps(out))
"""
EXACT = [f"{m}@{k}" for k in KS for m in ("precision", "recall", "mrr", "ndcg", "hit_rate")]


def _graded(qrels):
    """Deterministic grades 1..3 so the linear and exponential gains differ."""
    return {q: {d: 1 + (sum(map(ord, d)) % 3) for d in docs} for q, docs in qrels.items()}


@pytest.fixture(scope="module")
def ranx_scores(tfidf_run, tmp_path_factory):
    import os
    import subprocess
    import sys

    run, qrels = tfidf_run
    cases = [
        {"name": "binary", "run": run, "qrels": qrels, "metrics": EXACT},
        {"name": "graded", "run": run, "qrels": _graded(qrels), "metrics": ["ndcg@10", "ndcg_burges@10"]},
    ]
    payload = tmp_path_factory.mktemp("ranx") / "cases.json"
    payload.write_text(json.dumps(cases), encoding="utf-8")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", _RANX_SCRIPT, str(payload)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.shared
def test_exact_metrics_agree_with_ranx_on_the_shared_beir_collection(tfidf_run, ranx_scores):
    run, qrels = tfidf_run
    ours = evaluate_run(run, qrels, EXACT)
    for name in EXACT:
        assert ours[name].n_queries == len(qrels)
        assert ours[name].value == pytest.approx(ranx_scores["binary"][name], abs=1e-9), name
    assert 0.2 < ours["recall@10"].value < 1.0  # a real ranking, not a degenerate one


@pytest.mark.shared
def test_graded_ndcg_agrees_with_ranx(tfidf_run, ranx_scores):
    run, qrels = tfidf_run
    graded, theirs = _graded(qrels), ranx_scores["graded"]
    assert evaluate_run(run, graded, ["ndcg@10"])["ndcg@10"].value == pytest.approx(theirs["ndcg@10"], abs=1e-9)
    assert evaluate_run(run, graded, ["ndcg@10"], gain="exponential")["ndcg@10"].value == pytest.approx(
        theirs["ndcg_burges@10"], abs=1e-9
    )


def test_cosine_variants_with_real_minilm_embeddings():
    from rag_eval.encoders.embedder import Embedder

    truth = ["The Eiffel Tower is located in Paris, France.", "Photosynthesis converts light into chemical energy."]
    retrieved = [
        "The Eiffel Tower is in Paris, France.",  # a near copy of truth 0
        "Stock markets fell sharply on Monday.",  # unrelated
        "the eiffel tower is located in paris france",  # another near copy of truth 0: counts once
    ]
    embedder = Embedder()
    r, t = embedder.encode(retrieved), embedder.encode(truth)
    sim = cosine_matrix(r, t)
    assert sim[0, 0] > 0.8 and sim[2, 0] > 0.8 and sim[1].max() < 0.5
    assert precision_at_k_cosine(r, t, k=3) == pytest.approx(1 / 3)
    assert recall_at_k_cosine(r, t, k=3) == pytest.approx(1 / 2)
