"""The judged-row format shared by ``rag-eval judge``, the pipeline and the dashboard.

One flat dict per input row: the input ``id``; the labels under RAGBench's field
names; the TRACe scores under the same names as ``rag-eval score`` with their mode;
the original project's report fields (``average``, ``rmse_aggregation``,
``overall_supported`` and the support counts, see :mod:`rag_eval.metrics.report_fields`);
``status``, ``error`` (when failed), ``tokens``, ``latency_s``, ``cost_usd``. A failed
row has every label and score set to None (never 0) so no average can pick it up.
"""

from __future__ import annotations

from typing import Any

from rag_eval.metrics.aggregate import coverage_fraction
from rag_eval.metrics.report_fields import REPORT_FIELDS, report_fields
from rag_eval.metrics.trace import DEFAULT_MODE, score_item
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, ScoringMode

LABEL_FIELDS = (
    "all_relevant_sentence_keys",
    "all_utilized_sentence_keys",
    "sentence_support_information",
    "unsupported_response_sentence_keys",
    "overall_supported",
    "relevance_explanation",
    "overall_supported_explanation",
)
SCORE_FIELDS = ("context_relevance", "context_utilization", "completeness", "adherence", "adherence_score")
# Worth carrying from result.extra into the row (the rest stays in run records).
_EXTRA_FIELDS = ("dropped_keys", "missing_response_keys", "agreement_rate", "samples", "samples_usable",
                 "retries", "reasks", "cache_hits", "cost_usd_spent", "inconsistent")


def _base(item_id: str, status: JudgeStatus, error: str | None, mode: str) -> dict[str, Any]:
    row: dict[str, Any] = {"id": item_id, "status": status.value, "error": error}
    row.update({f: None for f in LABEL_FIELDS})
    row.update({f: None for f in SCORE_FIELDS})
    row.update(dict.fromkeys(REPORT_FIELDS))
    row["mode"] = mode
    return row


def judged_row(item: EvalItem, result: JudgeResult, mode: ScoringMode | str = DEFAULT_MODE) -> dict[str, Any]:
    """The output row for one judged item (scores only from usable labels)."""
    mode = ScoringMode(mode)
    row = _base(item.id, result.status, result.error, mode.value)
    row.update(judge=result.judge, prompt_id=result.prompt_id)
    if result.status.usable and result.labels is not None:
        labels = result.labels.to_dict()
        row.update({f: labels[f] for f in LABEL_FIELDS})
        if result.labels.adherence_probability is not None:
            row["adherence_probability"] = result.labels.adherence_probability
        scores = score_item(item, result.labels, mode)
        row.update({f: getattr(scores, f) for f in SCORE_FIELDS})
        row.update(report_fields(scores.metric_values(), result.labels, item.response_keys))
        if scores.diagnostics.get("undefined"):
            row["scores_undefined"] = scores.diagnostics["undefined"]
        if scores.diagnostics.get("completeness_vacuous"):
            row["completeness_vacuous"] = True
        if result.extra.get("label_repairs"):
            row["label_repairs"] = result.extra["label_repairs"]
    else:
        row["raw"] = result.raw  # what the judge said, to see why it failed
    row.update(tokens=dict(result.tokens), latency_s=result.latency_s, cost_usd=result.cost_usd)
    for key in _EXTRA_FIELDS:
        if key in result.extra:
            row[key] = result.extra[key]
    return row


def invalid_row(item_id: str, error: str, mode: ScoringMode | str = DEFAULT_MODE) -> dict[str, Any]:
    """The output row for an input row that could not be read (status ``invalid_input``)."""
    row = _base(item_id, JudgeStatus.INVALID_INPUT, error, ScoringMode(mode).value)
    row.update(tokens={}, latency_s=None, cost_usd=None)
    return row


def status_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per status, in JudgeStatus order (statuses with no rows left out)."""
    counts = {s.value: 0 for s in JudgeStatus}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return {k: v for k, v in counts.items() if v}


def coverage(rows: list[dict[str, Any]]) -> float | None:
    """Fraction of rows with usable labels (None for no rows)."""
    return coverage_fraction(sum(1 for r in rows if JudgeStatus(r["status"]).usable), len(rows))
