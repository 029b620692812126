"""The one record builder: :func:`build_record` makes the :class:`~rag_eval.schema.ItemRecord`
of one item from (the item as its source prepared it, the judge's result, the configuration),
and its serialisations are written here and nowhere else:

- :func:`to_store`: the run store's item record (its ``id`` is the ``items`` table's
  ``id`` column; the keyed sentences are stored as ``item``).
- :func:`to_file_row`: a ``rag-eval judge`` output row: ``id``, the labels under
  RAGBench's field names, the scores flat (``context_relevance``... ``adherence_score``),
  the report fields, ``status``/``error``, ``tokens``, ``latency_s``, ``cost_usd``.

A new field is added to :class:`~rag_eval.schema.ItemRecord`, set here, and appears in
every entry point's output. A failed item has every score None (never 0), so no mean
can pick it up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from rag_eval.metrics.registry import FAMILY_FIELD, METRICS, TRACE_SCORES, Metric, MetricItem, compute_item_metrics
from rag_eval.metrics.report_fields import REPORT_FIELDS, report_fields
from rag_eval.metrics.trace import score_item
from rag_eval.runs.sources import CANCELLED_ERROR, SourceItem, token_counts
from rag_eval.schema import ItemRecord, JudgeResult, JudgeStatus, Labels, ScoringMode, TraceScores

#: the labels a judge output row carries under RAGBench's names: every field of Labels but the probabilities
LABEL_FIELDS = tuple(f.name for f in fields(Labels) if not f.name.endswith(("probabilities", "probability")))
# Worth carrying from result.extra into the record (the rest stays in the judge's cache).
JUDGE_EXTRA_FIELDS = ("dropped_keys", "missing_response_keys", "agreement_rate", "samples", "samples_usable",
                      "retries", "reasks", "cache_hits", "cost_usd_spent", "inconsistent", "label_repairs")


def metric_item(source: SourceItem, labels: Labels | None = None, trace: TraceScores | None = None) -> MetricItem:
    """The one context every metric of ``source`` is computed over (the registry's
    :class:`~rag_eval.metrics.registry.MetricItem`): the item's texts, the judge's usable
    ``labels`` and their ``trace`` scores, the ranking and the reference."""
    documents = list(source.item.document_texts) if source.item is not None else []
    if not documents:
        documents = [str(c.get("text", "")) for c in source.chunks if isinstance(c, dict) and c.get("text")]
    return MetricItem(id=source.id, question=source.question, response=source.answer or "", documents=documents,
                      reference=source.reference_answer, metadata=dict(source.metadata), labels=labels, trace=trace,
                      ranking=source.ranking, gold_ids=frozenset(source.gold_doc_ids), k=source.k,
                      answer_match=source.answer_match, answer_match_error=source.answer_match_error)


def build_record(source: SourceItem, result: JudgeResult | None, mode: ScoringMode | str,
                 metrics: Sequence[Metric] = ()) -> ItemRecord:
    """The record of one item: a pure function of its inputs (``source`` is read, never
    written). ``result`` is None for an item that ended before the judge (its ``status``
    says why; a judgeable item without a result was cancelled). Every built-in metric of the
    registry is computed where it applies, and ``metrics`` (the ``custom`` family's a run
    asked for) whatever the judge said (:func:`rag_eval.metrics.registry.compute_item_metrics`);
    each family's values are stored under its field; only a usable item's enter a summary."""
    mode = ScoringMode(mode)
    item = source.item
    scores: TraceScores | None = None
    record = ItemRecord(
        id=source.id, position=source.position, status=source.status or JudgeStatus.CANCELLED.value,
        error=source.error, question=source.question, answer=source.answer,
        reference_answer=source.reference_answer, gold_doc_ids=list(source.gold_doc_ids),
        chunks=list(source.chunks), retrieved_doc_ids=list(source.retrieved_doc_ids), generator=source.generator,
        truth=source.truth, metadata=dict(source.metadata), mode=mode.value,
        timings=dict(source.timings), tokens=token_counts(source.tokens), cost_usd=source.cost_usd, source=source,
    )
    if item is not None:
        record.sentences = {"documents_sentences": [[[s.key, s.text] for s in doc] for doc in item.documents],
                            "response_sentences": [[s.key, s.text] for s in item.response_sentences]}
        if result is None and source.status is None:
            record.status, record.error = JudgeStatus.CANCELLED.value, CANCELLED_ERROR
    if result is not None:
        record.judge_result = result
        record.status, record.error = result.status.value, result.error
        record.judge, record.prompt_id = result.judge, result.prompt_id
        record.tokens = token_counts(source.tokens, result.tokens)
        costs = [c for c in (source.cost_usd, result.cost_usd) if c is not None]
        record.cost_usd = sum(costs) if costs else None
        if result.latency_s is not None:
            record.timings["judge_s"] = result.latency_s
        record.judge_extra = {k: result.extra[k] for k in JUDGE_EXTRA_FIELDS if k in result.extra}
        if result.status.usable and result.labels is not None and item is not None:
            scores = score_item(item, result.labels, mode)
            if result.extra.get("label_repairs"):
                scores.diagnostics["label_repairs"] = result.extra["label_repairs"]
            record.labels = result.labels.to_dict()
            record.trace = scores.to_dict()
            record.report = report_fields(scores.metric_values(), result.labels, item.response_keys)
        else:
            record.raw = result.raw
    answered = isinstance(source.answer, str) and bool(source.answer.strip())
    asked = list(metrics) if answered or item is not None else []  # an item that ended before its answer: none
    labels = result.labels if result is not None and scores is not None else None
    outcome = compute_item_metrics([*METRICS.built_in(), *asked], metric_item(source, labels, scores))
    for family, values in outcome.families.items():
        setattr(record, FAMILY_FIELD[family], values)
    record.metric_errors, record.metric_reasons = outcome.errors, outcome.reasons
    if record.retrieval is None:
        record.retrieval = source.retrieval  # against gold passages (cosine), computed by the source
    if not record.report:
        record.report = dict.fromkeys(REPORT_FIELDS)
    # The item's own stage times (a batch's wall time would charge every item for its neighbours).
    stages = [v for v in record.timings.values() if isinstance(v, (int, float))]
    record.latency_s = sum(stages) if stages else None
    return record


# ---------------------------------------------------------------- serialisations
def to_store(record: ItemRecord) -> dict[str, Any]:
    """The run store's item record (sentences stored as ``item``)."""
    return {
        "id": record.id, "position": record.position, "question": record.question, "status": record.status,
        "error": record.error, "reference_answer": record.reference_answer, "gold_doc_ids": record.gold_doc_ids,
        "answer": record.answer, "generator": record.generator, "chunks": record.chunks,
        "retrieved_doc_ids": record.retrieved_doc_ids, "labels": record.labels,
        **{field: getattr(record, field) for field in FAMILY_FIELD.values()},  # each metric family's values
        "metric_errors": record.metric_errors or None, "metric_reasons": record.metric_reasons or None,
        "trace": record.trace, "report": record.report, "judge": record.judge, "prompt_id": record.prompt_id, "tokens": record.tokens,
        "cost_usd": record.cost_usd, "latency_s": record.latency_s, "timings": record.timings,
        "truth": record.truth, "item": record.sentences, "metadata": record.metadata,
        "judge_extra": record.judge_extra, "mode": record.mode,
    }


def to_file_row(record: ItemRecord) -> dict[str, Any]:
    """A ``rag-eval judge`` output row (labels and scores flat, under their RAGBench and
    ``rag-eval score`` names)."""
    row: dict[str, Any] = {"id": record.id, "status": record.status, "error": record.error}
    labels = record.labels or {}
    row.update({f: labels.get(f) for f in LABEL_FIELDS})
    trace = record.trace or {}  # as TraceScores has them (adherence a bool)
    row.update({f: trace.get(f) for f in TRACE_SCORES})
    row.update({f: record.report.get(f) for f in REPORT_FIELDS})
    row.update(mode=record.mode, judge=record.judge, prompt_id=record.prompt_id)
    if labels.get("adherence_probability") is not None:
        row["adherence_probability"] = labels["adherence_probability"]
    diagnostics = (record.trace or {}).get("diagnostics") or {}
    if diagnostics.get("undefined"):
        row["scores_undefined"] = diagnostics["undefined"]
    if diagnostics.get("completeness_vacuous"):
        row["completeness_vacuous"] = True
    if record.correctness:
        row.update(record.correctness)
    if record.metrics:
        row.update(record.metrics)
    if record.metric_errors:
        row["metric_errors"] = dict(record.metric_errors)
    if record.metric_reasons:
        row["metric_reasons"] = dict(record.metric_reasons)
    if record.status not in (JudgeStatus.OK.value, JudgeStatus.REPAIRED.value) and record.judge is not None:
        row["raw"] = record.raw  # what the judge said, to see why it failed
    row.update(tokens=dict(record.tokens), latency_s=record.latency_s, cost_usd=record.cost_usd)
    row.update(record.judge_extra)
    if record.metadata:
        row["metadata"] = record.metadata
    return row
