"""A human label set: a reviewer's sentence labels for one row, in RAGBench's schema.

Pure functions only. A reviewer marks document sentences relevant and/or utilized and
each response sentence ``supported`` / ``partial`` / ``unsupported`` with its supporting
sentences; :func:`labels_from_review` turns those choices into :class:`Labels` the way
RAGBench's annotator writes them (a partially supported sentence is not fully
supported, so it is listed in ``unsupported_response_sentence_keys``, and it cites
sentences; an unsupported one cites none), and :func:`build_label_set` adds the TRACe
scores recomputed from the human labels by :mod:`rag_eval.metrics.trace`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_eval.metrics.trace import score_item
from rag_eval.schema import RAGBENCH_TRUTH_COLUMNS, EvalItem, Labels, ScoringMode, SentenceSupport
from rag_eval.text.keys import normalize_key, parse_document_key

SUPPORTED = "supported"
PARTIAL = "partial"
UNSUPPORTED = "unsupported"
SUPPORT_CHOICES = (SUPPORTED, PARTIAL, UNSUPPORTED)
#: The scoring mode of human label sets: keys are the item's own, so clean = ragbench.
HUMAN_MODE = ScoringMode.CLEAN


@dataclass(slots=True)
class ReviewDraft:
    """What the review form edits: one choice per response sentence plus key sets."""

    relevant: list[str] = field(default_factory=list)
    utilized: list[str] = field(default_factory=list)
    support: dict[str, str] = field(default_factory=dict)  # response key -> SUPPORT_CHOICES
    supporting: dict[str, list[str]] = field(default_factory=dict)  # response key -> document keys
    note: str = ""
    # The reviewer's own scores of per-item metrics (a rubric's criteria), name -> value; a
    # metric left unscored is absent.
    metrics: dict[str, float] = field(default_factory=dict)


def item_hash(item: EvalItem) -> str:
    """A fingerprint of what was judged (question, keyed documents and response), so
    labels of the same row in another run can be matched, and edited rows cannot."""
    payload = {
        "q": item.question,
        "d": [[[s.key, s.text] for s in doc] for doc in item.documents],
        "r": [[s.key, s.text] for s in item.response_sentences],
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def item_payload(item: EvalItem) -> dict[str, Any]:
    """The row as RAGBench stores it (keyed sentences), kept with every label set so an
    export needs nothing else."""
    return {
        "id": item.id,
        "question": item.question,
        "response": item.response or " ".join(s.text for s in item.response_sentences),
        "documents_sentences": [[[s.key, s.text] for s in doc] for doc in item.documents],
        "response_sentences": [[s.key, s.text] for s in item.response_sentences],
    }


def support_choice(key: str, labels: Labels | None) -> str:
    """The three-way choice a judge's labels imply for one response sentence."""
    if labels is None:
        return SUPPORTED
    k = normalize_key(key)
    unsupported = {normalize_key(x) for x in labels.unsupported_response_sentence_keys}
    info = next((s for s in labels.sentence_support_information if normalize_key(s.response_sentence_key) == k), None)
    if k not in unsupported and (info is None or info.fully_supported is not False):
        return SUPPORTED
    cites = info is not None and any(parse_document_key(normalize_key(x)) for x in info.supporting_sentence_keys)
    return PARTIAL if cites else UNSUPPORTED


def draft_from_labels(item: EvalItem, labels: Labels | None, note: str = "") -> ReviewDraft:
    """The form's starting point: the given labels restricted to the item's own keys."""
    doc_keys = item.document_keys
    known = set(doc_keys)
    draft = ReviewDraft(note=note)
    if labels is None:
        draft.support = {k: SUPPORTED for k in item.response_keys}
        return draft
    draft.relevant = [k for k in doc_keys if k in {normalize_key(x) for x in labels.all_relevant_sentence_keys}]
    draft.utilized = [k for k in doc_keys if k in {normalize_key(x) for x in labels.all_utilized_sentence_keys}]
    for key in item.response_keys:
        draft.support[key] = support_choice(key, labels)
        info = next((s for s in labels.sentence_support_information
                     if normalize_key(s.response_sentence_key) == normalize_key(key)), None)
        cited = [] if info is None else [normalize_key(x) for x in info.supporting_sentence_keys]
        draft.supporting[key] = [k for k in doc_keys if k in set(cited) & known]
    return draft


def labels_from_review(item: EvalItem, draft: ReviewDraft) -> Labels:
    """RAGBench labels from a reviewer's choices. Raises ``ValueError`` for a key the
    item does not have or a choice outside :data:`SUPPORT_CHOICES`."""
    doc_keys = item.document_keys
    known = set(doc_keys)
    for name, keys in (("relevant", draft.relevant), ("utilized", draft.utilized),
                       *((f"supporting[{k}]", v) for k, v in draft.supporting.items())):
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise ValueError(f"{name}: {', '.join(unknown)} not a document sentence of this row")
    support: list[SentenceSupport] = []
    unsupported: list[str] = []
    for key in item.response_keys:
        choice = draft.support.get(key, SUPPORTED)
        if choice not in SUPPORT_CHOICES:
            raise ValueError(f"response sentence {key}: choice must be one of {', '.join(SUPPORT_CHOICES)}")
        cited = [k for k in doc_keys if k in set(draft.supporting.get(key, []))] if choice != UNSUPPORTED else []
        if choice != SUPPORTED:
            unsupported.append(key)
        support.append(SentenceSupport(
            response_sentence_key=key, supporting_sentence_keys=cited, fully_supported=choice == SUPPORTED,
            explanation=f"human: {choice}"))
    return Labels(all_relevant_sentence_keys=[k for k in doc_keys if k in set(draft.relevant)],
                  all_utilized_sentence_keys=[k for k in doc_keys if k in set(draft.utilized)],
                  sentence_support_information=support, unsupported_response_sentence_keys=unsupported,
                  overall_supported=not unsupported, relevance_explanation="human review",
                  overall_supported_explanation=draft.note)


def reviewable_metrics() -> list[Any]:
    """The registry's per-item metrics a reviewer may score (a rubric, a plugin's metric),
    in declaration order."""
    from rag_eval.metrics.registry import METRICS

    return list(METRICS.per_item())


def check_metric_scores(scores: Mapping[str, Any]) -> dict[str, float]:
    """A reviewer's metric scores as stored: every name a registered per-item metric,
    every value a finite number within the metric's declared range. A score left empty
    (None) is dropped. Raises ``ValueError`` naming the metric otherwise."""
    import math

    declared = {m.name: m for m in reviewable_metrics()}
    checked: dict[str, float] = {}
    for name, value in scores.items():
        if value is None:
            continue
        metric = declared.get(name)
        if metric is None:
            raise ValueError(f"{name}: not a per-item metric a reviewer can score "
                             f"(choose from {', '.join(declared) or 'none installed'})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name}: a score must be a number, got {value!r}")
        low, high = metric.range
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"{name}: {value:g} is outside its range {low:g} to {high:g}"
                             if low is not None and high is not None else f"{name}: {value:g} is out of range")
        checked[name] = float(value)
    return checked


def build_label_set(item: EvalItem, labels: Labels, note: str = "", judge: str = "",
                    source: str = "", metrics: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record stored for one human review (reviewer and time are added by the store):
    the labels, TRACe recomputed from them, the item itself and what was reviewed, and the
    reviewer's scores of per-item metrics (``metrics``, checked by :func:`check_metric_scores`)."""
    scores = score_item(item, labels, HUMAN_MODE)
    scored = check_metric_scores(metrics or {})
    return {
        **({"metrics": scored} if scored else {}),
        "labels": labels.to_dict(),
        "note": note,
        "trace": scores.to_dict(),
        "scores": dict(scores.metric_values(), adherence_score=scores.adherence_score),
        "item": item_payload(item),
        "item_hash": item_hash(item),
        "judge_reviewed": judge,  # whose labels the reviewer started from (never overwritten)
        "source": source,
    }


def ragbench_scores(scores: Mapping[str, Any]) -> dict[str, Any]:
    """RAGBench's score columns from a label set's ``scores``."""
    out = {column: scores.get(metric) for metric, column in RAGBENCH_TRUTH_COLUMNS.items()}
    adherence = out[RAGBENCH_TRUTH_COLUMNS["adherence"]]
    out[RAGBENCH_TRUTH_COLUMNS["adherence"]] = None if adherence is None else bool(adherence)
    return out


