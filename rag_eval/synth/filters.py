"""Filters over candidate rows: near-duplicate questions and answerability."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rag_eval.datasets.schema import DatasetRow, QueryType
from rag_eval.judges.base import Judge


def drop_near_duplicates(
    rows: Sequence[DatasetRow], encode: Callable[[list[str]], np.ndarray], threshold: float,
    reference_questions: Sequence[str] = (),
) -> tuple[list[DatasetRow], list[tuple[DatasetRow, str]]]:
    """Greedy, in order: a row whose question has cosine >= ``threshold`` with an earlier
    kept question (or with a reference question, e.g. a few-shot example) is dropped."""
    if not rows:
        return [], []
    vectors = encode([r.question for r in rows])
    ref_vectors = encode(list(reference_questions)) if reference_questions else np.zeros((0, vectors.shape[1]), np.float32)
    kept: list[int] = []
    out_dropped: list[tuple[DatasetRow, str]] = []
    for i, row in enumerate(rows):
        reason = None
        if len(ref_vectors):
            sims = ref_vectors @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                reason = f"near-duplicate of a few-shot example (cosine {sims[j]:.3f}): {reference_questions[j]!r}"
        if reason is None and kept:
            sims = vectors[kept] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                reason = f"near-duplicate of {rows[kept[j]].id} (cosine {sims[j]:.3f})"
        if reason:
            out_dropped.append((row, reason))
        else:
            kept.append(i)
    return [rows[i] for i in kept], out_dropped


def _supported(labels: Any) -> bool:
    """The judge's verdict that the response is grounded: ``overall_supported``, else
    ``adherence_probability >= 0.5``; plus at least one relevant chunk sentence."""
    supported = labels.overall_supported
    if supported is None and labels.adherence_probability is not None:
        supported = labels.adherence_probability >= 0.5
    return bool(supported) and bool(labels.all_relevant_sentence_keys)


def answerability_filter(
    rows: Sequence[DatasetRow], judge: Judge, cancel: threading.Event | None = None,
    topic_texts: dict[str, list[str]] | None = None,
) -> tuple[list[DatasetRow], list[tuple[DatasetRow, str]]]:
    """Keep rows whose reference chunks answer the question: the judge labels the
    reference answer against the gold chunks, and the row stays when the judge finds
    the answer supported (``overall_supported``, else ``adherence_probability >= 0.5``)
    and at least one chunk sentence relevant.

    ``unanswerable`` rows are checked the other way round when they have a negative
    (tempting) answer and their topic chunk texts are given in ``topic_texts``: if the
    judge finds the topic chunk supports that answer, the question is answerable after
    all and the row is dropped. Without a negative answer there is nothing to check:
    the row passes, marked ``answerability: not applicable``. A judge failure drops the
    row with the judge's status: an unchecked row is never passed off as checked."""
    from rag_eval.text.sentences import item_from_texts

    topic_texts = topic_texts or {}
    checks: list[tuple[DatasetRow, bool]] = []  # (row, inverted)
    items = []
    for r in rows:
        if r.metadata.query_type != QueryType.UNANSWERABLE.value:
            checks.append((r, False))
            items.append(item_from_texts(r.id, r.question, r.gold_contexts, r.reference_answers[0]))
        elif r.negative_answers and topic_texts.get(r.id):
            checks.append((r, True))
            items.append(item_from_texts(r.id, r.question, topic_texts[r.id], r.negative_answers[0]))
    results = judge.judge(items, cancel=cancel) if items else []
    verdicts: dict[str, str | None] = {}
    for (row, inverted), result in zip(checks, results):
        if not result.status.usable or result.labels is None:
            verdicts[row.id] = f"answerability not checked: judge status {result.status.value}" + (
                f" ({result.error})" if result.error else "")
        elif inverted:
            verdicts[row.id] = (
                f"the topic chunk supports the tempting answer {row.negative_answers[0]!r}: the question is "
                f"answerable (judge {judge.name})" if _supported(result.labels) else None)
        elif not _supported(result.labels):
            verdicts[row.id] = f"the reference chunks do not support the answer (judge {judge.name})"
        else:
            verdicts[row.id] = None
    kept: list[DatasetRow] = []
    out: list[tuple[DatasetRow, str]] = []
    for row in rows:
        if row.id not in verdicts:
            row.metadata.answerability = "not applicable"  # type: ignore[attr-defined]
            kept.append(row)
        elif verdicts[row.id] is None:
            row.metadata.answerability = f"checked by {judge.name}"  # type: ignore[attr-defined]
            kept.append(row)
        else:
            out.append((row, str(verdicts[row.id])))
    return kept, out
