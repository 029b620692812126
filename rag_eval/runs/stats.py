"""Summary statistics of a run's items: pure functions over the item dicts the run
store returns.

Only items with a usable judgement enter a metric's mean; every other item is counted
in the status table and in the coverage (scored / all), never averaged as 0 or NaN.
Confidence intervals are percentile bootstrap intervals with a fixed seed, so the same
items always give the same interval.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rag_eval.schema import METRIC_NAMES

SCORE_NAMES = METRIC_NAMES + ("adherence_score",)
DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def finite(values: Iterable[Any]) -> list[float]:
    """The values that are real numbers (None, NaN and non-numbers dropped)."""
    out = []
    for v in values:
        if isinstance(v, bool):
            v = float(v)
        if isinstance(v, (int, float)) and math.isfinite(v):
            out.append(float(v))
    return out


def bootstrap_ci(
    values: Sequence[float], resamples: int = DEFAULT_RESAMPLES, confidence: float = DEFAULT_CONFIDENCE, seed: int = 0
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean; (None, None) for no values, (v, v) for one."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None, None
    if data.size == 1:
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def mean_with_ci(values: Iterable[Any], total: int, seed: int = 0) -> dict[str, Any]:
    """mean, CI, n and coverage (n / total) of the finite ``values``."""
    data = finite(values)
    low, high = bootstrap_ci(data, seed=seed)
    return {
        "mean": float(np.mean(data)) if data else None,
        "ci_low": low,
        "ci_high": high,
        "n": len(data),
        "coverage": len(data) / total if total else 0.0,
    }


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
        "coverage": len(scored) / total if total else 0.0,
        "status_counts": dict(sorted(statuses.items())),
        "metrics": metrics,
        "retrieval": retrieval,
        "tokens_total": tokens,
        "cost_usd_total": sum(costs) if costs else None,
        "latency_p50_s": _percentile(latencies, 50),
        "latency_p95_s": _percentile(latencies, 95),
    }
