"""Summary statistics of a run's items: pure functions over the item dicts the run
store returns.

Only items with a usable judgement enter a metric's mean; every other item is counted
in the status table and in the coverage (scored / all), never averaged as 0 or NaN.
Means, intervals and coverage follow :mod:`rag_eval.metrics.aggregate` (seeded
bootstrap; no interval for one item; coverage ``None`` for a run with no items).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from rag_eval.metrics.aggregate import MeanTally, coverage_fraction, finite, mean_with_coverage
from rag_eval.metrics.agreement import agreement
from rag_eval.metrics.diagnosis import MAX_IDS_SHOWN, DiagnosisTally
from rag_eval.metrics.registry import TRACE_SCORES
from rag_eval.metrics.report_fields import consistency_reading
from rag_eval.schema import is_usable


def mean_with_ci(values: Iterable[Any], total: int, seed: int = 0) -> dict[str, Any]:
    """mean, CI, n and coverage (n / total) of the finite ``values``
    (:func:`rag_eval.metrics.aggregate.mean_with_coverage`, as a dict)."""
    return mean_with_coverage(values, total, seed=seed).to_dict()


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.frombuffer(values, dtype=float) if isinstance(values, array) else values, q)) \
        if len(values) else None


def summarize_items(items: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The run summary stored with a run and shown by ``runs show``, in one pass over
    ``items`` and in memory bounded by :data:`rag_eval.metrics.aggregate.MAX_BOOTSTRAP_ROWS`
    per metric (:class:`~rag_eval.metrics.aggregate.MeanTally`), whatever the run's size
    (the latencies alone: 8 bytes an item, for their percentiles). The registry's per-item
    metrics (``custom``) average over usable items only; their failures are counted."""
    total = n_scored = tokens = 0
    statuses: Counter[str] = Counter()
    metrics = {name: MeanTally() for name in TRACE_SCORES}
    retrieval: dict[str, MeanTally] = {}
    correctness: dict[str, MeanTally] = {}  # answer correctness against reference answers (BLEU, ROUGE-L, LLM match)
    custom: dict[str, MeanTally] = {}
    metric_failures: Counter[str] = Counter()
    latencies = array("d")
    cost_total: float | None = None
    for i in items:
        total += 1
        statuses[str(i.get("status"))] += 1
        scores = i.get("scores") or {}
        usable = is_usable(i.get("status"))
        n_scored += usable
        for name, tally in metrics.items():
            tally.add(scores.get(name))
        groups = [(i.get("retrieval") or {}, retrieval), (i.get("correctness") or {}, correctness)]
        if usable:
            groups.append((i.get("metrics") or {}, custom))
        for group, tallies in groups:
            for name, value in group.items():
                if name not in tallies:
                    tallies[name] = MeanTally()
                tallies[name].add(value)
        metric_failures.update(list(i.get("metric_errors") or {}))  # a count per metric, not the reasons
        latencies.extend(finite([i.get("latency_s")]))
        for cost in finite([i.get("cost_usd")]):
            cost_total = (cost_total or 0) + cost
        tokens += int((i.get("tokens") or {}).get("total", 0) or 0)
    return {
        "n_items": total,
        "n_scored": n_scored,
        "coverage": coverage_fraction(n_scored, total),
        "status_counts": dict(sorted(statuses.items())),
        "metrics": {name: t.result(total).to_dict() for name, t in metrics.items()},
        "retrieval": {name: retrieval[name].result(total).to_dict() for name in sorted(retrieval)},
        "correctness": {name: correctness[name].result(total).to_dict() for name in sorted(correctness)},
        "custom": {name: custom[name].result(total).to_dict() for name in sorted(custom)},
        "metric_failures": dict(sorted(metric_failures.items())),
        "tokens_total": tokens,
        "cost_usd_total": cost_total,
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


def summarize_stored_run(read: Callable[[Sequence[str]], Iterable[dict[str, Any]]]) -> dict[str, Any]:
    """:func:`summarize_run` of a stored run, ``read(fields)`` giving its items (a page at
    a time): one streaming pass for :func:`summarize_items` and the pattern diagnosis
    (``diagnosis``: its first ids per pattern, so ``runs show`` reads no item), and a
    second one for the agreement only when an item carries ground truth."""
    seen_truth = False
    diagnosis = DiagnosisTally(keep_ids=MAX_IDS_SHOWN)  # what runs show prints: every run's summary stays small

    def watched() -> Iterator[dict[str, Any]]:
        nonlocal seen_truth
        for item in read(SUMMARY_FIELDS):
            seen_truth = seen_truth or bool(item.get("truth"))
            diagnosis.add(str(item.get("item_id")), item.get("scores") or None)
            yield item

    summary = summarize_items(watched())
    return {**summary, "agreement": agreement_rows(list(read(("scores", "truth")))) if seen_truth else [],
            "diagnosis": diagnosis.result().to_dict()}


def summarize_run(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the store keeps with a finished run: :func:`summarize_items` plus the
    agreement with ground truth (``agreement``: :func:`agreement_rows`), so the Runs
    page draws every run's figures without reading its items."""
    return {**summarize_items(items), "agreement": agreement_rows(items)}
