"""Which rows of a run to review next: pure functions of the run's item records.

Each strategy returns item ids in review order, leaving out ``exclude`` (rows already
reviewed) and rows without usable judge labels where the strategy needs them:

- ``random``: a seeded shuffle (the same seed gives the same queue);
- ``confidence``: lowest judge confidence first (see :func:`judge_confidence`);
- ``disagreement``: largest disagreement between two judges' scores on the same row;
- ``hallucinated``: rows the judge flags as not adherent, least adherent first.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rag_eval.metrics.registry import TRACE_METRICS
from rag_eval.schema import Labels

STRATEGIES = ("random", "confidence", "disagreement", "hallucinated")
#: the metrics whose judge-vs-judge difference ranks the disagreement queue
DISAGREEMENT_METRICS = TRACE_METRICS


def _usable(record: Mapping[str, Any]) -> bool:
    return record.get("status") in ("ok", "repaired") and isinstance(record.get("labels"), dict)


def _ranked(records: Sequence[Mapping[str, Any]], n: int | None, exclude: Iterable[str],
            key: Callable[[Mapping[str, Any]], float | None]) -> list[str]:
    """The first ``n`` usable rows not in ``exclude`` by ``key``, lowest first, ties in run
    order; a row whose ``key`` is None is left out."""
    skip = set(map(str, exclude))
    scored = [(value, pos, str(r["id"])) for pos, r in enumerate(records)
              if str(r["id"]) not in skip and _usable(r) and (value := key(r)) is not None]
    return [i for _, _, i in sorted(scored)][:n]


def random_queue(records: Sequence[Mapping[str, Any]], n: int | None = None, seed: int = 0,
                 exclude: Iterable[str] = ()) -> list[str]:
    """Item ids in a seeded random order."""
    skip = set(map(str, exclude))
    ids = [str(r["id"]) for r in records if str(r["id"]) not in skip]
    random.Random(seed).shuffle(ids)
    return ids[:n]


def judge_confidence(labels: Labels) -> float | None:
    """How sure the judge is of its adherence verdict, in [0, 1]: ``|2p - 1|`` for its
    P(grounded) when it gives one, else for its least certain sentence's P(supported),
    else None (a judge without probabilities, e.g. an LLM judge with one sample)."""
    if labels.adherence_probability is not None:
        return abs(2 * float(labels.adherence_probability) - 1)
    probs = list((labels.support_probabilities or {}).values())
    if probs:
        return min(abs(2 * float(p) - 1) for p in probs)
    return None


def confidence_queue(records: Sequence[Mapping[str, Any]], n: int | None = None,
                     exclude: Iterable[str] = ()) -> list[str]:
    """Lowest confidence first; rows whose judge gives no confidence come last, in run order."""
    def confidence(r: Mapping[str, Any]) -> float:
        c = judge_confidence(Labels.from_dict(r["labels"]))
        return 2.0 if c is None else c

    return _ranked(records, n, exclude, confidence)


def score_disagreement(a: Mapping[str, Any], b: Mapping[str, Any]) -> float | None:
    """Mean absolute difference of the TRACe metrics both score dicts define (adherence
    as 0/1); None when they share none."""
    diffs = [abs(float(a[m]) - float(b[m])) for m in DISAGREEMENT_METRICS
             if a.get(m) is not None and b.get(m) is not None]
    return sum(diffs) / len(diffs) if diffs else None


def disagreement_queue(scores_a: Mapping[str, Mapping[str, Any]], scores_b: Mapping[str, Mapping[str, Any]],
                       n: int | None = None, exclude: Iterable[str] = ()) -> list[str]:
    """Item ids scored by both judges (``{item_id: scores}``), largest disagreement first
    (ties in id order)."""
    skip = set(map(str, exclude))
    scored = []
    for item_id in sorted(set(scores_a) & set(scores_b)):
        d = score_disagreement(scores_a[item_id], scores_b[item_id])
        if d is not None and item_id not in skip:
            scored.append((-d, item_id))
    return [i for _, i in sorted(scored)][:n]


def hallucinated_queue(records: Sequence[Mapping[str, Any]], n: int | None = None,
                       exclude: Iterable[str] = ()) -> list[str]:
    """Rows the judge calls not adherent, lowest continuous adherence first."""
    def adherence(r: Mapping[str, Any]) -> float | None:
        s = r.get("scores") or {}
        if s.get("adherence") is None or s["adherence"]:
            return None
        return 1.0 if s.get("adherence_score") is None else float(s["adherence_score"])

    return _ranked(records, n, exclude, adherence)


def build_queue(strategy: str, records: Sequence[Mapping[str, Any]], *, n: int | None = None, seed: int = 0,
                exclude: Iterable[str] = (), other: Sequence[Mapping[str, Any]] | None = None) -> list[str]:
    """One entry point for the strategies; ``other`` is the second judge's records
    (same item ids) for ``disagreement``."""
    if strategy == "random":
        return random_queue(records, n, seed, exclude)
    if strategy == "confidence":
        return confidence_queue(records, n, exclude)
    if strategy == "hallucinated":
        return hallucinated_queue(records, n, exclude)
    if strategy == "disagreement":
        if other is None:
            raise ValueError("the disagreement queue needs a second judge's run")
        a = {str(r["id"]): r["scores"] for r in records if _usable(r) and isinstance(r.get("scores"), dict)}
        b = {str(r["id"]): r["scores"] for r in other if _usable(r) and isinstance(r.get("scores"), dict)}
        return disagreement_queue(a, b, n, exclude)
    raise ValueError(f"unknown queue strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
