"""Summary statistics of a run's items: pure functions over the item dicts the run
store returns.

Only items with a usable judgement enter a metric's mean; every other item is counted
in the status table and in the coverage (scored / all), never averaged as 0 or NaN.
Means, intervals and coverage follow :mod:`rag_eval.metrics.aggregate` (seeded
bootstrap; no interval for one item; coverage ``None`` for a run with no items).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rag_eval.metrics.aggregate import coverage_fraction, finite, mean_with_coverage
from rag_eval.schema import METRIC_NAMES

SCORE_NAMES = METRIC_NAMES + ("adherence_score",)


def mean_with_ci(values: Iterable[Any], total: int, seed: int = 0) -> dict[str, Any]:
    """mean, CI, n and coverage (n / total) of the finite ``values``
    (:func:`rag_eval.metrics.aggregate.mean_with_coverage`, as a dict)."""
    return mean_with_coverage(values, total, seed=seed).to_dict()


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def summarize_items(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run summary stored with a run and shown by ``runs show``."""
    total = len(items)
    statuses = Counter(str(i.get("status")) for i in items)
    scored = [i for i in items if i.get("scores")]
    metrics = {
        name: mean_with_ci([(i.get("scores") or {}).get(name) for i in items], total)
        for name in SCORE_NAMES
    }
    retrieval_names = sorted({k for i in items for k in (i.get("retrieval") or {})})
    retrieval = {
        name: mean_with_ci([(i.get("retrieval") or {}).get(name) for i in items], total)
        for name in retrieval_names
    }
    latencies = finite(i.get("latency_s") for i in items)
    costs = finite(i.get("cost_usd") for i in items)
    tokens = sum(int((i.get("tokens") or {}).get("total", 0) or 0) for i in items)
    return {
        "n_items": total,
        "n_scored": len(scored),
        "coverage": coverage_fraction(len(scored), total),
        "status_counts": dict(sorted(statuses.items())),
        "metrics": metrics,
        "retrieval": retrieval,
        "tokens_total": tokens,
        "cost_usd_total": sum(costs) if costs else None,
        "latency_p50_s": _percentile(latencies, 50),
        "latency_p95_s": _percentile(latencies, 95),
    }
