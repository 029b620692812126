"""The one record builder: :func:`build_record` makes the :class:`~rag_eval.schema.ItemRecord`
of one item from (the item as its source prepared it, the judge's result, the configuration),
and its serialisations are written here and nowhere else:

- :func:`to_store`: the run store's item record (its ``id`` is the ``items`` table's
  ``id`` column; the keyed sentences are stored as ``item``).
- :func:`item_row`: the one flat row of a stored record, every output's (``rag-eval judge``
  and ``score`` files, exports, ``to_pandas()``, the pages' tables, the report): ``id``,
  ``language``, ``status``/``error``, every family's metrics flat (columns from the
  registry's families), the report fields, ``metric_errors``, the labels under RAGBench's
  names, ``tokens``, ``latency_s``, ``cost_usd``; :func:`to_file_row` is it of a fresh record.

A new field is added to :class:`~rag_eval.schema.ItemRecord`, set here, and appears in
every entry point's output. A failed item has every score None (never 0), so no mean
can pick it up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from rag_eval.metrics.registry import FAMILY_FIELD, METRICS, TRACE_SCORES, Metric, MetricItem, compute_item_metrics
from rag_eval.metrics.report_fields import REPORT_FIELDS
from rag_eval.runs.sources import CANCELLED_ERROR, SourceItem, token_counts
from rag_eval.schema import ItemRecord, JudgeResult, JudgeStatus, Labels, ScoringMode, TraceScores

#: the labels a judge output row carries under RAGBench's names: every field of Labels but the probabilities
LABEL_FIELDS = tuple(f.name for f in fields(Labels) if not f.name.endswith(("probabilities", "probability")))
# Worth carrying from result.extra into the record (the rest stays in the judge's cache).
JUDGE_EXTRA_FIELDS = ("dropped_keys", "missing_response_keys", "agreement_rate", "samples", "samples_usable",
                      "retries", "reasks", "cache_hits", "cost_usd_spent", "inconsistent", "label_repairs")


def metric_item(source: SourceItem, labels: Labels | None = None, mode: str = "clean") -> MetricItem:
    """The one context every metric of ``source`` is computed over (the registry's
    :class:`~rag_eval.metrics.registry.MetricItem`): the item's texts and keyed sentences,
    the judge's usable ``labels`` (the TRACe group scores them in ``mode``), the ranking
    and the reference."""
    documents = list(source.item.document_texts) if source.item is not None else []
    if not documents:
        documents = [str(c.get("text", "")) for c in source.chunks if isinstance(c, dict) and c.get("text")]
    return MetricItem(id=source.id, question=source.question, response=source.answer or "", documents=documents,
                      reference=source.reference_answer, metadata=dict(source.metadata), labels=labels,
                      ranking=source.ranking, gold_ids=frozenset(source.gold_doc_ids), k=source.k,
                      answer_match=source.answer_match, answer_match_error=source.answer_match_error,
                      eval_item=source.item, mode=mode,
                      language=source.item.language if source.item is not None else "")


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
    record = ItemRecord(
        id=source.id, position=source.position, status=source.status or JudgeStatus.CANCELLED.value,
        error=source.error, question=source.question, answer=source.answer,
        reference_answer=source.reference_answer, gold_doc_ids=list(source.gold_doc_ids),
        chunks=list(source.chunks), retrieved_doc_ids=list(source.retrieved_doc_ids), generator=source.generator,
        truth=source.truth, metadata=dict(source.metadata), mode=mode.value,
        language=item.language if item is not None else "",
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
    if source.answer_match_calls:  # what the answer match sent, re-asks included: counted like the judge's
        record.judge_extra = {**(record.judge_extra or {}), "answer_match": dict(source.answer_match_calls)}
    usable = result is not None and result.status.usable and result.labels is not None and item is not None
    answered = isinstance(source.answer, str) and bool(source.answer.strip())
    asked = list(metrics) if answered or item is not None else []  # an item that ended before its answer: none
    labels = result.labels if usable and result is not None else None
    outcome = compute_item_metrics([*METRICS.built_in(), *asked], metric_item(source, labels, mode.value))
    if outcome.trace is not None and result is not None and result.labels is not None:  # the TRACe group scored
        if result.extra.get("label_repairs"):
            outcome.trace.scores.diagnostics["label_repairs"] = result.extra["label_repairs"]
        record.labels = result.labels.to_dict()
        record.trace = outcome.trace.scores.to_dict()
        record.report = outcome.trace.report
    elif result is not None:
        record.raw = result.raw
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
    """The run store's item record (sentences stored as ``item``). Each value is stored
    once: the TRACe scores in their family's field (``scores``), beside them only the
    scoring's ``diagnostics`` (records stored before kept a ``trace`` copy: :func:`stored_trace`
    reads both)."""
    diagnostics = (record.trace or {}).get("diagnostics") or None
    return {
        "id": record.id, "position": record.position, "language": record.language, "question": record.question,
        "status": record.status, "error": record.error, "reference_answer": record.reference_answer,
        "gold_doc_ids": record.gold_doc_ids, "answer": record.answer, "generator": record.generator,
        "chunks": record.chunks, "retrieved_doc_ids": record.retrieved_doc_ids, "labels": record.labels,
        **{field: getattr(record, field) for field in FAMILY_FIELD.values()},  # each metric family's values
        "metric_errors": record.metric_errors or None, "metric_reasons": record.metric_reasons or None,
        "diagnostics": diagnostics, "report": record.report, "judge": record.judge, "prompt_id": record.prompt_id,
        "tokens": record.tokens, "cost_usd": record.cost_usd, "latency_s": record.latency_s, "timings": record.timings,
        "truth": record.truth, "item": record.sentences, "metadata": record.metadata,
        "judge_extra": record.judge_extra, "mode": record.mode,
    }


def scored_record(item_id: str | None, position: int, status: str, error: str | None, labels: dict[str, Any] | None,
                  scores: TraceScores | None, report: dict[str, Any] | None) -> dict[str, Any]:
    """The stored form (as :func:`to_store`'s) of a row ``rag-eval score`` scored from the labels
    it carries (no judge ran): its TRACe values read through the registry's ``trace`` family."""
    values = None
    if scores is not None:
        values = compute_item_metrics(METRICS.built_in(), MetricItem(item_id or "", "", "", [], trace=scores)).families
    return {"id": item_id, "position": position, "status": status, "error": error, "labels": labels,
            "scores": (values or {}).get("trace"), "report": report, "mode": None if scores is None else scores.mode,
            "diagnostics": None if scores is None else scores.diagnostics or None}


def stored_trace(item: Mapping[str, Any]) -> TraceScores | None:
    """The TRACe scores of a stored item record of any version (None: no usable judgement):
    from its ``scores`` and ``diagnostics``, or the ``trace`` copy records once kept."""
    old = item.get("trace")
    if isinstance(old, Mapping):
        return TraceScores(**{k: old[k] for k in TraceScores.__slots__ if k in old})
    scores = item.get("scores")
    if not isinstance(scores, Mapping) or not scores:
        return None
    adherence = scores.get("adherence")
    return TraceScores(scores.get("context_relevance"), scores.get("context_utilization"), scores.get("completeness"),
                       None if adherence is None else bool(adherence), scores.get("adherence_score"),
                       mode=str(item.get("mode") or ScoringMode.CLEAN.value),
                       diagnostics=dict(item.get("diagnostics") or {}))


# ---------------------------------------------------------------- the one flat row
#: a row's columns before its metrics, and after them (the labels under RAGBench's names)
ROW_HEAD = ("id", "position", "language", "status", "error", "question", "answer", "reference_answer")
#: the labels a row carries (the report's overall_supported stands for the label's)
LABEL_COLUMNS = (*(f for f in LABEL_FIELDS if f not in REPORT_FIELDS), "adherence_probability")
ROW_TAIL = ("metric_errors", "metric_reasons", *LABEL_COLUMNS, "mode",
            "judge", "prompt_id", "judge_extra", "diagnostics", "tokens", "cost_usd", "latency_s",
            "retrieved_doc_ids", "gold_doc_ids", "metadata")
#: what only a ``rag-eval judge`` file row adds (the judge's text when it gave no usable labels)
FILE_ONLY = ("raw",)
#: the families whose metric names a row learns from its items (TRACe's are known)
LEARNED_FIELDS = tuple(field for family, field in FAMILY_FIELD.items() if family != "trace")
#: the stored fields a row reads (``RunStore.items(run_id, ROW_FIELDS)``)
ROW_FIELDS = (*ROW_HEAD, *FAMILY_FIELD.values(), "report", "labels", "item.response_sentences", "trace",
              *(f for f in ROW_TAIL if f not in LABEL_COLUMNS))


def _metric_order(names: Iterable[str]) -> list[str]:
    """Metric names in the registry's declaration order (``recall@2`` beside ``recall@5``), then by name."""
    order = {m.name: i for i, m in enumerate(METRICS)}
    return sorted(names, key=lambda n: (order.get(getattr(METRICS.find(n), "name", ""), len(order)), len(n), n))


def row_columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The columns of flat rows (:func:`item_row`'s, of one run): the head, the TRACe scores,
    the report fields, every other family's metrics any row has (in the registry's order), the tail."""
    fixed = {*ROW_HEAD, *TRACE_SCORES, *REPORT_FIELDS, *ROW_TAIL, *FILE_ONLY}
    learned: dict[str, None] = {}
    for row in rows:
        learned.update(dict.fromkeys(k for k in row if k not in fixed))
    return [*ROW_HEAD, *TRACE_SCORES, *REPORT_FIELDS, *_metric_order(learned), *ROW_TAIL]


def item_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """The one flat row of a stored item record (:func:`to_store`'s form, of any version):
    what ``rag-eval judge --out``, ``rag-eval score``, ``runs export``, ``to_pandas()``, the
    Batch and Runs tables and the report show of an item, column for column (a failed item's
    scores None, never 0). Its columns are :func:`row_columns`; an item has its own metrics'."""
    from rag_eval.runs.item_fields import item_report_fields

    labels = item.get("labels") or {}
    scores = item.get("scores") or {}
    report = item.get("report") or {}
    if scores and not any(v is not None for v in report.values()):
        report = item_report_fields(item)  # a record stored before it kept its report fields
    old_trace = item.get("trace") if isinstance(item.get("trace"), Mapping) else {}
    row: dict[str, Any] = {name: item.get(name) for name in ROW_HEAD}
    row["language"] = item.get("language") or ""
    row.update({name: scores.get(name) for name in TRACE_SCORES})
    row.update({name: report.get(name) for name in REPORT_FIELDS})
    for field in LEARNED_FIELDS:
        row.update(item.get(field) or {})
    row.update({f: labels.get(f) for f in LABEL_COLUMNS})
    row.update({name: item.get(name) or None for name in ("metric_errors", "metric_reasons", "judge_extra")})
    row["diagnostics"] = item.get("diagnostics") or (old_trace or {}).get("diagnostics") or None
    row.update({name: item.get(name) for name in ("mode", "judge", "prompt_id", "tokens", "cost_usd", "latency_s")})
    row.update({name: list(item.get(name) or []) for name in ("retrieved_doc_ids", "gold_doc_ids")})
    row["metadata"] = item.get("metadata") or None
    return row


def item_rows(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`item_row` of each item, every row with the same columns (:func:`row_columns`)."""
    rows = [item_row(item) for item in items]
    columns = row_columns(rows)
    return [{c: row.get(c) for c in columns} for row in rows]


def to_file_row(record: ItemRecord) -> dict[str, Any]:
    """A ``rag-eval judge`` output row: :func:`item_row` of the record, and for an item
    the judge gave no usable labels, what it said (``raw``: kept in the file, not the store)."""
    row = item_row(to_store(record))
    if record.status not in (JudgeStatus.OK.value, JudgeStatus.REPAIRED.value) and record.judge is not None:
        row["raw"] = record.raw  # what the judge said, to see why it failed
    return row
