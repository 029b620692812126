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
    """What the CI gate needs from a stored run, through the engine's one path
    (:func:`rag_eval.runs.engine.gate_inputs` over :func:`rag_eval.runs.records.summary_row`
    of each stored item): per metric (TRACe, adherence_score, retrieval, answer correctness,
    per-item metrics, ``average``) its mean and 95% interval over usable items, and one
    :class:`RowCase` per item. The report fields are recomputed for runs stored before
    records kept them."""
    from rag_eval.runs.engine import gate_inputs, summarize_evaluation
    from rag_eval.runs.records import summary_row

    rows = []
    for item in items:
        row = summary_row(item)
        if is_usable(row["status"]):
            row["values"].update(item_report_fields(item))
        rows.append(row)
    return gate_inputs(summarize_evaluation(rows, run.get("id")))
