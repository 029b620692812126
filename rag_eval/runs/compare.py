"""Comparing runs: per-metric means with bootstrap confidence intervals and coverage,
paired differences against the first (baseline) run, and the per-question differences
sorted by size. Pure functions over the item dicts of the run store.

Items are paired by ``item_id`` (the dataset row id), and a difference exists only when
both runs scored the item: a failure in either run is left out of the paired numbers
and shows up in the coverage instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.aggregate import finite, mean_interval
from rag_eval.runs.stats import SCORE_NAMES, mean_with_ci


def _value(item: dict[str, Any], metric: str) -> float | None:
    for group in ("scores", "retrieval"):
        value = (item.get(group) or {}).get(metric)
        if value is not None:
            values = finite([value])
            return values[0] if values else None
    return None


def available_metrics(items_by_run: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """TRACe metrics first, then any retrieval metric present in every run."""
    retrieval = None
    for items in items_by_run.values():
        names = {k for i in items for k in (i.get("retrieval") or {})}
        retrieval = names if retrieval is None else retrieval & names
    return list(SCORE_NAMES) + sorted(retrieval or ())


def metric_table(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per (run, metric): mean, 95% CI, n scored and coverage."""
    metrics = list(metrics or available_metrics(items_by_run))
    rows = []
    for run_id, items in items_by_run.items():
        for metric in metrics:
            stats = mean_with_ci([_value(i, metric) for i in items], len(items))
            rows.append({"run": run_id, "metric": metric, **stats})
    return rows


def question_differences(
    base: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]], metrics: Sequence[str], other_run: str = ""
) -> list[dict[str, Any]]:
    """Per question and metric, ``other - base`` where both runs scored it, largest
    absolute difference first (ties: by item id, so the order is stable)."""
    base_by_id = {i["item_id"]: i for i in base}
    rows = []
    for item in other:
        b = base_by_id.get(item["item_id"])
        if b is None:
            continue
        for metric in metrics:
            x, y = _value(b, metric), _value(item, metric)
            if x is None or y is None:
                continue
            rows.append({"item_id": item["item_id"], "question": item.get("question"), "metric": metric,
                         "run": other_run, "base": x, "other": y, "difference": y - x})
    return sorted(rows, key=lambda r: (-abs(r["difference"]), str(r["item_id"]), r["metric"]))


def paired_table(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Mean paired difference (run - baseline) with a bootstrap CI, per run and metric."""
    runs = list(items_by_run)
    if len(runs) < 2:
        return []
    base = items_by_run[runs[0]]
    rows = []
    for run_id in runs[1:]:
        diffs = question_differences(base, items_by_run[run_id], metrics, run_id)
        for metric in metrics:
            values = [d["difference"] for d in diffs if d["metric"] == metric]
            low, high, _ = mean_interval(values)
            rows.append({"run": run_id, "baseline": runs[0], "metric": metric, "n_pairs": len(values),
                         "mean_difference": sum(values) / len(values) if values else None,
                         "ci_low": low, "ci_high": high})
    return rows


def compare_runs(items_by_run: Mapping[str, Sequence[dict[str, Any]]], metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything ``rag-eval compare`` shows. The first run is the baseline."""
    if len(items_by_run) < 2:
        raise ValueError("compare needs at least two runs")
    metrics = list(metrics or available_metrics(items_by_run))
    runs = list(items_by_run)
    base = items_by_run[runs[0]]
    differences = []
    for run_id in runs[1:]:
        differences.extend(question_differences(base, items_by_run[run_id], metrics, run_id))
    differences.sort(key=lambda r: (-abs(r["difference"]), str(r["item_id"]), r["metric"], r["run"]))
    return {
        "runs": runs,
        "metrics": metric_table(items_by_run, metrics),
        "paired": paired_table(items_by_run, metrics),
        "differences": differences,
    }
