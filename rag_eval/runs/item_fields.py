"""The original project's per-row report fields for a stored run item.

Computed from what every item record already holds (its scores, its labels and, when
kept, its keyed response sentences), so runs stored before these fields existed get
them too, in exports and in the dashboard's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.diagnosis import DEFAULT_HIGH, DEFAULT_LOW, Diagnosis, diagnose
from rag_eval.metrics.gate import MetricStat, RowCase, stats_from_rows
from rag_eval.metrics.registry import item_values
from rag_eval.metrics.report_fields import report_fields
from rag_eval.runs.stats import summarize_items
from rag_eval.schema import is_usable


def _response_keys(item: Mapping[str, Any]) -> list[str] | None:
    stored = item.get("item")
    if isinstance(stored, Mapping) and stored.get("response_sentences") is not None:
        return [str(pair[0]) for pair in stored["response_sentences"] if len(pair)]
    return None


def item_report_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """``average``, ``rmse_aggregation``, ``overall_supported`` and the support counts of
    one item record (all None for an item without scores)."""
    scores = item.get("scores") or None
    labels = item.get("labels") if scores else None
    return report_fields(scores, labels if isinstance(labels, Mapping) else None, _response_keys(item))


def run_diagnosis(items: Sequence[dict[str, Any]], high: float = DEFAULT_HIGH, low: float = DEFAULT_LOW) -> Diagnosis:
    """The pattern diagnosis of a run's items (items without scores are not diagnosed)."""
    return diagnose([(str(i.get("item_id")), i.get("scores") or None) for i in items], high, low)


def run_gate_inputs(run: Mapping[str, Any], items: Sequence[dict[str, Any]]) -> tuple[dict[str, MetricStat], list[RowCase]]:
    """What the CI gate needs from a stored run: per metric (TRACe, adherence_score,
    retrieval metrics, answer correctness, per-item metrics, ``average``) its mean and 95%
    interval as ``runs show`` reports them, and one :class:`RowCase` per item (usable:
    :func:`rag_eval.schema.is_usable`, the engine's definition)."""
    summary = run.get("summary") or summarize_items(list(items))
    stats: dict[str, MetricStat] = {}
    for group in ("metrics", "retrieval", "correctness", "custom"):
        for name, s in (summary.get(group) or {}).items():
            stats[name] = MetricStat(s.get("mean"), s.get("ci_low"), s.get("ci_high"), int(s.get("n") or 0))
    fields = [item_report_fields(i) for i in items]
    stats.update(stats_from_rows([f if f["average"] is not None else None for f in fields], ["average"]))
    cases = [
        RowCase(str(i.get("item_id")), str(i.get("status")), is_usable(i.get("status")),
                {**item_values(i), **f}, i.get("error"))
        for i, f in zip(items, fields)
    ]
    return stats, cases
