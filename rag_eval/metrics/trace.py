"""TRACe scoring (RAGBench, arXiv 2407.11005) from sentence-level judge labels.

Three named modes, always recorded with the score:

``ragbench``
    Reproduces the scores stored in RAGBench exactly: relevance = len(R) / N and
    utilization = len(U) / N on the *raw* key lists (duplicates and malformed keys
    count), N = number of document sentences; completeness = |set(R) & set(U)| / len(R),
    1.0 when R is empty; adherence = no unsupported response sentence keys.
``clean`` (default for new judge output)
    Keys are normalised and deduplicated; unknown keys and the special support tokens
    are excluded from the counts. Every dropped key is listed in the diagnostics.
``legacy``
    The formulas of the earlier dashboards: relevance = min(1, |R| / 20),
    utilization = |U| / |R|, completeness = |R & U| / |R|, adherence all-or-nothing.
    Kept so their users can compare; it is not preferred because relevance saturates
    at 20 sentences whatever the context size, and utilization measures overlap with
    the relevant set rather than use of the context (RAGBench's definitions do not
    have either problem).

The continuous adherence score is the fraction of response sentences not marked
unsupported, or the judge's own probability of a grounded response when it gives one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from rag_eval.schema import (
    SPECIAL_SUPPORT_TOKENS,
    EvalItem,
    Labels,
    ScoringMode,
    TraceScores,
    _as_list,
)
from rag_eval.text.keys import normalize_key, parse_document_key

LEGACY_RELEVANCE_CAP = 20

DEFAULT_MODE = ScoringMode.CLEAN


# Keys repeat across rows ("0a", "0b", ...), so normalising and parsing them is cached;
# this is the hot path of scoring a file (see bench/bench_scoring.py).
@lru_cache(maxsize=1 << 16)
def _normalize_str(key: str) -> str:
    return normalize_key(key)


def _norm(value: Any) -> str:
    return _normalize_str(value) if type(value) is str else normalize_key(value)


_parse_doc_key = lru_cache(maxsize=1 << 16)(parse_document_key)


def _clean_keys(raw: Iterable[Any], known: set[str], field: str, dropped: list[dict[str, str]]) -> list[str]:
    """Normalised, deduplicated keys from ``known``, in first-seen order; everything
    else goes to ``dropped`` with a reason."""
    out: list[str] = []
    seen: set[str] = set()
    for value in raw:
        key = _norm(value)
        if key in SPECIAL_SUPPORT_TOKENS:
            dropped.append({"field": field, "key": str(value), "reason": "special_token"})
        elif key not in known:
            dropped.append({"field": field, "key": str(value), "reason": "unknown_key"})
        elif key in seen:
            dropped.append({"field": field, "key": str(value), "reason": "duplicate"})
        else:
            seen.add(key)
            out.append(key)
    return out


def _per_document(doc_sizes: Sequence[int], relevant: Iterable[str], utilized: Iterable[str]) -> list[dict[str, Any]]:
    rel = [0] * len(doc_sizes)
    util = [0] * len(doc_sizes)
    for keys, counts in ((set(relevant), rel), (set(utilized), util)):
        for key in keys:
            parsed = _parse_doc_key(_norm(key))
            if parsed is not None and parsed.doc_index < len(doc_sizes):
                counts[parsed.doc_index] += 1
    return [
        {
            "document": i,
            "n_sentences": n,
            "relevant": rel[i],
            "utilized": util[i],
            "relevance": rel[i] / n if n else None,
            "utilization": util[i] / n if n else None,
        }
        for i, n in enumerate(doc_sizes)
    ]


def _continuous_adherence(labels: Labels, adherent: bool, n_unsupported_known: int, n_response: int,
                          diagnostics: dict[str, Any]) -> float:
    if labels.adherence_probability is not None:
        diagnostics["adherence_score_source"] = "judge_probability"
        return float(labels.adherence_probability)
    diagnostics["adherence_score_source"] = "sentence_fraction"
    if n_response == 0:
        return float(adherent)
    # A non-adherent row whose unsupported keys are all malformed still counts one
    # unsupported sentence, so the continuous score never contradicts the boolean.
    n_bad = max(n_unsupported_known, 0 if adherent else 1)
    return 1.0 - min(n_bad, n_response) / n_response


def score_labels(labels: Labels, doc_sizes: Sequence[int], response_keys: Sequence[str],
                 mode: ScoringMode | str = DEFAULT_MODE, document_keys: Sequence[str] | None = None) -> TraceScores:
    """TRACe for one row.

    ``doc_sizes[i]`` is the number of sentences of document ``i``; ``document_keys``
    (all document sentence keys) defaults to the RAGBench keying of those sizes.
    """
    mode = ScoringMode(mode)
    n_doc = sum(doc_sizes)
    if document_keys is None:
        from rag_eval.text.keys import document_key

        document_keys = [document_key(d, i) for d, size in enumerate(doc_sizes) for i in range(size)]
    known_doc = set(map(_norm, document_keys))
    known_resp = set(map(_norm, response_keys))
    n_resp = len(response_keys)
    diagnostics: dict[str, Any] = {"n_document_sentences": n_doc, "n_response_sentences": n_resp}
    dropped: list[dict[str, str]] = []

    raw_r = labels.all_relevant_sentence_keys
    raw_u = labels.all_utilized_sentence_keys
    raw_unsup = labels.unsupported_response_sentence_keys
    clean_r = _clean_keys(raw_r, known_doc, "all_relevant_sentence_keys", dropped)
    clean_u = _clean_keys(raw_u, known_doc, "all_utilized_sentence_keys", dropped)
    clean_unsup = _clean_keys(raw_unsup, known_resp, "unsupported_response_sentence_keys", dropped)

    relevance: float | None
    utilization: float | None
    completeness: float | None
    if mode is ScoringMode.LEGACY:
        relevance = min(1.0, len(clean_r) / LEGACY_RELEVANCE_CAP)
        utilization = len(clean_u) / len(clean_r) if clean_r else 0.0
        completeness = len(set(clean_r) & set(clean_u)) / len(clean_r) if clean_r else 0.0
        adherent = len(clean_unsup) == 0
    else:  # RAGBENCH counts the keys as given (irregular ones too), CLEAN the checked ones
        r, u, unsup = (raw_r, raw_u, raw_unsup) if mode is ScoringMode.RAGBENCH else (clean_r, clean_u, clean_unsup)
        relevance = len(r) / n_doc if n_doc else None
        utilization = len(u) / n_doc if n_doc else None
        completeness = len(set(r) & set(u)) / len(r) if r else 1.0
        if not r:
            diagnostics["completeness_vacuous"] = True  # 1.0 by RAGBench's definition: nothing relevant to cover
        adherent = len(unsup) == 0
    if dropped:  # counted anyway in RAGBench's mode, as RAGBench does; left out in the others
        diagnostics["irregular_keys" if mode is ScoringMode.RAGBENCH else "dropped_keys"] = dropped
    if n_doc == 0:
        diagnostics["undefined"] = "no document sentences"

    if labels.overall_supported is not None and bool(labels.overall_supported) != adherent:
        diagnostics["overall_supported_disagrees"] = True

    if mode is ScoringMode.LEGACY:
        adherence_score = 1.0 if adherent else 0.0
    else:
        adherence_score = _continuous_adherence(labels, adherent, len(clean_unsup), n_resp, diagnostics)

    return TraceScores(context_relevance=relevance, context_utilization=utilization, completeness=completeness,
                       adherence=adherent, adherence_score=adherence_score, mode=mode.value,
                       per_document=_per_document(doc_sizes, clean_r, clean_u), diagnostics=diagnostics)


def score_item(item: EvalItem, labels: Labels, mode: ScoringMode | str = DEFAULT_MODE) -> TraceScores:
    """TRACe for a judged :class:`EvalItem`."""
    return score_labels(labels, doc_sizes=[len(d) for d in item.documents], response_keys=item.response_keys, mode=mode,
                        document_keys=item.document_keys)


def score_ragbench_row(row: dict[str, Any], mode: ScoringMode | str = ScoringMode.RAGBENCH) -> TraceScores:
    """TRACe straight from a RAGBench-format row (labels and pre-split sentences).

    Raises ``ValueError`` naming the field when the row lacks what scoring needs.
    """
    if row.get("documents_sentences") is None:
        raise ValueError("field 'documents_sentences' is missing")
    docs = _as_list(row["documents_sentences"])
    doc_keys: list[str] = []
    doc_sizes: list[int] = []
    for d, doc in enumerate(docs):
        pairs = _as_list(doc)
        doc_sizes.append(len(pairs))
        for pair in pairs:
            if type(pair) is not list:  # plain lists (JSON, parquet via rows.py) skip the conversion
                pair = _as_list(pair)
            if not pair:
                raise ValueError(f"field 'documents_sentences[{d}]' has an empty [key, sentence] pair")
            doc_keys.append(str(pair[0]))
    response_keys = [str(_as_list(p)[0]) for p in _as_list(row.get("response_sentences")) if len(_as_list(p))]
    for field in ("all_relevant_sentence_keys", "all_utilized_sentence_keys", "unsupported_response_sentence_keys"):
        if field not in row:
            raise ValueError(f"field '{field}' is missing")
    return score_labels(Labels.from_dict(row), doc_sizes, response_keys, mode, document_keys=doc_keys)
