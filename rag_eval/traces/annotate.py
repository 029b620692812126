"""A judged item's scores as Phoenix span annotations on its trace's root span.

Per item with usable scores: one annotation per TRACe metric (``rag_eval.context_relevance``,
``rag_eval.context_utilization``, ``rag_eval.completeness``, ``rag_eval.adherence``), the score
in ``result.score``; adherence also carries the label (``supported`` / ``unsupported``) and the
judge's explanation. Every item, scored or not, also gets ``rag_eval.status`` (label = the
item's status, explanation = why it was not scored), so an incomplete trace is visible in Phoenix
and never shows as a score of 0.

Annotator kind: ``CODE`` for the judges that run here (``local``, ``answer_match``,
``encoder``...), ``LLM`` for a model judge. Phoenix keeps one annotation per (span, name,
identifier); the identifier is fixed (``rag-eval`` unless given), so annotating again updates
the same annotations. Records are plain dicts (what the run store returns); the trace ids come
from ``metadata.trace`` of the record or, for records that do not carry the row's metadata, of
the imported row with the same id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_eval.metrics.registry import TRACE_METRICS

PREFIX = "rag_eval."
STATUS_NAME = PREFIX + "status"
DEFAULT_IDENTIFIER = "rag-eval"
EXPLANATION_CHARS = 4_000


@dataclass(slots=True)
class AnnotationPlan:
    """The annotations to post, and the items left out (no trace to write to)."""

    annotations: list[dict[str, Any]] = field(default_factory=list)
    span_ids: dict[str, str] = field(default_factory=dict)  # item id -> root span id
    projects: set[str] = field(default_factory=set)
    scored: int = 0
    unscored: int = 0
    missing: list[str] = field(default_factory=list)  # item ids without a trace id / root span


def trace_of(record: Mapping[str, Any], rows_by_id: Mapping[str, Mapping[str, Any]] | None = None
             ) -> dict[str, Any] | None:
    """``metadata.trace`` of a record, else of the imported row with the record's id."""
    meta = record.get("metadata")
    trace = meta.get("trace") if isinstance(meta, Mapping) else None
    if not isinstance(trace, Mapping) and rows_by_id is not None:
        row = rows_by_id.get(str(record.get("id")))
        meta = row.get("metadata") if row else None
        trace = meta.get("trace") if isinstance(meta, Mapping) else None
    return dict(trace) if isinstance(trace, Mapping) else None


def _labels(record: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = record.get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _explanation(record: Mapping[str, Any]) -> str:
    labels = _labels(record)
    parts = [str(labels.get(k) or "").strip() for k in ("overall_supported_explanation", "relevance_explanation")]
    text = "\n\n".join(p for p in parts if p)
    return text[:EXPLANATION_CHARS]


def _annotation(span: Mapping[str, Any], name: str, *, score: float | None = None, label: str | None = None,
                explanation: str | None = None) -> dict[str, Any]:
    """One annotation named ``name`` on ``span`` (its ``span_id``, ``annotator_kind``,
    ``identifier`` and ``metadata``: what every annotation of one record shares)."""
    result: dict[str, Any] = {}
    if score is not None:
        result["score"] = float(score)
    if label is not None:
        result["label"] = label
    if explanation:
        result["explanation"] = explanation
    return {**span, "name": name, "result": result}


def plan_annotations(records: Iterable[Mapping[str, Any]], run_id: str, *,
                     calls_network: Callable[[str | None], bool],
                     rows_by_id: Mapping[str, Mapping[str, Any]] | None = None,
                     identifier: str = DEFAULT_IDENTIFIER) -> AnnotationPlan:
    """The annotations for every record of run ``run_id``. ``calls_network(judge name)``:
    whether that judge asks a model (Phoenix's ``LLM`` annotator kind) or runs here (``CODE``);
    the caller asks the judge-kind registry (this layer does not import the judges)."""
    plan = AnnotationPlan()
    for record in records:
        item_id = str(record.get("id"))
        trace = trace_of(record, rows_by_id)
        span_id = (trace or {}).get("span_id")
        if not trace or not span_id:
            plan.missing.append(item_id)
            continue
        plan.span_ids[item_id] = str(span_id)
        if trace.get("project"):
            plan.projects.add(str(trace["project"]))
        judge = record.get("judge")
        kind = "LLM" if judge and calls_network(str(judge)) else "CODE"
        span = {"span_id": str(span_id), "annotator_kind": kind, "identifier": identifier,
                "metadata": {"run_id": run_id, "item_id": item_id, "judge": judge, "trace_id": trace.get("trace_id")}}
        status = str(record.get("status") or "")
        scores = record.get("scores") if isinstance(record.get("scores"), Mapping) else None
        usable = scores is not None and all(scores.get(m) is not None for m in TRACE_METRICS)
        trace_status = str(trace.get("status") or "ok")
        reason = f"trace {trace_status}: {trace.get('reason')}" if trace_status != "ok" else record.get("error")
        plan.annotations.append(_annotation(span, STATUS_NAME, label=status or "unknown",
                                            explanation=str(reason) if reason else None))
        if not usable or scores is None:
            plan.unscored += 1
            continue
        plan.scored += 1
        for metric in TRACE_METRICS:
            extra: dict[str, Any] = {}
            if metric == "adherence":
                supported = scores.get("adherence_score")
                if supported is not None:
                    extra["label"] = "supported" if bool(supported) else "unsupported"
                extra["explanation"] = _explanation(record) or None
            elif metric == "context_relevance":
                extra["explanation"] = str(_labels(record).get("relevance_explanation") or "")[:EXPLANATION_CHARS] or None
            plan.annotations.append(_annotation(span, PREFIX + metric, score=float(scores[metric]), **extra))
    return plan
