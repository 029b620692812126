"""The original project's per-row report fields for a stored run item.

Computed from what every item record already holds (its scores, its labels and, when
kept, its keyed response sentences), so runs stored before these fields existed get
them too, in exports and in the dashboard's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_eval.metrics.diagnosis import DEFAULT_HIGH, DEFAULT_LOW, Diagnosis, diagnose
from rag_eval.metrics.gate import MetricStat, RowCase
from rag_eval.metrics.report_fields import report_fields
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
    """What the CI gate needs from a stored run, through the one summary path
    (:func:`rag_eval.runs.summary.gate_inputs` of :func:`~rag_eval.runs.summary.summarize_records`):
    per metric (TRACe, adherence_score, retrieval, answer correctness, per-item metrics,
    ``average``) its mean and 95% interval, and one :class:`RowCase` per item. The report
    fields are recomputed for runs stored before records kept them."""
    from rag_eval.runs.summary import gate_inputs, summarize_records

    def with_report(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "report": item_report_fields(item)} if is_usable(item.get("status")) else item

    return gate_inputs(summarize_records((with_report(i) for i in items), run.get("id")))
