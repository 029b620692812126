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
from rag_eval.metrics.agreement import agreement
from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.metrics.report_fields import consistency_reading
from rag_eval.schema import is_usable


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
    scored = [i for i in items if is_usable(i.get("status"))]
    metrics = {
        name: mean_with_ci([(i.get("scores") or {}).get(name) for i in items], total)
        for name in TRACE_SCORES
    }
    retrieval_names = sorted({k for i in items for k in (i.get("retrieval") or {})})
    retrieval = {
        name: mean_with_ci([(i.get("retrieval") or {}).get(name) for i in items], total)
        for name in retrieval_names
    }
    correctness_names = sorted({k for i in items for k in (i.get("correctness") or {})})
    correctness = {  # answer correctness against reference answers (BLEU, ROUGE-L, LLM answer match)
        name: mean_with_ci([(i.get("correctness") or {}).get(name) for i in items], total)
        for name in correctness_names
    }
    custom_names = sorted({k for i in scored for k in (i.get("metrics") or {})})
    custom = {  # the registry's per-item metrics (plugins, users), over usable items only
        name: mean_with_ci([(i.get("metrics") or {}).get(name) if is_usable(i.get("status")) else None for i in items],
                           total)
        for name in custom_names
    }
    metric_failures = Counter(name for i in items for name in (i.get("metric_errors") or {}))
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
        "correctness": correctness,
        "custom": custom,
        "metric_failures": dict(sorted(metric_failures.items())),
        "tokens_total": tokens,
        "cost_usd_total": sum(costs) if costs else None,
        "latency_p50_s": _percentile(latencies, 50),
        "latency_p95_s": _percentile(latencies, 95),
    }


#: the item fields :func:`summarize_run` reads (``RunStore.items(run_id, SUMMARY_FIELDS)``)
SUMMARY_FIELDS = ("item_id", "status", "scores", "retrieval", "correctness", "metrics", "metric_errors", "latency_s",
                  "cost_usd", "tokens", "truth")
AGREEMENT_N_BOOT = 500


def truth_pairs(items: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any] | None], list[dict[str, Any] | None]]:
    """Aligned (predictions, truths) of a run's items for ``agreement``: an item without
    scores or without truth is None on that side (counted in coverage by the library)."""
    predictions = [dict(i["scores"]) if i.get("scores") else None for i in items]
    truths = [dict(i["truth"]) if i.get("truth") else None for i in items]
    return predictions, truths


def agreement_rows(items: Sequence[dict[str, Any]], n_boot: int = AGREEMENT_N_BOOT) -> list[dict[str, Any]]:
    """The run's agreement with its ground truth, one row per statistic (statistic,
    value, ci_low, ci_high, n, reason, coverage; ``reading`` is the consistency score's
    band); empty when no item carries truth."""
    if not any(i.get("truth") for i in items):
        return []
    report = agreement(*truth_pairs(items), n_boot=n_boot)
    stats = {f"rmse:{m}": e for m, e in report.rmse.items()}
    stats.update({"aggregated_rmse": report.aggregated_rmse, "consistency": report.consistency,
                  "hallucination_auroc": report.hallucination_auroc})
    return [{"statistic": name, "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
             "reason": est.reason, "coverage": report.coverage.fraction,
             "reading": consistency_reading(est.value) if name == "consistency" else None}
            for name, est in stats.items()]


def summarize_run(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the store keeps with a finished run: :func:`summarize_items` plus the
    agreement with ground truth (``agreement``: :func:`agreement_rows`), so the Runs
    page draws every run's figures without reading its items."""
    return {**summarize_items(items), "agreement": agreement_rows(items)}
