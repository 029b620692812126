"""What the support map shows, built from the library's own objects.

A :class:`SupportView` is one judged row: the keyed item, the judge's labels, the
scores the library computed and the judge's name and status. The builders here only
convert (RAGBench row, ask result, stored run item) into that shape; scoring is done
by ``rag_eval.metrics.trace`` and the run store, never here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_eval.demo import load_labelled_sample  # noqa: F401  (re-exported for the pages)
from rag_eval.metrics.trace import score_ragbench_row
from rag_eval.schema import EvalItem, JudgeResult, JudgeStatus, Labels, ScoringMode, TraceScores
from rag_eval.text.sentences import item_from_row


@dataclass(slots=True)
class SupportView:
    """Everything the support map needs for one judged row."""

    title: str
    item: EvalItem
    labels: Labels | None
    scores: TraceScores | None = None
    judge: str = ""
    status: str = ""
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def view_from_ragbench_row(row: dict[str, Any], mode: ScoringMode | str = ScoringMode.RAGBENCH) -> SupportView:
    """A labelled RAGBench row as RAGBench's annotator saw it (scored in ``mode``)."""
    item = item_from_row(row)
    judge = f"ragbench:{row.get('annotating_model_name') or 'gpt-4'}"
    return SupportView(title=f"{row.get('dataset_name', 'ragbench')} · {item.id}", item=item,
                       labels=Labels.from_dict(row), scores=score_ragbench_row(row, mode), judge=judge,
                       status=JudgeStatus.OK.value)


def view_from_result(title: str, item: EvalItem, result: JudgeResult | None, scores: TraceScores | None) -> SupportView:
    """A row judged by one of our judges (ask, batch run)."""
    if result is None:
        return SupportView(title=title, item=item, labels=None, scores=scores)
    return SupportView(title=title, item=item, labels=result.labels, scores=scores, judge=result.judge,
                       status=result.status.value, error=result.error or "")


def scores_from_record(record: dict[str, Any]) -> TraceScores | None:
    from rag_eval.runs.records import stored_trace  # a record of any version

    return stored_trace(record)


def view_from_record(record: dict[str, Any], run_label: str = "") -> SupportView:
    """A stored run item (run store record) as a support-map view."""
    from rag_eval.labels.store import item_from_record  # the one rebuild of a record's item (the run store's)

    labels = record.get("labels")
    title = f"{run_label} · {record.get('id')}" if run_label else str(record.get("id"))
    return SupportView(
        title=title,
        item=item_from_record(record),
        labels=Labels.from_dict(labels) if isinstance(labels, dict) else None,
        scores=scores_from_record(record),
        judge=str(record.get("judge") or ""),
        status=str(record.get("status") or ""),
        error=str(record.get("error") or ""),
        # the per-item metrics the row was measured on: the review form offers a score for each
        extra={"trace_url": _trace_url(record), "metrics": dict(record.get("metrics") or {})},
    )


def _trace_url(record: dict[str, Any]) -> str | None:
    """The Phoenix address of an imported trace's row (http(s) only: it came from data)."""
    meta = record.get("metadata")
    trace = meta.get("trace") if isinstance(meta, dict) else None
    url = trace.get("url") if isinstance(trace, dict) else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def showcase_index(rows: list[dict[str, Any]]) -> int:
    """The sample row a first visit shows: the one whose support map uses the most
    colour classes (documents and response), then the shortest, so every colour of the
    legend is on screen without scrolling through a long row."""
    from rag_eval.display.support_map import document_sentence_class, response_sentence_class

    def rank(i: int) -> tuple[int, int]:
        view = view_from_ragbench_row(rows[i])
        classes = {document_sentence_class(k, view.labels) for k in view.item.document_keys}
        classes |= {response_sentence_class(k, view.labels) for k in view.item.response_keys}
        size = len(view.item.document_keys) + len(view.item.response_keys)
        return (-len(classes), size)

    return min(range(len(rows)), key=rank) if rows else 0
