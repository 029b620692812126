"""Retrieval metrics for one query (scalar cores) and their mean over a run (batch).

Two ways of deciding that a retrieved chunk "is" a ground-truth chunk:

exact
    ids are equal (``precision_at_k``, ``recall_at_k``, ``f1_at_k``, ``hit_rate_at_k``,
    ``reciprocal_rank``, ``ndcg_at_k``, ``hybrid_log_rank``). Repeated ids in a ranking
    count once, at their first rank.
cosine
    the cosine similarity of their embeddings is at least ``threshold`` (default 0.8)
    (``precision_at_k_cosine``, ``recall_at_k_cosine``). Precision/recall use a **one-to-one** matching: a retrieved chunk
    counts for at most one ground-truth chunk and vice versa, so precision and recall
    never exceed 1. The matching is a maximum-cardinality bipartite matching, solved
    exactly with ``scipy.optimize.linear_sum_assignment`` on the 0/1 "similar enough"
    matrix (a greedy matching can miss matches when one chunk resembles two).

Edge cases (decided once, in :mod:`rag_eval.metrics._common`): nothing retrieved or
nothing relevant gives 0.0; ``k=None`` means the whole ranking; ``k`` beyond the list
looks at the whole list.

Precision denominator (a documented choice): ``denominator="k"`` (default, as
trec_eval and ranx) divides by ``k``, so a system that returns fewer than ``k``
chunks is not rewarded for it; ``denominator="retrieved"`` divides by the number
actually retrieved within the cutoff (``min(k, len(retrieved))``).

The hybrid log-rank score (from the seed notebooks) mixes how much was found with how
early it was found: ``alpha * recall + (1 - alpha) * rank_quality`` where
``rank_quality`` averages, over all ground-truth items, the log-rank score of the
retrieved item matching each (0 for items not found).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag_eval.metrics._common import (
    check_denominator,
    check_k,
    check_unit_interval,
    f1,
    relevance_grades,
    relevant_set,
    safe_div,
    unique_ranked,
)
from rag_eval.metrics.defaults import DEFAULT_ALPHA, DEFAULT_GAMMA

DEFAULT_SIMILARITY_THRESHOLD = 0.8
NDCG_GAINS = ("linear", "exponential")

Relevant = Collection[Any] | Mapping[Any, float]


def _cutoff(k: int | None, n: int) -> int:
    """How many ranks to look at: ``k`` (validated) capped at ``n``, or ``n`` when None."""
    return n if k is None else min(check_k(k), n)


def _top(retrieved: Sequence[Any], k: int | None) -> list[str]:
    ranked = unique_ranked(retrieved)
    return ranked[: _cutoff(k, len(ranked))]


def _precision_denominator(k: int | None, n_retrieved: int, denominator: str) -> int:
    check_denominator(denominator)
    if denominator == "retrieved" or k is None:
        return _cutoff(k, n_retrieved)
    return check_k(k)


# ---------------------------------------------------------------- exact match
def precision_at_k(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None, denominator: str = "k") -> float:
    """|relevant ∩ top-k| / k (or / number retrieved within k, see module docstring)."""
    ranked = unique_ranked(retrieved)
    hits = len(set(_top(ranked, k)) & relevant_set(relevant))
    return safe_div(hits, _precision_denominator(k, len(ranked), denominator))


def recall_at_k(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None) -> float:
    """|relevant ∩ top-k| / |relevant|; 0.0 when nothing is relevant."""
    wanted = relevant_set(relevant)
    return safe_div(len(set(_top(retrieved, k)) & wanted), len(wanted))


def f1_at_k(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None, denominator: str = "k") -> float:
    """Harmonic mean of precision@k and recall@k (0.0 when both are 0)."""
    return f1(
        precision_at_k(retrieved, relevant, k=k, denominator=denominator),
        recall_at_k(retrieved, relevant, k=k),
    )


def hit_rate_at_k(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None) -> float:
    """1.0 when at least one relevant id is in the top k, else 0.0."""
    return 1.0 if set(_top(retrieved, k)) & relevant_set(relevant) else 0.0


def reciprocal_rank(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None) -> float:
    """1 / rank of the first relevant id within the top k; 0.0 when there is none.
    Its mean over queries is MRR."""
    wanted = relevant_set(relevant)
    for rank, doc in enumerate(_top(retrieved, k), start=1):
        if doc in wanted:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Sequence[float], gain: str) -> float:
    if gain == "exponential":
        values = [2.0**g - 1.0 for g in gains]
    else:
        values = list(gains)
    return sum(v / math.log2(rank + 1) for rank, v in enumerate(values, start=1) if v > 0)


def ndcg_at_k(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None, gain: str = "linear") -> float:
    """DCG@k / ideal DCG@k with discount 1/log2(rank + 1).

    ``relevant`` may map ids to graded relevance. ``gain="linear"`` uses the grade
    itself (Järvelin & Kekäläinen; ranx's ``ndcg``), ``"exponential"`` uses
    2^grade - 1 (Burges; ranx's ``ndcg_burges``). Binary relevance gives the same
    value either way. The ideal ranking sorts all judged grades, cut at the same
    ``k``. 0.0 when nothing is relevant.
    """
    if gain not in NDCG_GAINS:
        raise ValueError(f"gain must be one of {', '.join(NDCG_GAINS)}; got {gain!r}")
    grades = relevance_grades(relevant)
    top = _top(retrieved, k)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    ideal = ideal[: _cutoff(k, len(ideal))]
    return safe_div(_dcg([max(grades.get(doc, 0.0), 0.0) for doc in top], gain), _dcg(ideal, gain))


def log_rank_score(rank: int, n: int, *, gamma: float = DEFAULT_GAMMA) -> float:
    """``1 - log(1 + gamma*(rank-1)) / log(1 + gamma*(n-1))``: 1.0 at rank 1, 0.0 at
    rank ``n``, decaying logarithmically between; 1.0 when ``n == 1``. ``gamma``
    (> 0) sets how fast early ranks lose credit."""
    n = check_k(n, "n")
    rank = check_k(rank, "rank")
    if rank > n:
        raise ValueError(f"rank must be <= n, got rank={rank}, n={n}")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma > 0 or math.isinf(gamma):
        raise ValueError(f"gamma must be a positive number, got {gamma!r}")
    if n == 1:
        return 1.0
    return 1.0 - math.log1p(gamma * (rank - 1)) / math.log1p(gamma * (n - 1))


def hybrid_log_rank(retrieved: Sequence[Any], relevant: Relevant, *, k: int | None = None, alpha: float = DEFAULT_ALPHA,
                    gamma: float = DEFAULT_GAMMA) -> float:
    """``alpha * recall + (1 - alpha) * rank_quality`` over the top k (n = number
    retrieved within k), each relevant item credited at its rank. 0.0 when nothing is
    retrieved or nothing is relevant."""
    alpha = check_unit_interval(alpha, "alpha")
    top = _top(retrieved, k)
    wanted = relevant_set(relevant)
    if not wanted or not top:
        return 0.0
    rank_of = {doc: rank for rank, doc in enumerate(top, start=1)}
    found = [rank_of[doc] for doc in sorted(wanted) if doc in rank_of]  # summed in one order, the same float
    rank_quality = sum(log_rank_score(r, len(top), gamma=gamma) for r in found) / len(wanted)
    return alpha * len(found) / len(wanted) + (1.0 - alpha) * rank_quality


# ---------------------------------------------------------------- cosine similarity
def _as_matrix(vectors: Any, name: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    if array.ndim == 1 and array.size == 0:
        return array.reshape(0, 0)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (one embedding per row), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def cosine_matrix(retrieved_vectors: Any, truth_vectors: Any) -> np.ndarray:
    """Cosine similarity, shape (n_retrieved, n_truth). A zero vector is similar to nothing (0.0)."""
    a = _as_matrix(retrieved_vectors, "retrieved_vectors")
    b = _as_matrix(truth_vectors, "truth_vectors")
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros((a.shape[0], b.shape[0]))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"embedding sizes differ: retrieved {a.shape[1]}, truth {b.shape[1]}")
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    a = np.divide(a, na, out=np.zeros_like(a), where=na > 0)
    b = np.divide(b, nb, out=np.zeros_like(b), where=nb > 0)
    return a @ b.T


def one_to_one_matches(similarity: np.ndarray, threshold: float = DEFAULT_SIMILARITY_THRESHOLD) -> list[tuple[int, int]]:
    """The largest set of (retrieved, truth) pairs with similarity >= threshold in which
    each row and each column appears at most once (maximum bipartite matching)."""
    from scipy.optimize import linear_sum_assignment

    threshold = float(threshold)
    if similarity.size == 0:
        return []
    eligible = similarity >= threshold
    if not eligible.any():
        return []
    rows, cols = linear_sum_assignment(eligible.astype(np.float64), maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols) if eligible[r, c]]


def _cosine_counts(retrieved_vectors: Any, truth_vectors: Any, k: int | None, threshold: float) -> tuple[int, int, int]:
    """(matches, n_retrieved_within_k, n_truth)."""
    threshold = check_unit_interval(threshold, "threshold")
    sim = cosine_matrix(retrieved_vectors, truth_vectors)
    n = _cutoff(k, sim.shape[0])
    return len(one_to_one_matches(sim[:n], threshold)), n, sim.shape[1]


def precision_at_k_cosine(retrieved_vectors: Any, truth_vectors: Any, *, k: int | None = None,
                          threshold: float = DEFAULT_SIMILARITY_THRESHOLD, denominator: str = "k") -> float:
    """One-to-one matches among the top k / k (or / number retrieved within k)."""
    matches, n, _ = _cosine_counts(retrieved_vectors, truth_vectors, k, threshold)
    return safe_div(matches, _precision_denominator(k, n, denominator))


def recall_at_k_cosine(retrieved_vectors: Any, truth_vectors: Any, *, k: int | None = None,
                       threshold: float = DEFAULT_SIMILARITY_THRESHOLD) -> float:
    """One-to-one matches among the top k / number of ground-truth chunks."""
    matches, _, n_truth = _cosine_counts(retrieved_vectors, truth_vectors, k, threshold)
    return safe_div(matches, n_truth)


# ---------------------------------------------------------------- batch
@dataclass(frozen=True, slots=True)
class BatchScore:
    """A metric's mean over the evaluated queries, with what was left out and why.

    Evaluated queries are those of the qrels with at least one relevant document
    (trec_eval's convention: a query with nothing to find cannot be scored). A query
    of the qrels that the run lacks is scored as an empty ranking (0.0), and listed.
    """

    value: float | None
    per_query: dict[str, float] = field(default_factory=dict)
    missing_from_run: tuple[str, ...] = ()
    without_relevant: tuple[str, ...] = ()
    not_in_qrels: tuple[str, ...] = ()

    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "n_queries": self.n_queries,
            "missing_from_run": list(self.missing_from_run),
            "without_relevant": list(self.without_relevant),
            "not_in_qrels": list(self.not_in_qrels),
        }
        if per_query:
            out["per_query"] = dict(self.per_query)
        return out


def mean_over_queries(metric: Callable[..., float], run: Mapping[str, Sequence[Any]], qrels: Mapping[str, Relevant],
                      **params: Any) -> BatchScore:
    """Apply a scalar exact-match metric to every query and average (macro mean).
    ``value`` is None (with the reasons in the lists) when no query can be evaluated."""
    per_query: dict[str, float] = {}
    missing, without = [], []
    for qid, judged in qrels.items():
        qid = str(qid)
        if not relevant_set(judged, f"qrels[{qid!r}]"):
            without.append(qid)
            continue
        if qid not in run:
            missing.append(qid)
        per_query[qid] = float(metric(run.get(qid, []), judged, **params))
    known = {str(q) for q in qrels}
    extra = tuple(str(q) for q in run if str(q) not in known)
    value = sum(per_query.values()) / len(per_query) if per_query else None
    return BatchScore(value, per_query, tuple(missing), tuple(without), extra)
